"""The roster in plain SQL: fleets, their agents and the agents' placements."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from cafleet.adapters.store import mapping as rows
from cafleet.adapters.store.sqlite.repositories import DirectRepository
from cafleet.adapters.store.sqlite.statements import insert, select_all
from cafleet.application.ports.store import AgentRepository, FleetRepository, PlacementRepository
from cafleet.domain.fleet import Agent, AgentStatus, Fleet
from cafleet.domain.placement import Placement


class DirectFleets(DirectRepository, FleetRepository):
    def add(self, fleet: Fleet) -> int:
        return self._insert("fleets", rows.fleet_values(fleet))

    def get(self, fleet_id: int) -> Fleet | None:
        row = self._first(f"{select_all('fleets')} WHERE fleet_id = ?", [fleet_id])
        return None if row is None else rows.fleet_from(row)

    def save(self, fleet: Fleet) -> None:
        self._update("fleets", rows.fleet_values(fleet), "fleet_id = ?", fleet.fleet_id)

    def list_live(self) -> list[Fleet]:
        return self._newest_first("WHERE deleted_at IS NULL")

    def list_all(self) -> list[Fleet]:
        return self._newest_first("")

    def _newest_first(self, where: str) -> list[Fleet]:
        sql = f"{select_all('fleets')} {where} ORDER BY created_at DESC, fleet_id DESC"
        return [rows.fleet_from(r) for r in self._all(sql)]


class DirectAgents(DirectRepository, AgentRepository):
    def add(self, agent: Agent) -> int:
        return self._insert("agents", rows.agent_values(agent))

    def get(self, agent_id: int) -> Agent | None:
        row = self._first(f"{select_all('agents')} WHERE agent_id = ?", [agent_id])
        return None if row is None else rows.agent_from(row)

    def save(self, agent: Agent) -> None:
        self._update("agents", rows.agent_values(agent), "agent_id = ?", agent.agent_id)

    def in_fleet(self, fleet_id: int, *, active_only: bool = True) -> list[Agent]:
        sql = f"{select_all('agents')} WHERE fleet_id = ?"
        params: list[Any] = [fleet_id]
        if active_only:
            sql, params = f"{sql} AND status = ?", [*params, AgentStatus.ACTIVE.value]
        return [rows.agent_from(r) for r in self._all(f"{sql} ORDER BY agent_id", params)]

    def count_active(self, fleet_ids: Iterable[int]) -> dict[int, int]:
        sql = (
            "SELECT fleet_id, count(*) AS n FROM agents"
            " WHERE fleet_id IN ({ids}) AND status = ? GROUP BY fleet_id"
        )
        found = self._grouped(sql, list(fleet_ids), AgentStatus.ACTIVE.value)
        return {int(r["fleet_id"]): int(r["n"]) for r in found}


class DirectPlacements(DirectRepository, PlacementRepository):
    def add(self, placement: Placement) -> None:
        values = {"agent_id": placement.agent_id, **rows.placement_values(placement)}
        self._run(*insert("agent_placements", values))

    def get(self, agent_id: int) -> Placement | None:
        row = self._first(f"{select_all('agent_placements')} WHERE agent_id = ?", [agent_id])
        return None if row is None else rows.placement_from(row)

    def save(self, placement: Placement) -> None:
        values = rows.placement_values(placement)
        self._update("agent_placements", values, "agent_id = ?", placement.agent_id)

    def remove(self, agent_id: int) -> None:
        self._run("DELETE FROM agent_placements WHERE agent_id = ?", [agent_id])

    def for_agents(self, agent_ids: Iterable[int]) -> dict[int, Placement]:
        sql = f"{select_all('agent_placements')} WHERE agent_id IN ({{ids}})"
        return {r["agent_id"]: rows.placement_from(r) for r in self._grouped(sql, list(agent_ids))}

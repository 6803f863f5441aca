"""The roster over SQLAlchemy Core: fleets, their agents and the agents' placements."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import Connection, Select, delete, func, insert, select, update

from cafleet.adapters.store import mapping as rows
from cafleet.adapters.store.sqlalchemy.repositories import new_id
from cafleet.adapters.store.sqlalchemy.tables import agent_placements, agents, fleets
from cafleet.domain.fleet import Agent, AgentStatus, Fleet
from cafleet.domain.placement import Placement


class SqlFleets:
    def __init__(self, conn: Connection) -> None:
        self._c = conn

    def add(self, fleet: Fleet) -> int:
        result = self._c.execute(insert(fleets).values(rows.fleet_values(fleet)))
        return new_id(result)

    def get(self, fleet_id: int) -> Fleet | None:
        row = (
            self._c.execute(select(fleets).where(fleets.c.fleet_id == fleet_id)).mappings().first()
        )
        return None if row is None else rows.fleet_from(row)

    def save(self, fleet: Fleet) -> None:
        self._c.execute(
            update(fleets)
            .where(fleets.c.fleet_id == fleet.fleet_id)
            .values(rows.fleet_values(fleet))
        )

    def list_live(self) -> list[Fleet]:
        return self._newest_first(select(fleets).where(fleets.c.deleted_at.is_(None)))

    def list_all(self) -> list[Fleet]:
        return self._newest_first(select(fleets))

    def _newest_first(self, query: Select[Any]) -> list[Fleet]:
        ordered = query.order_by(fleets.c.created_at.desc(), fleets.c.fleet_id.desc())
        return [rows.fleet_from(r) for r in self._c.execute(ordered).mappings()]


class SqlAgents:
    def __init__(self, conn: Connection) -> None:
        self._c = conn

    def add(self, agent: Agent) -> int:
        result = self._c.execute(insert(agents).values(rows.agent_values(agent)))
        return new_id(result)

    def get(self, agent_id: int) -> Agent | None:
        row = (
            self._c.execute(select(agents).where(agents.c.agent_id == agent_id)).mappings().first()
        )
        return None if row is None else rows.agent_from(row)

    def save(self, agent: Agent) -> None:
        self._c.execute(
            update(agents)
            .where(agents.c.agent_id == agent.agent_id)
            .values(rows.agent_values(agent))
        )

    def in_fleet(self, fleet_id: int, *, active_only: bool = True) -> list[Agent]:
        query = select(agents).where(agents.c.fleet_id == fleet_id)
        if active_only:
            query = query.where(agents.c.status == AgentStatus.ACTIVE.value)
        return [
            rows.agent_from(r)
            for r in self._c.execute(query.order_by(agents.c.agent_id)).mappings()
        ]

    def count_active(self, fleet_ids: Iterable[int]) -> dict[int, int]:
        ids = list(fleet_ids)
        if not ids:
            return {}
        query = (
            select(agents.c.fleet_id, func.count())
            .where(agents.c.fleet_id.in_(ids), agents.c.status == AgentStatus.ACTIVE.value)
            .group_by(agents.c.fleet_id)
        )
        return {int(fid): int(n) for fid, n in self._c.execute(query)}


class SqlPlacements:
    def __init__(self, conn: Connection) -> None:
        self._c = conn

    def add(self, placement: Placement) -> None:
        self._c.execute(
            insert(agent_placements).values(
                agent_id=placement.agent_id, **rows.placement_values(placement)
            )
        )

    def get(self, agent_id: int) -> Placement | None:
        query = select(agent_placements).where(agent_placements.c.agent_id == agent_id)
        row = self._c.execute(query).mappings().first()
        return None if row is None else rows.placement_from(row)

    def save(self, placement: Placement) -> None:
        self._c.execute(
            update(agent_placements)
            .where(agent_placements.c.agent_id == placement.agent_id)
            .values(rows.placement_values(placement))
        )

    def remove(self, agent_id: int) -> None:
        self._c.execute(delete(agent_placements).where(agent_placements.c.agent_id == agent_id))

    def for_agents(self, agent_ids: Iterable[int]) -> dict[int, Placement]:
        ids = list(agent_ids)
        if not ids:
            return {}
        query = select(agent_placements).where(agent_placements.c.agent_id.in_(ids))
        return {r["agent_id"]: rows.placement_from(r) for r in self._c.execute(query).mappings()}

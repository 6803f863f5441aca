"""The roster in memory: fleets, their agents and the agents' placements."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from cafleet.adapters.fake.store_tables import MemoryTables, insert_row, update_row
from cafleet.domain.fleet import Agent, Fleet
from cafleet.domain.placement import Placement


class MemoryFleets:
    def __init__(self, t: MemoryTables) -> None:
        self._t = t

    def add(self, fleet: Fleet) -> int:
        fleet_id = self._t.new_id("fleets")
        self._t.fleets[fleet_id] = replace(fleet, fleet_id=fleet_id)
        return fleet_id

    def get(self, fleet_id: int) -> Fleet | None:
        return self._t.fleets.get(fleet_id)

    def save(self, fleet: Fleet) -> None:
        update_row(self._t.fleets, fleet.fleet_id, fleet)

    def list_live(self) -> list[Fleet]:
        return [f for f in self.list_all() if not f.is_deleted]

    def list_all(self) -> list[Fleet]:
        every = self._t.fleets.values()
        return sorted(every, key=lambda f: (f.created_at, f.fleet_id), reverse=True)


class MemoryAgents:
    def __init__(self, t: MemoryTables) -> None:
        self._t = t

    def add(self, agent: Agent) -> int:
        agent_id = self._t.new_id("agents")
        self._t.agents[agent_id] = replace(agent, agent_id=agent_id)
        return agent_id

    def get(self, agent_id: int) -> Agent | None:
        return self._t.agents.get(agent_id)

    def save(self, agent: Agent) -> None:
        update_row(self._t.agents, agent.agent_id, agent)

    def in_fleet(self, fleet_id: int, *, active_only: bool = True) -> list[Agent]:
        return sorted(
            (
                a
                for a in self._t.agents.values()
                if a.fleet_id == fleet_id and (a.is_active or not active_only)
            ),
            key=lambda a: a.agent_id,
        )

    def count_active(self, fleet_ids: Iterable[int]) -> dict[int, int]:
        wanted = set(fleet_ids)
        counts: dict[int, int] = {}
        for agent in self._t.agents.values():
            if agent.fleet_id in wanted and agent.is_active:
                counts[agent.fleet_id] = counts.get(agent.fleet_id, 0) + 1
        return counts


class MemoryPlacements:
    def __init__(self, t: MemoryTables) -> None:
        self._t = t

    def add(self, placement: Placement) -> None:
        insert_row(self._t.placements, placement.agent_id, placement)

    def get(self, agent_id: int) -> Placement | None:
        return self._t.placements.get(agent_id)

    def save(self, placement: Placement) -> None:
        update_row(self._t.placements, placement.agent_id, placement)

    def remove(self, agent_id: int) -> None:
        self._t.placements.pop(agent_id, None)

    def for_agents(self, agent_ids: Iterable[int]) -> dict[int, Placement]:
        return {a: self._t.placements[a] for a in agent_ids if a in self._t.placements}

"""Creating, listing, showing and deleting fleets."""

from __future__ import annotations

from dataclasses import dataclass, replace

from cafleet.application.ports import Clock, PaneLocator, UnitOfWorkFactory
from cafleet.domain.agent import (
    ADMINISTRATOR_NAME,
    DIRECTOR_DESCRIPTION,
    DIRECTOR_NAME,
    Agent,
    CardKind,
    administrator_description,
)
from cafleet.domain.errors import CafleetError, NotFound, Unavailable
from cafleet.domain.fleet import Fleet
from cafleet.domain.monitor import DIRECTOR_INTERVAL_SECONDS, MonitorSchedule
from cafleet.domain.placement import CodingAgent, Placement, director_placement


@dataclass(frozen=True)
class FleetCreated:
    fleet: Fleet
    director: Agent
    placement: Placement
    administrator: Agent


@dataclass(frozen=True)
class FleetRow:
    fleet: Fleet
    agent_count: int


@dataclass(frozen=True)
class FleetDeleted:
    fleet_id: int
    deregistered: int


class FleetService:
    def __init__(self, uow: UnitOfWorkFactory, clock: Clock, locator: PaneLocator) -> None:
        self._uow = uow
        self._clock = clock
        self._locator = locator

    def create(self, name: str, coding_agent: CodingAgent) -> FleetCreated:
        try:
            pane = self._locator.current_pane()
        except CafleetError as exc:
            raise Unavailable(
                f"cafleet fleet create must be run inside a tmux or herdr session ({exc.message})"
            ) from exc
        with self._uow(write=True) as uow:
            now = self._clock.now()
            fleet = Fleet(fleet_id=0, name=name, created_at=now)
            fleet_id = uow.fleets.add(fleet)
            director = Agent(0, fleet_id, DIRECTOR_NAME, DIRECTOR_DESCRIPTION, now)
            director = _with_agent_id(director, uow.agents.add(director))
            placement = director_placement(director.agent_id, pane, coding_agent, now)
            uow.placements.add(placement)
            uow.monitor.enroll(MonitorSchedule(director.agent_id, DIRECTOR_INTERVAL_SECONDS))
            fleet = Fleet(fleet_id, name, now).with_director(director.agent_id)
            uow.fleets.save(fleet)
            admin = Agent(
                0,
                fleet_id,
                ADMINISTRATOR_NAME,
                administrator_description(fleet_id),
                now,
                card_kind=CardKind.ADMINISTRATOR,
            )
            admin = _with_agent_id(admin, uow.agents.add(admin))
            uow.commit()
        return FleetCreated(fleet, director, placement, admin)

    def list(self) -> list[FleetRow]:
        with self._uow() as uow:
            fleets = uow.fleets.list_live()
            counts = uow.agents.count_active(f.fleet_id for f in fleets)
        return [FleetRow(f, counts.get(f.fleet_id, 0)) for f in fleets]

    def show(self, fleet_id: int) -> Fleet:
        with self._uow() as uow:
            return _existing(uow.fleets.get(fleet_id), fleet_id)

    def delete(self, fleet_id: int) -> FleetDeleted:
        """Soft-delete the fleet and deregister every active agent in one transaction."""
        with self._uow(write=True) as uow:
            fleet = _existing(uow.fleets.get(fleet_id), fleet_id)
            if fleet.is_deleted:
                return FleetDeleted(fleet_id, 0)
            now = self._clock.now()
            agents = uow.agents.in_fleet(fleet_id)
            for agent in agents:
                uow.agents.save(agent.retired(now))
                uow.placements.remove(agent.agent_id)
                uow.monitor.unenroll(agent.agent_id)
            uow.monitor.remove_runtime(fleet_id)
            uow.fleets.save(fleet.deleted(now))
            uow.commit()
        return FleetDeleted(fleet_id, len(agents))


def _existing(fleet: Fleet | None, fleet_id: int) -> Fleet:
    if fleet is None:
        raise NotFound(f"fleet '{fleet_id}' not found.")
    return fleet


def _with_agent_id(agent: Agent, agent_id: int) -> Agent:
    return replace(agent, agent_id=agent_id)

"""Creating, listing, showing and deleting fleets."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import StrEnum

from cafleet.application.members.removal import DEFAULT_EXIT_TIMEOUT_SECONDS
from cafleet.application.panes.teardown import Closing, PaneTeardown
from cafleet.application.ports.panes import PaneDrivers, PaneLocator
from cafleet.application.ports.store import UnitOfWorkFactory
from cafleet.application.ports.system import Clock
from cafleet.application.relay.service import RelayClient
from cafleet.domain.errors import CafleetError, NotFound, Unavailable
from cafleet.domain.fleet import (
    ADMINISTRATOR_NAME,
    DIRECTOR_DESCRIPTION,
    DIRECTOR_NAME,
    Agent,
    CardKind,
    Fleet,
    administrator_description,
)
from cafleet.domain.monitor import DIRECTOR_INTERVAL_SECONDS, MonitorSchedule
from cafleet.domain.placement import CodingAgent, Placement, PushTarget, director_placement
from cafleet.domain.relay import RELAY_MARGIN_SECONDS, PaneVerb, RelayRequest, payload, values_of


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


class PaneFate(StrEnum):
    CLOSED = "closed"
    KILLED = "killed"
    GONE = "gone"
    KEPT = "kept"
    FAILED = "failed"


_FATES = {
    Closing.GONE: PaneFate.GONE,
    Closing.CLOSED: PaneFate.CLOSED,
    Closing.KILLED: PaneFate.KILLED,
    Closing.KILLED_NOT_AGENT: PaneFate.KILLED,
    Closing.KILLED_AT_DIALOG: PaneFate.KILLED,
    Closing.KILLED_AFTER_TIMEOUT: PaneFate.KILLED,
    Closing.FAILED: PaneFate.FAILED,
    Closing.NOT_OURS: PaneFate.GONE,  # left untouched: not the member's pane any more
}


@dataclass(frozen=True)
class MemberPane:
    agent_id: int
    pane_id: str
    fate: PaneFate
    error: str | None = None


@dataclass(frozen=True)
class FleetDeleted:
    fleet_id: int
    deregistered: int
    panes: tuple[MemberPane, ...] = ()


class FleetService:
    def __init__(
        self,
        uow: UnitOfWorkFactory,
        clock: Clock,
        locator: PaneLocator,
        teardown: PaneTeardown,
        drivers: PaneDrivers | None = None,  # None: the Director's pane gets no identity
        relay: RelayClient | None = None,  # None: every member pane is taken to be here
    ) -> None:
        self._uow = uow
        self._clock = clock
        self._locator = locator
        self._teardown = teardown
        self._drivers = drivers
        self._relay = relay

    def create(self, name: str, coding_agent: CodingAgent) -> FleetCreated:
        try:
            pane = self._locator.current_pane()
        except CafleetError as exc:
            raise Unavailable(
                f"cafleet fleet create must be run inside a tmux or herdr session ({exc.message})"
            ) from exc
        if self._drivers is not None:  # so no later pane with the Director's id passes for it
            try:
                identity = self._drivers(pane.backend, pane.socket, pane.host).claim(pane.pane_id)
            except CafleetError as exc:
                raise Unavailable(
                    f"cannot mark the Director's pane {pane.pane_id} ({exc.message})"
                ) from exc
            pane = replace(pane, identity=identity)
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

    def list(self, *, include_deleted: bool = False) -> list[FleetRow]:
        """Live fleets, newest first; with include_deleted the deleted ones too (each row's
        fleet says when it was deleted)."""
        with self._uow() as uow:
            fleets = uow.fleets.list_all() if include_deleted else uow.fleets.list_live()
            counts = uow.agents.count_active(f.fleet_id for f in fleets)
        return [FleetRow(f, counts.get(f.fleet_id, 0)) for f in fleets]

    def show(self, fleet_id: int) -> Fleet:
        with self._uow() as uow:
            return _existing(uow.fleets.get(fleet_id), fleet_id)

    def delete(
        self,
        fleet_id: int,
        *,
        keep_panes: bool = False,
        timeout: float = DEFAULT_EXIT_TIMEOUT_SECONDS,
    ) -> FleetDeleted:
        """Close the members' panes (never the Director's), then soft-delete the fleet and
        deregister every active agent in one transaction."""
        with self._uow() as uow:
            fleet = _existing(uow.fleets.get(fleet_id), fleet_id)
            if fleet.is_deleted:
                return FleetDeleted(fleet_id, 0)
            agents = uow.agents.in_fleet(fleet_id)
            placements = uow.placements.for_agents(a.agent_id for a in agents)
        targets = [
            PushTarget.of(p) for p in placements.values() if p.is_member and not p.is_pending
        ]
        ordered = sorted(targets, key=lambda t: t.agent_id)
        panes = self._close_panes(fleet_id, ordered, keep_panes, timeout)
        with self._uow(write=True) as uow:
            fleet = _existing(uow.fleets.get(fleet_id), fleet_id)
            now = self._clock.now()
            agents = uow.agents.in_fleet(fleet_id)
            for agent in agents:
                uow.agents.save(agent.retired(now))
                uow.placements.remove(agent.agent_id)
                uow.monitor.unenroll(agent.agent_id)
            uow.monitor.remove_runtime(fleet_id)
            uow.fleets.save(fleet.deleted(now))
            uow.commit()
        return FleetDeleted(fleet_id, len(agents), panes)

    def _close_panes(
        self, fleet_id: int, targets: Sequence[PushTarget], keep: bool, timeout: float
    ) -> tuple[MemberPane, ...]:
        """Every member pane closed by its own host: this one's here, each other host's by
        its relay (a host without a live relay keeps its panes: each is a failure)."""
        if keep:
            return tuple(MemberPane(t.agent_id, t.pane_id, PaneFate.KEPT) for t in targets)
        by_host: dict[str | None, list[PushTarget]] = {}
        for target in targets:
            here = (
                self._drivers is None or self._relay is None or self._drivers.reaches(target.host)
            )
            by_host.setdefault(None if here else target.host, []).append(target)
        closed = {
            pane.agent_id: pane
            for host, group in by_host.items()
            for pane in (
                self.close_here(group, timeout)
                if host is None
                else self._close_elsewhere(host, fleet_id, group, timeout)
            )
        }
        return tuple(closed[t.agent_id] for t in targets)

    def close_here(self, targets: Sequence[PushTarget], timeout: float) -> tuple[MemberPane, ...]:
        return tuple(
            MemberPane(
                c.target.agent_id,
                c.target.pane_id,
                _FATES[c.status],
                c.detail if c.status is Closing.FAILED else None,
            )
            for c in self._teardown.graceful([*targets], timeout)
        )

    def _close_elsewhere(
        self, host: str, fleet_id: int, targets: Sequence[PushTarget], timeout: float
    ) -> tuple[MemberPane, ...]:
        assert self._relay is not None
        asked = payload({"agents": [t.agent_id for t in targets], "timeout": timeout})
        wait = timeout + RELAY_MARGIN_SECONDS
        try:
            answer = values_of(self._relay.run(host, fleet_id, 0, PaneVerb.CLOSE, asked, wait))
        except CafleetError as exc:
            return tuple(
                MemberPane(t.agent_id, t.pane_id, PaneFate.FAILED, exc.message) for t in targets
            )
        panes = []
        for target in targets:
            fate, error = answer.get(str(target.agent_id), [PaneFate.FAILED.value, "no answer"])
            panes.append(MemberPane(target.agent_id, target.pane_id, PaneFate(fate), error))
        return tuple(panes)

    def run_relayed(self, request: RelayRequest) -> str:
        """A CLOSE another host asked of this host's relay (its `fleet delete`): each named
        member pane of this host closed as here, with its fate."""
        asked = values_of(request.argument)
        wanted = {int(a) for a in asked.get("agents", [])}
        with self._uow() as uow:
            placements = uow.placements.for_agents(sorted(wanted))
            members = {a.agent_id for a in uow.agents.in_fleet(request.fleet_id)}
        targets = [
            PushTarget.of(p)
            for p in placements.values()
            if p.agent_id in members and p.is_member and not p.is_pending
            and (self._drivers is None or self._drivers.reaches(p.host))
        ]  # fmt: skip
        timeout = float(asked.get("timeout", DEFAULT_EXIT_TIMEOUT_SECONDS))
        return payload(
            {str(p.agent_id): [p.fate.value, p.error] for p in self.close_here(targets, timeout)}
        )


def _existing(fleet: Fleet | None, fleet_id: int) -> Fleet:
    if fleet is None:
        raise NotFound(f"fleet '{fleet_id}' not found.")
    return fleet


def _with_agent_id(agent: Agent, agent_id: int) -> Agent:
    return replace(agent, agent_id=agent_id)

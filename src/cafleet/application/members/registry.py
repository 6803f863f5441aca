"""Reading the member registry (pane verbs arrive with the pane driver)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from enum import Enum

from cafleet.application.lookups import active_agent, agent_of_fleet, existing_fleet
from cafleet.application.members.status import AgentStatusReader
from cafleet.application.ports.panes import AgentStates, PaneDrivers
from cafleet.application.ports.store import Activity, UnitOfWork, UnitOfWorkFactory
from cafleet.application.ports.system import Clock
from cafleet.domain.agents.status import StatusReport
from cafleet.domain.errors import CafleetError
from cafleet.domain.fleet import Agent, AgentKind
from cafleet.domain.panes import PaneInfo, ours
from cafleet.domain.placement import Multiplexer, PaneState, Placement
from cafleet.domain.relay import HostRelay, PaneReport

_Listing = tuple[dict[str, PaneInfo], dict[str, str]]  # a server's panes, its detected states
Listings = Mapping[tuple[Multiplexer, str | None, str | None], _Listing]  # by backend, socket, host


class ListMode(Enum):
    MEMBERS = "members"  # pane-bound agents owned by the Director
    ALL = "all"  # every active agent of the fleet
    ACTIVITY = "activity"  # members, with message activity


@dataclass(frozen=True)
class MemberView:
    agent: Agent
    kind: AgentKind
    placement: Placement | None
    activity: Activity | None = None
    pane: PaneState | None = None  # None: no pane, or its multiplexer did not answer
    agent_status: StatusReport | None = None  # None: not a member with a pane
    fleet_deleted_at: datetime | None = None  # set: a deleted fleet's record, read-only
    relay: HostRelay | None = None  # the relay of the pane's host (None: no host recorded)
    elsewhere: bool = False  # the pane is on another host than this process's
    report: PaneReport | None = None  # what that relay last saw of the pane


@dataclass(frozen=True)
class MemberListing:
    mode: ListMode
    members: list[MemberView]
    now: datetime
    fleet_deleted_at: datetime | None = None


class MemberService:
    def __init__(
        self,
        uow: UnitOfWorkFactory,
        clock: Clock,
        drivers: PaneDrivers | None = None,
        statuses: AgentStatusReader | None = None,
    ) -> None:
        self._uow = uow
        self._clock = clock
        self._drivers = drivers
        self._statuses = statuses

    def show(self, fleet_id: int, member_id: int) -> MemberView:
        """An active agent of a live fleet; in a deleted fleet, any agent it had."""
        not_found = f"Agent {member_id} not found"
        with self._uow() as uow:
            fleet = existing_fleet(uow, fleet_id)
            if fleet.is_deleted:
                agent = agent_of_fleet(uow, fleet_id, member_id, not_found)
                return MemberView(agent, agent.kind(fleet), None, fleet_deleted_at=fleet.deleted_at)
            agent = active_agent(uow, fleet_id, member_id, not_found)
            view = MemberView(agent, agent.kind(fleet), uow.placements.get(member_id))
            [view] = self._with_relays(uow, [view])
        return self.with_panes([view])[0]

    def list(self, fleet_id: int, mode: ListMode) -> MemberListing:
        """A live fleet's active agents; a deleted fleet's record of every agent it had
        (their placements went with the fleet, so members are told by their kind)."""
        with self._uow() as uow:
            fleet = existing_fleet(uow, fleet_id)
            deleted = fleet.is_deleted
            agents = uow.agents.in_fleet(fleet_id, active_only=not deleted)
            placements = uow.placements.for_agents(a.agent_id for a in agents)
            views = [
                MemberView(
                    a, a.kind(fleet), placements.get(a.agent_id), fleet_deleted_at=fleet.deleted_at
                )
                for a in agents
            ]
            if mode is not ListMode.ALL:
                views = [v for v in views if _is_member(v, deleted)]
            if mode is ListMode.ACTIVITY:
                activity = uow.messages.activity([v.agent.agent_id for v in views])
                views = [
                    replace(v, activity=activity.get(v.agent.agent_id, Activity())) for v in views
                ]
            related = self._with_relays(uow, views)
        return MemberListing(mode, [*self.with_panes(related)], self._clock.now(), fleet.deleted_at)

    def _with_relays(self, uow: UnitOfWork, views: Sequence[MemberView]) -> Sequence[MemberView]:
        """Each placement's host relay, and its report of the panes this host cannot see."""
        if not any(v.placement is not None and v.placement.host for v in views):
            return views
        beats = {b.host: b for b in uow.relays.beats()}
        elsewhere = [
            v.agent.agent_id
            for v in views
            if v.placement is not None and not self._reaches(v.placement.host)
        ]
        reports = uow.relays.reports(elsewhere) if elsewhere else {}
        now = self._clock.now()
        return [
            v
            if v.placement is None or v.placement.host is None
            else replace(
                v,
                relay=HostRelay.of(v.placement.host, beats, now),
                elsewhere=not self._reaches(v.placement.host),
                report=reports.get(v.agent.agent_id),
            )
            for v in views
        ]

    def _reaches(self, host: str | None) -> bool:
        return self._drivers is None or self._drivers.reaches(host)

    def with_panes(self, views: Sequence[MemberView]) -> Sequence[MemberView]:
        """Each member's pane as its multiplexer sees it now (one listing per server) and
        its agent status; a pane on another host as its relay last reported it, while that
        relay is alive. Call it with no unit of work open: it runs the multiplexer."""
        if self._drivers is None:
            return views
        if any(_unrelayed(v, self._drivers) for v in views):  # views made elsewhere (the WebUI)
            with self._uow() as uow:
                views = self._with_relays(uow, views)
        survey = PaneSurvey(self._drivers, self._statuses)
        marked = []
        for view in views:
            placement = view.placement
            if placement is None or placement.pane_id is None or not placement.is_member:
                marked.append(view)
            elif not self._drivers.reaches(placement.host):
                marked.append(_as_reported(view))
            else:
                state, told, _ = survey.read(placement)
                marked.append(replace(view, pane=state, agent_status=told))
        return marked


class PaneSurvey:
    """Placements' panes read from their multiplexers, each server listed once; `listed`:
    servers already read (the monitor's tick), which are not asked again."""

    def __init__(
        self,
        drivers: PaneDrivers,
        statuses: AgentStatusReader | None,
        listed: Listings | None = None,
    ) -> None:
        self._drivers = drivers
        self._statuses = statuses
        self._listings: dict[tuple[Multiplexer, str | None, str | None], _Listing | None] = dict(
            listed or {}
        )

    def read(
        self, placement: Placement
    ) -> tuple[PaneState | None, StatusReport | None, str | None]:
        """The pane's state (None: its server did not answer), the agent's status (None:
        no reader), and the state the multiplexer detects in it (herdr's), if any."""
        listing = self._listing(placement)
        panes, detected = listing or ({}, {})
        pane_id = placement.pane_id or ""
        state = None if listing is None else placement.pane_state(panes.get(pane_id))
        seen = detected.get(pane_id)
        told = None if self._statuses is None else self._statuses.report(placement, state, seen)
        return state, told, seen

    def pane(self, placement: Placement) -> PaneInfo | None:
        """The placement's pane as listed; None when gone, another pane that took its id,
        or its server did not answer."""
        panes, _ = self._listing(placement) or ({}, {})
        return ours(panes.get(placement.pane_id or ""), placement.identity)

    def _listing(self, placement: Placement) -> _Listing | None:
        server = (placement.backend, placement.socket, placement.host)
        if server not in self._listings:
            self._listings[server] = _listing(self._drivers, *server)
        return self._listings[server]

    def reports(self, placements: Sequence[Placement], host: str) -> list[PaneReport]:
        """What a relay tells the other hosts of its host's panes (RelayDuties.read_panes)."""
        reports = []
        for placement in placements:
            state, told, seen = self.read(placement)
            status = told or StatusReport.unknown()
            reports.append(PaneReport(placement.agent_id, host, state, status, seen))
        return reports


def _unrelayed(view: MemberView, drivers: PaneDrivers) -> bool:
    """A view of another host's pane without that host's relay read yet."""
    placement = view.placement
    return view.relay is None and placement is not None and not drivers.reaches(placement.host)


def _as_reported(view: MemberView) -> MemberView:
    """A pane of another host: its relay's last report while the relay lives, else unknown."""
    relay, report = view.relay, view.report
    if relay is None or not relay.alive or report is None:
        return replace(view, pane=None, agent_status=StatusReport.unknown())
    return replace(view, pane=report.pane, agent_status=report.status)


def _listing(
    drivers: PaneDrivers, backend: Multiplexer, socket: str | None, host: str | None
) -> _Listing | None:
    """A server's panes and the agent states it detects (herdr: from the same `pane.list`);
    None when it cannot be asked: unknown rather than wrong."""
    try:
        driver = drivers(backend, socket, host)
        panes = driver.list_panes()
        return panes, driver.agent_states() if isinstance(driver, AgentStates) else {}
    except CafleetError:
        return None


def _is_member(view: MemberView, fleet_deleted: bool) -> bool:
    if fleet_deleted:
        return view.kind in (AgentKind.MEMBER, AgentKind.MONITOR)
    return view.placement is not None and view.placement.is_member

"""Reading the member registry (pane verbs arrive with the pane driver)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from enum import Enum

from cafleet.application.agent_status import AgentStatusReader
from cafleet.application.lookups import active_agent, agent_of_fleet, existing_fleet
from cafleet.application.ports import (
    Activity,
    AgentStates,
    Clock,
    PaneDrivers,
    UnitOfWorkFactory,
)
from cafleet.domain.agent import Agent, AgentKind
from cafleet.domain.agent_status import StatusReport
from cafleet.domain.errors import CafleetError
from cafleet.domain.panes import PaneInfo
from cafleet.domain.placement import Multiplexer, PaneState, Placement

_Listing = tuple[dict[str, PaneInfo], dict[str, str]]  # a server's panes, its detected states


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
        return MemberListing(mode, [*self.with_panes(views)], self._clock.now(), fleet.deleted_at)

    def with_panes(self, views: Sequence[MemberView]) -> Sequence[MemberView]:
        """Each member's pane as its multiplexer sees it now (one listing per server) and
        its agent status. Call it with no unit of work open: it runs the multiplexer."""
        if self._drivers is None:
            return views
        listings: dict[tuple[Multiplexer, str | None, str | None], _Listing | None] = {}
        marked = []
        for view in views:
            placement = view.placement
            if placement is None or placement.pane_id is None or not placement.is_member:
                marked.append(view)
                continue
            server = (placement.backend, placement.socket, placement.host)
            if server not in listings:
                listings[server] = _listing(self._drivers, *server)
            listing = listings[server]
            panes, detected = listing or ({}, {})
            state = None if listing is None else placement.pane_state(panes.get(placement.pane_id))
            seen = detected.get(placement.pane_id)
            told = None if self._statuses is None else self._statuses.report(placement, state, seen)
            marked.append(replace(view, pane=state, agent_status=told))
        return marked


def _listing(
    drivers: PaneDrivers, backend: Multiplexer, socket: str | None, host: str | None
) -> _Listing | None:
    """A server's panes and the agent states it detects (herdr: from the same `pane.list`);
    None when it cannot be asked (another host's, too): unknown rather than wrong."""
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

"""Reading the member registry (pane verbs arrive with the pane driver)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import Enum

from cafleet.application.lookups import active_agent, live_fleet
from cafleet.application.ports import Activity, Clock, UnitOfWorkFactory
from cafleet.domain.agent import Agent, AgentKind
from cafleet.domain.placement import Placement


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


@dataclass(frozen=True)
class MemberListing:
    mode: ListMode
    members: list[MemberView]
    now: datetime


class MemberService:
    def __init__(self, uow: UnitOfWorkFactory, clock: Clock) -> None:
        self._uow = uow
        self._clock = clock

    def show(self, fleet_id: int, member_id: int) -> MemberView:
        with self._uow() as uow:
            agent = active_agent(uow, fleet_id, member_id, f"Agent {member_id} not found")
            fleet = live_fleet(uow, fleet_id)
            return MemberView(agent, agent.kind(fleet), uow.placements.get(member_id))

    def list(self, fleet_id: int, mode: ListMode) -> MemberListing:
        with self._uow() as uow:
            fleet = live_fleet(uow, fleet_id)
            agents = uow.agents.in_fleet(fleet_id)
            placements = uow.placements.for_agents(a.agent_id for a in agents)
            views = [MemberView(a, a.kind(fleet), placements.get(a.agent_id)) for a in agents]
            if mode is not ListMode.ALL:
                views = [v for v in views if v.placement is not None and v.placement.is_member]
            if mode is ListMode.ACTIVITY:
                activity = uow.messages.activity([v.agent.agent_id for v in views])
                views = [
                    MemberView(
                        v.agent, v.kind, v.placement, activity.get(v.agent.agent_id, Activity())
                    )
                    for v in views
                ]
        return MemberListing(mode, views, self._clock.now())

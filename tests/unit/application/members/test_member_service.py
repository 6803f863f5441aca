"""MemberService on the fakes: show and the three list modes."""

from __future__ import annotations

from datetime import timedelta

import pytest

from cafleet.adapters.fake.clock import FakeClock
from cafleet.adapters.fake.launch_pads import FakeLaunchPads
from cafleet.adapters.fake.pane_driver import FakePaneDriver, FakePaneDrivers
from cafleet.application.members.registry import ListMode, MemberService
from cafleet.application.members.status import AgentStatusReader
from cafleet.application.messaging.service import MessagingService
from cafleet.application.ports.panes import AgentStates
from cafleet.domain.agents.registry import AgentProfiles
from cafleet.domain.agents.status import AgentStatus, StatusReport
from cafleet.domain.errors import NotFound
from cafleet.domain.fleet import AgentKind, CardKind
from cafleet.domain.panes import PaneInfo
from cafleet.domain.placement import CodingAgent, Multiplexer, PaneState


@pytest.fixture
def made(world):
    return world.fleet("alpha")


def test_show_returns_an_active_member_with_its_kind_and_placement(
    members: MemberService, world, made
) -> None:
    worker = world.member(made, "worker", pane_id="%1")

    view = members.show(made.fleet.fleet_id, worker)

    assert view.agent == world.get_agent(worker)
    assert view.kind is AgentKind.MEMBER
    assert view.placement == world.get_placement(worker)


@pytest.mark.parametrize(
    ("who", "kind", "placed"),
    [
        ("director", AgentKind.DIRECTOR, True),
        ("administrator", AgentKind.ADMINISTRATOR, False),
    ],
)
def test_show_of_the_builtin_roles(
    members: MemberService, made, who: str, kind: AgentKind, placed: bool
) -> None:
    agent_id = getattr(made, who).agent_id

    view = members.show(made.fleet.fleet_id, agent_id)

    assert view.kind is kind
    assert (view.placement is not None) is placed


def test_show_of_a_monitoring_member(members: MemberService, world, made) -> None:
    watcher = world.member(made, "watch", pane_id="%2", card_kind=CardKind.MONITORING_MEMBER)

    assert members.show(made.fleet.fleet_id, watcher).kind is AgentKind.MONITOR


@pytest.mark.parametrize("case", ["unknown", "other-fleet", "deregistered"])
def test_show_of_an_agent_outside_reach_is_one_not_found(
    members: MemberService, world, made, case: str
) -> None:
    other = world.fleet("beta")
    worker = world.member(made, "worker", pane_id="%1")
    target = {"unknown": 555, "other-fleet": other.director.agent_id, "deregistered": worker}[case]
    if case == "deregistered":
        world.deregister(worker)

    with pytest.raises(NotFound) as raised:
        members.show(made.fleet.fleet_id, target)

    assert raised.value.message == f"Agent {target} not found"


def test_list_of_an_unknown_fleet(members: MemberService) -> None:
    with pytest.raises(NotFound) as raised:
        members.list(404, ListMode.MEMBERS)
    assert raised.value.message == "fleet 404 not found."


def test_a_deleted_fleet_lists_every_agent_it_had_as_deregistered(
    members: MemberService, fleets, world, made, clock
) -> None:
    worker = world.member(made, "worker", pane_id="%1")
    watcher = world.member(made, "watch", pane_id="%2", card_kind=CardKind.MONITORING_MEMBER)
    left = world.member(made, "left-early", pane_id="%3")
    world.deregister(left)
    clock.advance(60)
    fleets.delete(made.fleet.fleet_id, keep_panes=True)

    everyone = members.list(made.fleet.fleet_id, ListMode.ALL)
    only_members = members.list(made.fleet.fleet_id, ListMode.MEMBERS)

    director, admin = made.director.agent_id, made.administrator.agent_id
    assert [(v.agent.agent_id, v.kind) for v in everyone.members] == [
        (director, AgentKind.DIRECTOR),
        (admin, AgentKind.ADMINISTRATOR),
        (worker, AgentKind.MEMBER),
        (watcher, AgentKind.MONITOR),
        (left, AgentKind.MEMBER),
    ]
    assert {v.agent.status.value for v in everyone.members} == {"deregistered"}
    assert everyone.fleet_deleted_at == clock.now()
    assert [v.agent.agent_id for v in only_members.members] == [worker, watcher, left]
    assert {v.fleet_deleted_at for v in only_members.members} == {clock.now()}


def test_show_in_a_deleted_fleet_reads_the_deregistered_agent(
    members: MemberService, fleets, world, made, clock
) -> None:
    worker = world.member(made, "worker", pane_id="%1")
    fleets.delete(made.fleet.fleet_id, keep_panes=True)

    view = members.show(made.fleet.fleet_id, worker)

    assert (view.agent.name, view.agent.status.value) == ("worker", "deregistered")
    assert view.placement is None
    assert view.fleet_deleted_at == clock.now()
    with pytest.raises(NotFound) as raised:
        members.show(made.fleet.fleet_id, 999)
    assert raised.value.message == "Agent 999 not found"


def test_a_live_fleet_still_hides_deregistered_agents(members: MemberService, world, made) -> None:
    worker = world.member(made, "worker", pane_id="%1")
    world.deregister(worker)

    assert members.list(made.fleet.fleet_id, ListMode.ALL).fleet_deleted_at is None
    with pytest.raises(NotFound):
        members.show(made.fleet.fleet_id, worker)


def test_default_list_shows_only_placed_members_of_the_director_in_id_order(
    members: MemberService, world, made
) -> None:
    b = world.member(made, "b-worker", pane_id="%1")
    watcher = world.member(made, "watch", pane_id="%2", card_kind=CardKind.MONITORING_MEMBER)
    pending = world.member(made, "pending", pane_id=None)
    world.agent(made.fleet.fleet_id, "unplaced")
    gone = world.member(made, "gone", pane_id="%3")
    world.deregister(gone)

    listing = members.list(made.fleet.fleet_id, ListMode.MEMBERS)

    assert listing.mode is ListMode.MEMBERS
    assert [v.agent.agent_id for v in listing.members] == [b, watcher, pending]
    assert [v.kind for v in listing.members] == [
        AgentKind.MEMBER,
        AgentKind.MONITOR,
        AgentKind.MEMBER,
    ]
    assert all(v.activity is None for v in listing.members)


def test_default_list_of_a_fresh_fleet_is_empty(members: MemberService, made) -> None:
    assert members.list(made.fleet.fleet_id, ListMode.MEMBERS).members == []


def test_list_all_shows_every_active_agent_with_kinds(members: MemberService, world, made) -> None:
    worker = world.member(made, "worker", pane_id="%1")
    watcher = world.member(made, "watch", pane_id="%2", card_kind=CardKind.MONITORING_MEMBER)
    loose = world.agent(made.fleet.fleet_id, "unplaced")
    world.deregister(world.member(made, "gone", pane_id="%3"))
    world.member(world.fleet("beta"), "elsewhere", pane_id="%8")

    listing = members.list(made.fleet.fleet_id, ListMode.ALL)

    rows = [(v.agent.agent_id, v.kind, v.placement is not None) for v in listing.members]
    assert rows == [
        (made.director.agent_id, AgentKind.DIRECTOR, True),
        (made.administrator.agent_id, AgentKind.ADMINISTRATOR, False),
        (worker, AgentKind.MEMBER, True),
        (watcher, AgentKind.MONITOR, True),
        (loose, AgentKind.MEMBER, False),
    ]


def test_activity_takes_last_recv_from_created_at_so_an_ack_is_not_receiving(
    members: MemberService, messaging: MessagingService, world, made, clock: FakeClock
) -> None:
    fid, director = made.fleet.fleet_id, made.director.agent_id
    worker = world.member(made, "worker", pane_id="%1")
    received_at = clock.now()
    task = messaging.send(fid, director, worker, "do it").message.task_id
    clock.advance(60)
    sent_at = clock.now()
    messaging.send(fid, worker, director, "on it")
    clock.advance(60)
    acked_at = clock.now()
    messaging.ack(fid, worker, task)
    clock.advance(125)

    listing = members.list(fid, ListMode.ACTIVITY)

    [view] = listing.members
    assert view.agent.agent_id == worker
    assert view.activity.last_recv == received_at
    assert view.activity.last_sent == sent_at
    assert view.activity.last_ack == acked_at
    assert view.activity.last_contact == sent_at
    assert listing.now - view.activity.last_contact == timedelta(seconds=185)


def test_activity_of_a_silent_member_is_empty(members: MemberService, world, made) -> None:
    world.member(made, "quiet", pane_id="%1")

    [view] = members.list(made.fleet.fleet_id, ListMode.ACTIVITY).members

    assert view.activity.last_sent is None
    assert view.activity.last_recv is None
    assert view.activity.last_ack is None
    assert view.activity.last_contact is None


def test_activity_counts_broadcast_deliveries_but_not_the_summary(
    members: MemberService, messaging: MessagingService, world, made, clock: FakeClock
) -> None:
    fid = made.fleet.fleet_id
    alice = world.member(made, "alice", pane_id="%1")
    bob = world.member(made, "bob", pane_id="%2")
    at = clock.now()
    messaging.broadcast(fid, alice, "hello all")

    views = {v.agent.agent_id: v for v in members.list(fid, ListMode.ACTIVITY).members}

    assert views[alice].activity.last_sent == at
    assert views[alice].activity.last_recv is None
    assert views[bob].activity.last_recv == at
    assert views[bob].activity.last_sent is None


# -- the pane as its multiplexer sees it -------------------------------------------------------


class CountingDriver(FakePaneDriver):
    """A fake server that counts its pane listings."""

    def __init__(self) -> None:
        super().__init__(Multiplexer.TMUX)
        self.listings = 0

    def list_panes(self) -> dict[str, PaneInfo]:
        self.listings += 1
        return super().list_panes()


def test_each_member_gets_its_pane_state_from_one_listing_per_server(
    store, clock: FakeClock, world, made
) -> None:
    drivers, server = FakePaneDrivers(), CountingDriver()
    drivers.servers[(Multiplexer.TMUX, made.placement.socket)] = server
    running = world.member(made, "running", pane_id="%1")
    starting = world.member(made, "starting", pane_id="%2", starting=True)
    dead = world.member(made, "dead", pane_id="%3")
    gone = world.member(made, "gone", pane_id="%4")
    pending = world.member(made, "pending", pane_id=None)
    server.add_pane("claude", pane_id="%1")
    server.add_pane("claude", pane_id="%2")
    server.add_pane("claude", pane_id="%3").dead = True

    listing = MemberService(store, clock, drivers).list(made.fleet.fleet_id, ListMode.ALL)

    states = {v.agent.agent_id: v.pane for v in listing.members}
    assert states == {
        made.director.agent_id: None,  # the Director's own pane is not a member's
        made.administrator.agent_id: None,
        running: PaneState.RUNNING,
        starting: PaneState.STARTING,
        dead: PaneState.GONE,
        gone: PaneState.GONE,
        pending: None,
    }
    assert server.listings == 1


def test_an_unreachable_server_gives_no_pane_state(store, clock: FakeClock, world, made) -> None:
    drivers = FakePaneDrivers()
    drivers(Multiplexer.TMUX, made.placement.socket).unreachable = "server exited"
    worker = world.member(made, "worker", pane_id="%1")

    view = MemberService(store, clock, drivers).show(made.fleet.fleet_id, worker)

    assert view.pane is None


def test_without_drivers_no_pane_is_looked_at(store, clock: FakeClock, world, made) -> None:
    worker = world.member(made, "worker", pane_id="%1")

    assert MemberService(store, clock).show(made.fleet.fleet_id, worker).pane is None


class DetectingDriver(CountingDriver, AgentStates):
    """A server that also detects each pane's agent state, as herdr does, from the listing
    it made last."""

    def __init__(self) -> None:
        super().__init__()
        self.states: dict[str, str] = {}

    def agent_states(self) -> dict[str, str]:
        return dict(self.states)


def test_an_agent_that_says_nothing_shows_the_state_its_multiplexer_detects(
    store, clock: FakeClock, world, made
) -> None:
    drivers, server = FakePaneDrivers(), DetectingDriver()
    drivers.servers[(Multiplexer.TMUX, made.placement.socket)] = server
    blocked = world.member(made, "blocked", pane_id="%1", coding_agent=CodingAgent.CUSTOM)
    quiet = world.member(made, "quiet", pane_id="%2", coding_agent=CodingAgent.CUSTOM)
    server.add_pane("agent", pane_id="%1")
    server.add_pane("agent", pane_id="%2")
    server.states = {"%1": "blocked"}
    statuses = AgentStatusReader(FakeLaunchPads(), AgentProfiles(), clock)

    listing = MemberService(store, clock, drivers, statuses).list(
        made.fleet.fleet_id, ListMode.MEMBERS
    )

    told = {v.agent.agent_id: v.agent_status for v in listing.members}
    assert told == {blocked: StatusReport(AgentStatus.WAITING), quiet: StatusReport.unknown()}
    assert server.listings == 1

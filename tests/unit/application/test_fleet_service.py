"""FleetService on the in-memory fakes: bootstrap, list, show, delete."""

from __future__ import annotations

import pytest

from cafleet.adapters.fake.clock import FakeClock
from cafleet.adapters.fake.locator import FakePaneLocator
from cafleet.adapters.fake.pane_driver import FakePane, FakePaneDriver, FakePaneDrivers
from cafleet.adapters.fake.store import MemoryStore
from cafleet.application.fleets import FleetService, PaneFate
from cafleet.application.panes.teardown import PaneTeardown
from cafleet.domain.errors import ErrorKind, NotFound, Unavailable
from cafleet.domain.fleet import AgentKind, AgentStatus, CardKind
from cafleet.domain.monitor import MonitorRuntime
from cafleet.domain.placement import CodingAgent, Multiplexer, PaneLocation


def test_create_bootstraps_fleet_director_placement_enrollment_and_administrator(
    fleets: FleetService, world, clock: FakeClock
) -> None:
    made = fleets.create("my-project", CodingAgent.CODEX)
    fleet_id = made.fleet.fleet_id
    director_id = made.director.agent_id
    admin_id = made.administrator.agent_id

    fleet = world.get_fleet(fleet_id)
    assert fleet is not None
    assert fleet.name == "my-project"
    assert fleet.director_agent_id == director_id
    assert fleet.deleted_at is None

    director = world.get_agent(director_id)
    assert director is not None
    assert (director.fleet_id, director.name, director.description) == (
        fleet_id,
        "Director",
        "Root Director for this fleet",
    )
    assert director.card_kind is None
    assert director.status is AgentStatus.ACTIVE
    assert director.kind(fleet) is AgentKind.DIRECTOR

    placement = world.get_placement(director_id)
    assert placement is not None
    assert placement.director_agent_id is None
    assert placement.backend is Multiplexer.TMUX
    assert (placement.session, placement.window_id, placement.pane_id) == ("main", "@0", "%0")
    assert placement.socket == "tmux-test.sock"
    assert placement.coding_agent is CodingAgent.CODEX
    # whatever runs in the Director's own pane is already up: it is never "starting"
    assert (placement.ready_at, placement.ready_rule) == (placement.created_at, "director")
    assert not placement.is_starting

    schedule = world.get_schedule(director_id)
    assert schedule is not None
    assert schedule.interval_seconds == 180
    assert schedule.enabled

    admin = world.get_agent(admin_id)
    assert admin is not None
    assert (admin.fleet_id, admin.name) == (fleet_id, "Administrator")
    assert admin.description == f"Built-in administrator agent for fleet {fleet_id}"
    assert admin.card_kind is CardKind.ADMINISTRATOR
    assert admin.kind(fleet) is AgentKind.ADMINISTRATOR
    assert world.get_placement(admin_id) is None
    assert world.get_schedule(admin_id) is None


def test_create_returns_what_it_stored(fleets: FleetService, world) -> None:
    made = fleets.create("alpha", CodingAgent.CLAUDE)

    assert made.fleet == world.get_fleet(made.fleet.fleet_id)
    assert made.director == world.get_agent(made.director.agent_id)
    assert made.administrator == world.get_agent(made.administrator.agent_id)
    assert made.placement == world.get_placement(made.director.agent_id)


def test_create_records_a_herdr_pane_as_reported_by_the_locator(
    store: MemoryStore, clock: FakeClock, teardown: PaneTeardown, world
) -> None:
    pane = PaneLocation(Multiplexer.HERDR, "w1", "w1:t1", "w1:p3", "herdr.sock")
    service = FleetService(store, clock, FakePaneLocator(pane), teardown)

    made = service.create("h", CodingAgent.OPENCODE)

    placement = world.get_placement(made.director.agent_id)
    assert placement is not None
    assert placement.backend is Multiplexer.HERDR
    assert (placement.session, placement.window_id, placement.pane_id) == ("w1", "w1:t1", "w1:p3")
    assert placement.socket == "herdr.sock"
    assert placement.coding_agent is CodingAgent.OPENCODE


def test_the_same_pane_may_direct_several_fleets(fleets: FleetService, world) -> None:
    first = fleets.create("one", CodingAgent.CLAUDE)
    second = fleets.create("two", CodingAgent.CLAUDE)

    assert first.fleet.fleet_id != second.fleet.fleet_id
    assert len({first.director.agent_id, second.director.agent_id}) == 2
    first_pane = world.get_placement(first.director.agent_id)
    second_pane = world.get_placement(second.director.agent_id)
    assert first_pane.pane_id == second_pane.pane_id == "%0"


def test_create_outside_a_multiplexer_fails_with_the_cause_and_writes_nothing(
    store: MemoryStore, clock: FakeClock, teardown: PaneTeardown
) -> None:
    cause = "no supported multiplexer detected: neither HERDR_ENV nor TMUX is set"
    service = FleetService(store, clock, FakePaneLocator(error=cause), teardown)

    with pytest.raises(Unavailable) as raised:
        service.create("alpha", CodingAgent.CLAUDE)

    assert raised.value.message == (
        f"cafleet fleet create must be run inside a tmux or herdr session ({cause})"
    )
    assert store.commits == 0
    assert store.tables.fleets == {}
    assert store.tables.agents == {}
    assert store.tables.placements == {}
    assert store.tables.schedules == {}


def test_list_shows_live_fleets_newest_first_with_active_agent_counts(
    fleets: FleetService, world, clock: FakeClock
) -> None:
    old = world.fleet("old")
    clock.advance(60)
    middle = world.fleet("middle")
    clock.advance(60)
    new = world.fleet("new")
    world.member(old, "w1", pane_id="%1")
    world.member(old, "w2", pane_id="%2")
    gone = world.member(new, "w3", pane_id="%3")
    world.deregister(gone)
    fleets.delete(middle.fleet.fleet_id)

    rows = fleets.list()

    assert [(r.fleet.name, r.agent_count) for r in rows] == [("new", 2), ("old", 4)]
    assert rows[0].fleet.director_agent_id == new.director.agent_id


def test_list_breaks_creation_time_ties_by_higher_id_first(fleets: FleetService, world) -> None:
    a = world.fleet("a")
    b = world.fleet("b")

    assert [r.fleet.fleet_id for r in fleets.list()] == [b.fleet.fleet_id, a.fleet.fleet_id]


def test_list_of_an_empty_store_is_empty(fleets: FleetService) -> None:
    assert fleets.list() == []


def test_show_returns_a_live_fleet(fleets: FleetService, world) -> None:
    made = world.fleet("alpha")

    shown = fleets.show(made.fleet.fleet_id)

    assert shown.name == "alpha"
    assert shown.deleted_at is None
    assert shown.director_agent_id == made.director.agent_id


def test_show_includes_a_deleted_fleet(fleets: FleetService, world, clock: FakeClock) -> None:
    made = world.fleet("alpha")
    clock.advance(30)
    deletion_time = clock.now()
    fleets.delete(made.fleet.fleet_id)

    shown = fleets.show(made.fleet.fleet_id)

    assert shown.deleted_at == deletion_time
    assert shown.deleted_at != made.fleet.created_at


@pytest.mark.parametrize("operation", ["show", "delete"])
def test_show_and_delete_of_an_unknown_fleet(fleets: FleetService, operation: str) -> None:
    with pytest.raises(NotFound) as raised:
        getattr(fleets, operation)(42)

    assert raised.value.message == "fleet '42' not found."
    assert raised.value.kind is ErrorKind.NOT_FOUND


def test_delete_deregisters_every_agent_and_removes_placements_and_schedules(
    fleets: FleetService, world, store: MemoryStore, clock: FakeClock
) -> None:
    made = world.fleet("alpha")
    worker = world.member(made, "worker", pane_id="%1")
    pending = world.member(made, "pending", pane_id=None)
    monitor = world.member(made, "watch", pane_id="%2", card_kind=CardKind.MONITORING_MEMBER)
    with store(write=True) as uow:
        uow.monitor.save_runtime(MonitorRuntime(made.fleet.fleet_id, tick_seconds=5))
        uow.commit()
    clock.advance(5)

    done = fleets.delete(made.fleet.fleet_id)

    everyone = [made.director.agent_id, made.administrator.agent_id, worker, pending, monitor]
    assert (done.fleet_id, done.deregistered) == (made.fleet.fleet_id, 5)
    fleet = world.get_fleet(made.fleet.fleet_id)
    assert fleet.deleted_at == clock.now()
    for agent_id in everyone:
        agent = world.get_agent(agent_id)
        assert agent.status is AgentStatus.DEREGISTERED
        assert agent.deregistered_at == fleet.deleted_at
        assert world.get_placement(agent_id) is None
        assert world.get_schedule(agent_id) is None
    with store() as uow:
        assert uow.monitor.runtime(made.fleet.fleet_id) is None


def test_delete_counts_only_agents_that_were_still_active(fleets: FleetService, world) -> None:
    made = world.fleet("alpha")
    world.deregister(world.member(made, "early-leaver"))

    assert fleets.delete(made.fleet.fleet_id).deregistered == 2


def test_delete_leaves_other_fleets_alone(fleets: FleetService, world) -> None:
    doomed = world.fleet("doomed")
    kept = world.fleet("kept")
    kept_member = world.member(kept, "keeper", pane_id="%9")

    fleets.delete(doomed.fleet.fleet_id)

    assert world.get_fleet(kept.fleet.fleet_id).deleted_at is None
    assert world.get_agent(kept_member).status is AgentStatus.ACTIVE
    assert world.get_placement(kept.director.agent_id) is not None
    assert world.get_schedule(kept_member) is not None


def test_a_second_delete_is_a_noop_that_reports_zero(
    fleets: FleetService, world, clock: FakeClock
) -> None:
    made = world.fleet("alpha")
    fleets.delete(made.fleet.fleet_id)
    first_time = world.get_fleet(made.fleet.fleet_id).deleted_at
    clock.advance(100)

    again = fleets.delete(made.fleet.fleet_id)

    assert again.deregistered == 0
    assert world.get_fleet(made.fleet.fleet_id).deleted_at == first_time


def test_a_bootstrap_that_fails_midway_leaves_nothing(
    fleets: FleetService, store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cafleet.adapters.fake.store_operations import MemoryMonitor

    def broken_enroll(self, schedule) -> None:
        raise RuntimeError("enrollment failed")

    monkeypatch.setattr(MemoryMonitor, "enroll", broken_enroll)

    with pytest.raises(RuntimeError):
        fleets.create("alpha", CodingAgent.CLAUDE)

    assert store.tables.fleets == {}
    assert store.tables.agents == {}
    assert store.tables.placements == {}


# -- delete tears down member panes first -------------------------------------------------------


@pytest.fixture
def server(pane_drivers: FakePaneDrivers) -> FakePaneDriver:
    """The fake tmux server the fleet's placements point at."""
    return pane_drivers(Multiplexer.TMUX, "tmux-test.sock")


def exits_on_slash_exit(pane: FakePane, turn: str) -> None:
    if turn == "/exit":
        pane.dead = True


def test_delete_asks_member_agents_to_exit_and_never_touches_the_director_pane(
    fleets: FleetService, world, server: FakePaneDriver
) -> None:
    made = world.fleet("alpha")
    director_pane = server.add_pane("claude", pane_id="%0")
    member_pane = server.add_pane("claude", pane_id="%1")
    server.on_submit = exits_on_slash_exit
    worker = world.member(made, "worker", pane_id="%1")

    done = fleets.delete(made.fleet.fleet_id)

    assert [(p.agent_id, p.pane_id, p.fate) for p in done.panes] == [
        (worker, "%1", PaneFate.CLOSED)
    ]
    assert member_pane.submitted() == ["/exit"]
    assert director_pane.typed == []
    assert "%0" in server.panes
    assert world.get_agent(worker).status is AgentStatus.DEREGISTERED


def test_delete_kills_a_member_pane_that_does_not_run_the_agent_without_typing(
    fleets: FleetService, world, server: FakePaneDriver
) -> None:
    made = world.fleet("alpha")
    shell = server.add_pane("bash", pane_id="%1")
    worker = world.member(made, "worker", pane_id="%1")

    done = fleets.delete(made.fleet.fleet_id)

    assert [(p.agent_id, p.fate) for p in done.panes] == [(worker, PaneFate.KILLED)]
    assert shell.typed == []
    assert "%1" not in server.panes


def test_delete_with_keep_panes_leaves_member_panes_running(
    fleets: FleetService, world, server: FakePaneDriver
) -> None:
    made = world.fleet("alpha")
    member_pane = server.add_pane("claude", pane_id="%1")
    worker = world.member(made, "worker", pane_id="%1")

    done = fleets.delete(made.fleet.fleet_id, keep_panes=True)

    assert [(p.agent_id, p.pane_id, p.fate) for p in done.panes] == [(worker, "%1", PaneFate.KEPT)]
    assert member_pane.typed == []
    assert "%1" in server.panes
    assert world.get_agent(worker).status is AgentStatus.DEREGISTERED


def test_delete_reports_an_already_gone_member_pane_and_skips_pending_ones(
    fleets: FleetService, world
) -> None:
    made = world.fleet("alpha")
    vanished = world.member(made, "vanished", pane_id="%4")
    world.member(made, "pending", pane_id=None)

    done = fleets.delete(made.fleet.fleet_id)

    assert [(p.agent_id, p.fate) for p in done.panes] == [(vanished, PaneFate.GONE)]
    assert done.deregistered == 4

"""MonitorService.tick on fakes: who is due, what is typed into the watcher's pane, what is
recorded, and how many pane listings a tick costs."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from cafleet.application.monitoring.service import TickReport
from cafleet.domain.errors import Unavailable
from cafleet.domain.monitor import DueAgent, MonitorSchedule, wake_text
from cafleet.domain.placement import Multiplexer


def claimed(fleet: Any, **kwargs: Any) -> Any:
    service = fleet.service(**kwargs)
    service.claim(fleet.fleet_id, 5)
    return service


# --------------------------------------------------------------------------- the first tick


def test_the_first_tick_names_the_director_and_every_member(fleet: Any) -> None:
    report = claimed(fleet).tick(fleet.fleet_id)

    assert report == TickReport(
        due=(
            DueAgent(fleet.director_id, "Director", "director", ("interval", "stall-check")),
            DueAgent(fleet.members["worker"], "worker", "member", ("interval", "stall-check")),
        ),
        woke=True,
    )


def test_the_wake_is_typed_once_into_the_watcher_pane_only(fleet: Any) -> None:
    report = claimed(fleet).tick(fleet.fleet_id)

    assert fleet.wakes_typed() == [wake_text(report.due, fleet.director_id)]
    assert fleet.director_pane.typed == []
    assert fleet.panes[fleet.members["worker"]].typed == []


def test_the_wake_is_typed_literally_without_esc_then_enter(fleet: Any) -> None:
    report = claimed(fleet).tick(fleet.fleet_id)

    assert fleet.watcher_pane.typed == [
        ("text", wake_text(report.due, fleet.director_id)),
        ("key", "enter"),
    ]


def test_a_delivered_wake_records_ping_and_stall_check_times(fleet: Any) -> None:
    claimed(fleet).tick(fleet.fleet_id)

    for agent_id in (fleet.director_id, fleet.members["worker"]):
        schedule = fleet.schedule(agent_id)
        assert (schedule.last_ping_at, schedule.last_stall_check_at) == (fleet.at(0), fleet.at(0))


def test_nothing_is_due_on_the_next_tick(fleet: Any) -> None:
    service = claimed(fleet)
    service.tick(fleet.fleet_id)
    fleet.clock.advance(5)

    assert service.tick(fleet.fleet_id) == TickReport()
    assert len(fleet.wakes_typed()) == 1


def test_the_watcher_and_the_administrator_are_never_named(fleet: Any) -> None:
    report = claimed(fleet).tick(fleet.fleet_id)

    named = {d.agent_id for d in report.due}
    assert fleet.watcher_id not in named
    assert fleet.admin_id not in named


def test_a_deregistered_member_is_not_watched(fleet: Any) -> None:
    gone = fleet.member("leaver")
    fleet.deregister(gone)

    report = claimed(fleet).tick(fleet.fleet_id)

    assert gone not in {d.agent_id for d in report.due}


def test_a_member_with_a_pending_pane_is_not_due(fleet: Any) -> None:
    pending = fleet.member("pending", pending=True)

    report = claimed(fleet).tick(fleet.fleet_id)

    assert pending not in {d.agent_id for d in report.due}
    assert fleet.schedule(pending).last_ping_at is None


def test_a_member_whose_pane_died_is_not_due_and_forgets_its_stall_baseline(fleet: Any) -> None:
    member = fleet.members["worker"]
    service = claimed(fleet)
    service.tick(fleet.fleet_id)
    fleet.panes[member].dead = True
    fleet.clock.advance(5)

    service.tick(fleet.fleet_id)

    assert fleet.schedule(member).last_stall_check_at is None
    assert fleet.schedule(member).last_ping_at == fleet.at(0)


def test_a_member_whose_pane_returns_gets_a_stall_check_at_once(fleet: Any) -> None:
    member = fleet.members["worker"]
    service = claimed(fleet)
    service.tick(fleet.fleet_id)
    fleet.panes[member].dead = True
    fleet.clock.advance(5)
    service.tick(fleet.fleet_id)
    fleet.panes[member].dead = False
    fleet.clock.advance(5)

    report = service.tick(fleet.fleet_id)

    assert [(d.agent_id, d.reasons) for d in report.due] == [(member, ("stall-check",))]


def test_a_member_whose_pane_vanished_is_not_due(fleet: Any) -> None:
    member = fleet.members["worker"]
    del fleet.driver.panes[fleet.panes[member].pane_id]

    report = claimed(fleet).tick(fleet.fleet_id)

    assert [d.agent_id for d in report.due] == [fleet.director_id]


def test_a_pane_running_a_shell_still_counts_as_alive_for_the_schedule(fleet: Any) -> None:
    """Only the watcher's pane gets the agent check; a watched pane only has to exist."""
    member = fleet.members["worker"]
    fleet.panes[member].command = "bash"

    report = claimed(fleet).tick(fleet.fleet_id)

    assert member in {d.agent_id for d in report.due}


def test_the_wake_names_agents_in_id_order(make_fleet: Any) -> None:
    fleet = make_fleet(members=4)

    report = claimed(fleet).tick(fleet.fleet_id)

    ids = [d.agent_id for d in report.due]
    assert ids == sorted(ids)
    assert ids[0] == fleet.director_id


def test_a_name_with_line_breaks_is_sanitized_in_the_wake_but_not_in_the_report(
    fleet: Any,
) -> None:
    odd = fleet.member("two\nlines")

    report = claimed(fleet).tick(fleet.fleet_id)

    assert f"member {odd} (two⏎lines) [interval,stall-check]" in fleet.wakes_typed()[0]
    assert DueAgent(odd, "two\nlines", "member", ("interval", "stall-check")) in report.due


def test_the_heartbeat_moves_with_every_tick(fleet: Any) -> None:
    service = claimed(fleet)
    fleet.clock.advance(5)
    service.tick(fleet.fleet_id)
    fleet.clock.advance(5)
    service.tick(fleet.fleet_id)

    runtime = fleet.runtime()
    assert (runtime.started_at, runtime.last_tick_at) == (fleet.at(0), fleet.at(10))


# --------------------------------------------------------------------------- pane listings


@pytest.mark.parametrize("members", [1, 10, 100])
def test_a_tick_lists_the_panes_once_whatever_the_fleet_size(make_fleet: Any, members: int) -> None:
    fleet = make_fleet(members=members)
    service = claimed(fleet)

    service.tick(fleet.fleet_id)  # wakes everyone
    fleet.clock.advance(5)
    service.tick(fleet.fleet_id)  # nothing due
    fleet.clock.advance(5)
    service.tick(fleet.fleet_id)

    assert fleet.driver.listings == 3
    # the watcher's agent check of a delivered wake: before typing and again before Enter
    assert fleet.driver.lookups == 2


def test_a_fleet_spread_over_two_servers_lists_each_server_once_per_tick(fleet: Any) -> None:
    other = fleet.add_server("other.sock")
    fleet.member("remote", driver=other, socket="other.sock")
    service = claimed(fleet)

    for _ in range(4):
        service.tick(fleet.fleet_id)
        fleet.clock.advance(5)

    assert (fleet.driver.listings, other.listings) == (4, 4)


def test_a_server_joins_the_sweep_in_its_first_tick_and_leaves_it_a_tick_after(
    fleet: Any,
) -> None:
    """Each tick starts the listings of the servers the last one listed before it reads the
    store; a server the fleet no longer uses is listed once more for nothing, then not."""
    service = claimed(fleet)
    service.tick(fleet.fleet_id)
    other = fleet.add_server("other.sock")
    remote = fleet.member("remote", driver=other, socket="other.sock")
    fleet.clock.advance(5)

    first = service.tick(fleet.fleet_id)  # the new server: listed although not started early
    assert other.listings == 1
    assert remote in {d.agent_id for d in first.due}

    fleet.deregister(remote)
    for _ in range(3):
        fleet.clock.advance(5)
        service.tick(fleet.fleet_id)

    assert other.listings == 2
    assert fleet.driver.listings == 5


def test_a_listing_that_fails_fails_the_tick_as_when_it_was_not_started_early(
    fleet: Any,
) -> None:
    service = claimed(fleet)
    service.tick(fleet.fleet_id)  # from now on the server's listing starts early
    fleet.driver.unreachable = "connection refused"

    with pytest.raises(Unavailable, match="connection refused"):
        service.tick(fleet.fleet_id)


def test_a_member_on_another_server_is_alive_only_on_its_own_server(fleet: Any) -> None:
    other = fleet.add_server("other.sock")
    remote = fleet.member("remote", driver=other, socket="other.sock")
    # the same pane id on the fleet's main server must not make it look alive
    fleet.driver.add_pane("demo-agent", pane_id=other.panes[fleet.panes[remote].pane_id].pane_id)
    other.panes[fleet.panes[remote].pane_id].dead = True

    report = claimed(fleet).tick(fleet.fleet_id)

    assert remote not in {d.agent_id for d in report.due}


def test_the_servers_listed_are_the_ones_the_placements_recorded(fleet: Any) -> None:
    claimed(fleet).tick(fleet.fleet_id)

    assert set(fleet.drivers.servers) == {(Multiplexer.TMUX, fleet.socket)}


def test_an_enrolled_monitoring_member_is_still_never_watched(fleet: Any) -> None:
    """A schedule row for the watcher (e.g. left by an older database) is ignored."""
    with fleet.store(write=True) as uow:
        uow.monitor.enroll(MonitorSchedule(fleet.watcher_id, 60))
        uow.commit()

    report = claimed(fleet).tick(fleet.fleet_id)

    assert fleet.watcher_id not in {d.agent_id for d in report.due}
    assert fleet.schedule(fleet.watcher_id).last_ping_at is None


def test_a_watcher_on_its_own_server_is_listed_and_woken_there(make_fleet: Any) -> None:
    fleet = make_fleet(watcher=False)
    elsewhere = fleet.add_server("watcher.sock")
    fleet.watcher(driver=elsewhere, socket="watcher.sock")
    service = claimed(fleet)

    report = service.tick(fleet.fleet_id)

    assert report.woke
    assert len(fleet.wakes_typed()) == 1
    assert (fleet.driver.listings, elsewhere.listings) == (1, 1)


# --------------------------------------------------------------------------- other hosts


def test_a_member_on_another_host_is_left_to_that_host_and_its_pane_never_typed(
    fleet: Any,
) -> None:
    remote = fleet.members["worker"]
    with fleet.store(write=True) as uow:
        placement = uow.placements.get(remote)
        uow.placements.save(replace(placement, host="build-server"))
        uow.commit()

    report = claimed(fleet).tick(fleet.fleet_id)

    assert [d.agent_id for d in report.due] == [fleet.director_id]
    assert fleet.panes[remote].typed == []

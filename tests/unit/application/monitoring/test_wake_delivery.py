"""Delivering the wake: without a usable watcher, or when typing fails, nothing is recorded
and the same agents are due on the next tick."""

from __future__ import annotations

from typing import Any

import pytest

from cafleet.application.monitoring.service import TickReport
from cafleet.domain.monitor import DueAgent

NO_WATCHER_WARNING = (
    "Warning: fleet {fid} has no monitoring member; the monitor heartbeat will wake no agent."
    " Spawn one first with 'cafleet member create --role monitor'."
)


def claimed(fleet: Any) -> Any:
    service = fleet.service()
    service.claim(fleet.fleet_id, 5)
    return service


def nothing_recorded(fleet: Any) -> bool:
    schedules = [fleet.schedule(a) for a in (fleet.director_id, *fleet.members.values())]
    return all(s.last_ping_at is None and s.last_stall_check_at is None for s in schedules)


def expected_due(fleet: Any) -> tuple[DueAgent, ...]:
    both = ("interval", "stall-check")
    return (
        DueAgent(fleet.director_id, "Director", "director", both),
        DueAgent(fleet.members["worker"], "worker", "member", both),
    )


# --------------------------------------------------------------------------- no usable watcher


def test_without_a_monitoring_member_nothing_is_delivered_or_recorded(make_fleet: Any) -> None:
    fleet = make_fleet(watcher=False)

    report = claimed(fleet).tick(fleet.fleet_id)

    assert report == TickReport(
        expected_due(fleet), woke=False, not_delivered="no monitoring member with a pane"
    )
    assert nothing_recorded(fleet)


def test_without_a_monitoring_member_the_same_agents_stay_due(make_fleet: Any) -> None:
    fleet = make_fleet(watcher=False)
    service = claimed(fleet)
    service.tick(fleet.fleet_id)
    fleet.clock.advance(5)

    assert service.tick(fleet.fleet_id).due == expected_due(fleet)


def test_a_monitoring_member_with_a_pending_pane_is_no_watcher(make_fleet: Any) -> None:
    fleet = make_fleet(watcher=False)
    fleet.watcher(pending=True)

    report = claimed(fleet).tick(fleet.fleet_id)

    assert report.not_delivered == "no monitoring member with a pane"
    assert not fleet.service().has_watcher(fleet.fleet_id)


def test_a_deregistered_monitoring_member_is_no_watcher(fleet: Any) -> None:
    fleet.deregister(fleet.watcher_id)

    report = claimed(fleet).tick(fleet.fleet_id)

    assert report.not_delivered == "no monitoring member with a pane"
    assert nothing_recorded(fleet)


def test_a_dead_watcher_pane_gets_nothing_typed_and_nothing_is_recorded(fleet: Any) -> None:
    fleet.watcher_pane.dead = True

    report = claimed(fleet).tick(fleet.fleet_id)

    assert report == TickReport(
        expected_due(fleet),
        woke=False,
        not_delivered=f"the monitoring member's pane {fleet.watcher_pane.pane_id} is gone",
    )
    assert fleet.watcher_pane.typed == []
    assert nothing_recorded(fleet)


def test_a_vanished_watcher_pane_gets_nothing_and_nothing_is_recorded(fleet: Any) -> None:
    pane_id = fleet.watcher_pane.pane_id
    del fleet.driver.panes[pane_id]

    report = claimed(fleet).tick(fleet.fleet_id)

    assert report.not_delivered == f"the monitoring member's pane {pane_id} is gone"
    assert nothing_recorded(fleet)


@pytest.mark.parametrize("shell", ["bash", "zsh", "-bash", "sh", "fish"])
def test_a_watcher_pane_showing_a_shell_is_never_typed_into(fleet: Any, shell: str) -> None:
    fleet.watcher_pane.command = shell

    report = claimed(fleet).tick(fleet.fleet_id)

    assert report.woke is False
    assert report.not_delivered == f"not-agent:{shell.lstrip('-')}"
    assert fleet.watcher_pane.typed == []
    assert nothing_recorded(fleet)


def test_a_watcher_pane_running_another_program_is_never_typed_into(fleet: Any) -> None:
    fleet.watcher_pane.command = "vim"

    report = claimed(fleet).tick(fleet.fleet_id)

    assert report.not_delivered == "not-agent:vim"
    assert fleet.watcher_pane.typed == []


def test_once_the_watcher_is_back_the_pending_agents_are_woken(fleet: Any) -> None:
    service = claimed(fleet)
    fleet.watcher_pane.command = "bash"
    service.tick(fleet.fleet_id)
    fleet.watcher_pane.command = "demo-agent"
    fleet.clock.advance(5)

    report = service.tick(fleet.fleet_id)

    assert report == TickReport(expected_due(fleet), woke=True)
    assert fleet.schedule(fleet.director_id).last_ping_at == fleet.at(5)


# --------------------------------------------------------------------------- failed typing


def test_a_failed_wake_records_nothing(fleet: Any) -> None:
    fleet.driver.typing_fails = "tmux send-keys failed: server exited unexpectedly"

    report = claimed(fleet).tick(fleet.fleet_id)

    assert report.woke is False
    assert report.not_delivered == "tmux send-keys failed: server exited unexpectedly"
    assert nothing_recorded(fleet)


def test_a_failed_text_step_is_never_followed_by_enter(fleet: Any) -> None:
    fleet.driver.typing_fails = "tmux send-keys failed: boom"

    claimed(fleet).tick(fleet.fleet_id)

    assert ("key", "enter") not in fleet.watcher_pane.typed


def test_after_a_failed_wake_the_same_agents_are_due_next_tick(fleet: Any) -> None:
    service = claimed(fleet)
    fleet.driver.typing_fails = "tmux send-keys failed: boom"
    failed = service.tick(fleet.fleet_id)
    fleet.driver.typing_fails = None
    fleet.clock.advance(5)

    retried = service.tick(fleet.fleet_id)

    assert failed.due == retried.due == expected_due(fleet)
    assert retried.woke
    assert len(fleet.wakes_typed()) == 1


# --------------------------------------------------------------------------- what the loop says


def test_the_loop_warns_at_start_without_a_monitoring_member(make_fleet: Any) -> None:
    fleet = make_fleet(watcher=False)

    run = fleet.run(fleet.service(), ticks=1)

    assert run.err[0] == NO_WATCHER_WARNING.format(fid=fleet.fleet_id)
    assert run.out[0] == f"monitor loop started (fleet {fleet.fleet_id}, tick 5s, pid 4242)"


def test_the_loop_does_not_warn_with_a_monitoring_member(fleet: Any) -> None:
    run = fleet.run(fleet.service(), ticks=1)

    assert run.err == []


def test_an_undelivered_wake_is_reported_at_most_once_a_minute(make_fleet: Any) -> None:
    fleet = make_fleet(watcher=False)

    run = fleet.run(fleet.service(), ticks=30, tick_seconds=5)  # 0 s .. 145 s

    complaints = run.err[1:]
    assert complaints == [
        f"{fleet.at(t).isoformat(timespec='microseconds')} wake not delivered:"
        " no monitoring member with a pane"
        for t in (0, 60, 120)
    ]
    assert run.wakes() == []


def test_a_delivered_wake_prints_one_line_per_due_agent(fleet: Any) -> None:
    run = fleet.run(fleet.service(), ticks=1)

    stamp = fleet.at(0).isoformat(timespec="microseconds")
    assert run.out[1:] == [
        f"{stamp} due agent {fleet.director_id} (Director) [interval,stall-check] -> wake monitor",
        f"{stamp} due agent {fleet.members['worker']} (worker) [interval,stall-check]"
        " -> wake monitor",
    ]


def test_a_name_with_controls_is_printed_escaped_in_the_wake_line(fleet: Any) -> None:
    fleet.member("evil\x1b]52;c;cHduZWQ=\x07\rFAKE")

    run = fleet.run(fleet.service(), ticks=1)

    assert any("(evil\\x1b]52;c;cHduZWQ=\\x07\\rFAKE)" in line for line in run.out)
    assert not any("\x1b" in line or "\r" in line for line in run.out + run.err)

"""Transient failures inside the loop: one stderr line per repeating reason at most once
a minute, the loop keeps ticking, and the next good tick catches up."""

from __future__ import annotations

from typing import Any

from cafleet.domain.errors import DatabaseBusy
from cafleet.entrypoints.monitor.loop import run_loop

UNREACHABLE = "cannot reach the tmux server: connection refused"
BUSY = DatabaseBusy().message


def stamp(fleet: Any, seconds: float) -> str:
    return fleet.at(seconds).isoformat(timespec="microseconds")


def failed_line(fleet: Any, seconds: float, reason: str) -> str:
    return f"{stamp(fleet, seconds)} tick failed: {reason}; retrying"


def test_an_unreachable_server_is_reported_once_a_minute_while_the_loop_goes_on(
    fleet: Any,
) -> None:
    fleet.driver.unreachable = "connection refused"

    run = fleet.run(fleet.service(), ticks=30, tick_seconds=5)  # 0 s .. 145 s

    assert run.code == 0
    assert run.ticks == 30
    assert run.err == [failed_line(fleet, t, UNREACHABLE) for t in (0, 60, 120)]


def test_the_loop_wakes_the_watcher_once_the_server_is_back(fleet: Any) -> None:
    fleet.driver.unreachable = "connection refused"
    recover = {7: lambda: setattr(fleet.driver, "unreachable", None)}

    run = fleet.run(fleet.service(), ticks=8, tick_seconds=5, before_tick=recover)

    assert run.wake_times(fleet.director_id) == [30.0]
    assert fleet.schedule(fleet.director_id).last_ping_at == fleet.at(30)


def test_a_failed_tick_records_nothing_but_the_heartbeat(fleet: Any) -> None:
    fleet.driver.unreachable = "connection refused"

    fleet.run(fleet.service(), ticks=1)

    assert fleet.schedule(fleet.director_id).last_ping_at is None
    assert fleet.wakes_typed() == []


def test_a_busy_database_is_reported_once_a_minute_while_the_loop_goes_on(fleet: Any) -> None:
    busy_from_tick_2 = {2: lambda: setattr(fleet.store, "busy", True)}

    run = fleet.run(fleet.service(), ticks=26, tick_seconds=5, before_tick=busy_from_tick_2)

    assert run.err == [failed_line(fleet, t, BUSY) for t in (5, 65, 125)]
    assert run.ticks == 26


def test_the_loop_catches_up_after_the_database_frees_up(fleet: Any) -> None:
    service = fleet.service(stall_interval=0)
    service.config(fleet.fleet_id, fleet.members["worker"], interval_seconds=10)
    hooks = {
        2: lambda: setattr(fleet.store, "busy", True),
        6: lambda: setattr(fleet.store, "busy", False),
    }

    run = fleet.run(service, ticks=8, tick_seconds=5, before_tick=hooks)

    # ticks 2-5 (5 s .. 20 s) fail; the member (10 s interval) is due again at 25 s
    assert run.wake_times(fleet.members["worker"]) == [0.0, 25.0, 35.0]


def test_different_reasons_each_get_their_own_line(fleet: Any) -> None:
    hooks = {
        1: lambda: setattr(fleet.driver, "unreachable", "connection refused"),
        3: lambda: setattr(fleet.driver, "unreachable", "server exited unexpectedly"),
        5: lambda: setattr(fleet.driver, "unreachable", "connection refused"),
    }

    run = fleet.run(fleet.service(), ticks=6, tick_seconds=5, before_tick=hooks)

    assert run.err == [
        failed_line(fleet, 0, UNREACHABLE),
        failed_line(fleet, 10, "cannot reach the tmux server: server exited unexpectedly"),
    ]


def test_an_unexpected_exception_is_one_line_and_does_not_end_the_loop(fleet: Any) -> None:
    def explode() -> dict[str, Any]:
        raise RuntimeError("boom\nsecond line")

    fleet.driver.list_panes = explode

    run = fleet.run(fleet.service(), ticks=3, tick_seconds=5)

    assert run.code == 0
    assert run.err == [failed_line(fleet, 0, "RuntimeError: boom")]
    assert run.ticks == 3


def test_a_failing_tick_still_sleeps_a_full_tick(fleet: Any) -> None:
    fleet.driver.unreachable = "connection refused"

    fleet.run(fleet.service(), ticks=4, tick_seconds=5)

    assert fleet.clock.now() == fleet.at(15)


def test_the_loop_sleeps_in_steps_of_at_most_0_2_seconds(fleet: Any) -> None:
    fleet.run(fleet.service(), ticks=2, tick_seconds=5)

    assert fleet.clock.slept
    assert max(fleet.clock.slept) <= 0.2


def test_a_stop_request_during_the_sleep_ends_it_early(fleet: Any) -> None:
    service = fleet.service()
    stop_at = fleet.at(2)

    code = run_loop(
        service,
        fleet.clock,
        fleet.fleet_id,
        60,
        pid=4242,
        should_stop=lambda: fleet.clock.now() >= stop_at,
        out=lambda _line: None,
        err=lambda _line: None,
    )

    assert code == 0
    assert fleet.clock.now() == stop_at
    assert fleet.runtime().pid is None


def test_a_closed_standard_output_is_said_once_and_the_loop_goes_on(fleet: Any) -> None:
    service = fleet.service(stall_interval=0)
    service.config(fleet.fleet_id, fleet.members["worker"], interval_seconds=10)
    written: list[str] = []
    err: list[str] = []
    attempts = 0

    def closing_out(line: str) -> None:
        nonlocal attempts
        attempts += 1
        if written:  # the reader took one line and left
            raise BrokenPipeError(32, "Broken pipe")
        written.append(line)

    code = run_loop(
        service,
        fleet.clock,
        fleet.fleet_id,
        5,
        pid=4242,
        should_stop=lambda: fleet.clock.now() >= fleet.at(30),
        out=closing_out,
        err=err.append,
    )

    assert code == 0
    assert written == [f"monitor loop started (fleet {fleet.fleet_id}, tick 5s, pid 4242)"]
    assert attempts == 2  # nothing more is written once the pipe is known closed
    assert err == ["standard output is closed (Broken pipe); the monitor goes on, on stderr only"]
    # woken at 0, 10 and 20 s: the ticks went on after the pipe closed
    assert fleet.schedule(fleet.members["worker"]).last_ping_at == fleet.at(20)
    assert fleet.runtime().pid is None

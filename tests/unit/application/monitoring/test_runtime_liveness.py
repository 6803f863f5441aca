"""MonitorRuntime: the runtime slot's liveness rule and its claim/release transitions;
SystemProcess: the pid probe's answers (EPERM counts as alive)."""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest

import cafleet.adapters.system.process
from cafleet.adapters.system.process import SystemProcess
from cafleet.domain.monitor import MonitorRuntime

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
HERE = "host-a"
ELSEWHERE = "host-b"


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def owned(tick: int = 5, host: str = HERE, pid: int | None = 100) -> MonitorRuntime:
    return MonitorRuntime(
        fleet_id=1, pid=pid, host=host, started_at=T0, last_tick_at=T0, tick_seconds=tick
    )


class Probe:
    """A pid probe that records what it was asked."""

    def __init__(self, alive: bool) -> None:
        self.answer = alive
        self.asked: list[int] = []

    def __call__(self, pid: int) -> bool:
        self.asked.append(pid)
        return self.answer


def always(answer: bool) -> Callable[[int], bool]:
    return lambda _pid: answer


# --------------------------------------------------------------------------- is_live


def test_a_fresh_heartbeat_from_a_running_process_on_this_host_is_live() -> None:
    probe = Probe(alive=True)

    assert owned().is_live(at(0), HERE, probe)
    assert probe.asked == [100]


@pytest.mark.parametrize(
    ("tick", "stale_after"),
    [(1, 15), (5, 15), (6, 18), (10, 30), (60, 180)],
)
def test_a_heartbeat_stays_fresh_for_three_ticks_but_at_least_15s(
    tick: int, stale_after: int
) -> None:
    runtime = owned(tick)

    assert runtime.is_live(at(stale_after), HERE, always(True))
    assert not runtime.is_live(at(stale_after) + timedelta(microseconds=1), HERE, always(True))


def test_a_row_without_a_pid_is_not_live() -> None:
    assert not owned(pid=None).is_live(at(0), HERE, always(True))


def test_a_row_without_a_heartbeat_is_not_live() -> None:
    runtime = MonitorRuntime(fleet_id=1, pid=100, host=HERE, tick_seconds=5)

    assert not runtime.is_live(at(0), HERE, always(True))


def test_a_released_row_is_not_live() -> None:
    assert not owned().released().is_live(at(0), HERE, always(True))


def test_same_host_with_a_dead_pid_is_not_live_even_with_a_fresh_heartbeat() -> None:
    assert not owned().is_live(at(1), HERE, always(False))


def test_another_host_is_live_on_a_fresh_heartbeat_without_probing_the_pid() -> None:
    probe = Probe(alive=False)

    assert owned(host=ELSEWHERE).is_live(at(1), HERE, probe)
    assert probe.asked == []


def test_another_host_with_a_stale_heartbeat_is_not_live() -> None:
    assert not owned(host=ELSEWHERE).is_live(at(16), HERE, always(True))


def test_a_stale_heartbeat_is_not_live_whatever_the_probe_says() -> None:
    probe = Probe(alive=True)

    assert not owned().is_live(at(3600), HERE, probe)
    assert probe.asked == []


# --------------------------------------------------------------------------- transitions


def test_claiming_writes_owner_times_and_tick() -> None:
    claimed = MonitorRuntime(fleet_id=7).claimed(pid=55, host=HERE, now=at(9), tick_seconds=2)

    assert claimed == MonitorRuntime(7, 55, HERE, at(9), at(9), 2)


def test_releasing_clears_pid_and_times_and_keeps_the_tick() -> None:
    released = owned(tick=3).released()

    assert (released.pid, released.started_at, released.last_tick_at) == (None, None, None)
    assert released.tick_seconds == 3


def test_ownership_needs_both_pid_and_host() -> None:
    runtime = owned(pid=100, host=HERE)

    assert runtime.owned_by(100, HERE)
    assert not runtime.owned_by(101, HERE)
    assert not runtime.owned_by(100, ELSEWHERE)


# --------------------------------------------------------------------------- the pid probe


def test_the_pid_probe_finds_this_process() -> None:
    assert SystemProcess().alive(os.getpid())


def test_the_pid_probe_reports_no_such_process_as_dead(monkeypatch: pytest.MonkeyPatch) -> None:
    def kill(_pid: int, _sig: int) -> None:
        raise ProcessLookupError(errno.ESRCH, "No such process")

    monkeypatch.setattr(cafleet.adapters.system.process.os, "kill", kill)

    assert not SystemProcess().alive(12345)


def test_the_pid_probe_counts_eperm_as_alive(monkeypatch: pytest.MonkeyPatch) -> None:
    def kill(_pid: int, _sig: int) -> None:
        raise PermissionError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(cafleet.adapters.system.process.os, "kill", kill)

    assert SystemProcess().alive(1)


def test_the_pid_probe_sends_signal_zero(monkeypatch: pytest.MonkeyPatch) -> None:
    sent: list[tuple[int, int]] = []
    monkeypatch.setattr(
        cafleet.adapters.system.process.os, "kill", lambda p, s: sent.append((p, s))
    )

    SystemProcess().alive(321)

    assert sent == [(321, 0)]

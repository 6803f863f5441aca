"""The monitor loop: claim the slot, tick until told to stop, release the slot.

It survives transient faults (a busy database, a tmux server briefly gone, a
vanished pane): each is one stderr line, repeated at most once a minute, and
the next tick tries again. It stops on a signal, when the fleet is deleted, or
when another process took its slot.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from datetime import datetime, timedelta

from cafleet.application.monitoring import MonitorService, Stop, TickReport
from cafleet.application.ports import Clock
from cafleet.domain.errors import CafleetError
from cafleet.domain.terminal import escaped

SLEEP_STEP_SECONDS = 0.2
REPEAT_AFTER = timedelta(seconds=60)

Echo = Callable[[str], None]


class _Throttle:
    """Says a repeating complaint at most once a minute."""

    def __init__(self, clock: Clock, echo: Echo) -> None:
        self._clock = clock
        self._echo = echo
        self._last: dict[str, datetime] = {}

    def say(self, key: str, line: str) -> None:
        now = self._clock.now()
        last = self._last.get(key)
        if last is None or now - last >= REPEAT_AFTER:
            self._last[key] = now
            self._echo(line)


def run_loop(
    service: MonitorService,
    clock: Clock,
    fleet_id: int,
    tick_seconds: int,
    *,
    pid: int,
    should_stop: Callable[[], bool],
    out: Echo,
    err: Echo,
) -> int:
    """Exit status: 0 on a signal or fleet deletion, 1 when displaced. Every line goes out
    with its controls escaped (agent names and error texts are quoted in them)."""
    err = _escaping(err)
    out = _escaping(_until_closed(out, err))
    if not service.has_watcher(fleet_id):
        err(
            f"Warning: fleet {fleet_id} has no monitoring member; the monitor heartbeat will"
            " wake no agent. Spawn one first with 'cafleet member create --role monitor'."
        )
    service.claim(fleet_id, tick_seconds)
    out(f"monitor loop started (fleet {fleet_id}, tick {tick_seconds}s, pid {pid})")
    complaints = _Throttle(clock, err)
    try:
        while not should_stop():
            report = _tick(service, clock, fleet_id, complaints)
            if report is not None and report.stop is Stop.FLEET_DELETED:
                out(f"monitor loop stopped: fleet {fleet_id} was deleted")
                return 0
            if report is not None and report.stop is Stop.DISPLACED:
                out("monitor loop stopped: runtime slot taken over by another process")
                return 1
            if report is not None:
                _report(report, clock, out, complaints)
            _sleep(clock, tick_seconds, should_stop)
    finally:
        with contextlib.suppress(CafleetError):
            service.release(fleet_id)
    return 0


def _tick(
    service: MonitorService, clock: Clock, fleet_id: int, complaints: _Throttle
) -> TickReport | None:
    try:
        return service.tick(fleet_id)
    except CafleetError as exc:
        reason = exc.message
    except Exception as exc:  # a bug in one tick must not end the watch
        text = str(exc).strip()
        reason = f"{type(exc).__name__}: {text.splitlines()[0] if text else ''}"
    complaints.say(f"tick:{reason}", f"{_iso(clock)} tick failed: {reason}; retrying")
    return None


def _report(report: TickReport, clock: Clock, out: Echo, complaints: _Throttle) -> None:
    now = _iso(clock)
    if report.drained:
        agents = ", ".join(map(str, report.drained))
        out(f"{now} queued deliveries left by ended senders -> drainer (agents {agents})")
    if report.woke:
        for agent in report.due:
            out(
                f"{now} due agent {agent.agent_id} ({agent.name})"
                f" [{','.join(agent.reasons)}] -> wake monitor"
            )
    elif report.not_delivered is not None:
        complaints.say("wake", f"{now} wake not delivered: {report.not_delivered}")


def _until_closed(out: Echo, err: Echo) -> Echo:
    """Standard output whose reader went away (`| head -1`, a closed terminal) is dropped,
    said once on stderr; the watch itself goes on."""
    closed: list[str] = []

    def echo(line: str) -> None:
        if closed:
            return
        try:
            out(line)
        except OSError as exc:  # EPIPE, EIO
            closed.append(exc.strerror or type(exc).__name__)
            err(f"standard output is closed ({closed[0]}); the monitor goes on, on stderr only")

    return echo


def _escaping(echo: Echo) -> Echo:
    return lambda line: echo(escaped(line))


def _sleep(clock: Clock, seconds: float, should_stop: Callable[[], bool]) -> None:
    remaining = seconds
    while remaining > 0 and not should_stop():
        step = min(SLEEP_STEP_SECONDS, remaining)
        clock.sleep(step)
        remaining -= step


def _iso(clock: Clock) -> str:
    return clock.now().isoformat(timespec="microseconds")

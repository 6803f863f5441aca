"""The monitor loop: claim the slot, tick until told to stop, release the slot.

It survives transient faults (a busy database, a tmux server briefly gone, a
vanished pane): each is one stderr line, repeated at most once a minute, and
the next tick tries again. It stops on a signal, when the fleet is deleted, or
when another process took its slot.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable

from cafleet.application.monitoring.service import MonitorService, Stop, TickReport
from cafleet.application.ports.system import Clock
from cafleet.domain.errors import CafleetError
from cafleet.entrypoints.loop_output import (
    Echo,
    Throttle,
    escaping,
    iso_now,
    one_round,
    sleep_unless_stopped,
    until_closed,
)


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
    err = escaping(err)
    out = escaping(until_closed(out, err, "the monitor"))
    if not service.has_watcher(fleet_id):
        err(
            f"Warning: fleet {fleet_id} has no monitoring member; the monitor heartbeat will"
            " wake no agent. Spawn one first with 'cafleet member create --role monitor'."
        )
    service.claim(fleet_id, tick_seconds)
    out(f"monitor loop started (fleet {fleet_id}, tick {tick_seconds}s, pid {pid})")
    complaints = Throttle(clock, err)
    try:
        while not should_stop():
            report = one_round(lambda: service.tick(fleet_id), clock, complaints, "tick")
            if report is not None and report.stop is Stop.FLEET_DELETED:
                out(f"monitor loop stopped: fleet {fleet_id} was deleted")
                return 0
            if report is not None and report.stop is Stop.DISPLACED:
                out("monitor loop stopped: runtime slot taken over by another process")
                return 1
            if report is not None:
                _report(report, clock, out, complaints)
            sleep_unless_stopped(clock, tick_seconds, should_stop)
    finally:
        with contextlib.suppress(CafleetError):
            service.release(fleet_id)
    return 0


def _report(report: TickReport, clock: Clock, out: Echo, complaints: Throttle) -> None:
    now = iso_now(clock)
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

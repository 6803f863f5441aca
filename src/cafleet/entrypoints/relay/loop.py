"""The relay loop: claim this host's relay, carry out its work until told to stop, leave.

Like the monitor loop it survives transient faults (each one stderr line, repeated at most
once a minute) and stops on a signal or when another relay of the host took over.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable

from cafleet.application.ports.store import WorkSignals
from cafleet.application.ports.system import Clock
from cafleet.application.relay.service import RelayService, RelayTick
from cafleet.domain.errors import CafleetError
from cafleet.domain.relay import PaneVerb, RelayBeat, RelayRequest, RequestState
from cafleet.entrypoints.loop_output import (
    SLEEP_STEP_SECONDS,
    Echo,
    Throttle,
    escaping,
    iso_now,
    one_round,
    until_closed,
)


def run_relay(
    service: RelayService,
    clock: Clock,
    poll_seconds: float,
    signals: WorkSignals,
    *,
    should_stop: Callable[[], bool],
    out: Echo,
    err: Echo,
) -> int:
    """Exit status: 0 on a signal, 1 when displaced."""
    err = escaping(err)
    out = escaping(until_closed(out, err, "the relay"))
    beat = service.start()
    out(f"relay started (host {beat.host!r}, pid {beat.pid}, {_where(service, beat)})")
    complaints = Throttle(clock, err)
    try:
        while not should_stop():
            tick = one_round(service.tick, clock, complaints, "relay round")
            if tick is not None and tick.displaced:
                out("relay stopped: another relay of this host took over")
                return 1
            if tick is not None:
                _report(tick, clock, out)
            _wait_for_work(signals, poll_seconds, should_stop)
    finally:
        with contextlib.suppress(CafleetError):
            service.stop()
        signals.close()
    out("relay stopped")
    return 0


def _where(service: RelayService, beat: RelayBeat) -> str:
    """Where members spawned on this host from other hosts open, and how to see them."""
    session = service.session
    if session is not None:
        return (
            f"in no pane: members spawned here from other hosts open in tmux session"
            f" {session.name!r} beside pane {session.pane.pane_id}; attach with"
            f" `{session.attach}`"
        )
    if beat.pane is not None:
        return f"in pane {beat.pane.pane_id}"
    why = "" if service.no_session is None else f" ({service.no_session})"
    return f"in no multiplexer pane: members cannot be spawned here from other hosts{why}"


def _wait_for_work(signals: WorkSignals, seconds: float, should_stop: Callable[[], bool]) -> None:
    """Until told of work, the poll interval is up, or a signal asks to stop."""
    remaining = seconds
    while remaining > 0 and not should_stop():
        step = min(SLEEP_STEP_SECONDS, remaining)
        if signals.wait(step):
            return
        remaining -= step


def _report(tick: RelayTick, clock: Clock, out: Echo) -> None:
    now = iso_now(clock)
    if tick.delivered_to:
        agents = ", ".join(map(str, tick.delivered_to))
        out(f"{now} delivered the queued messages of agents {agents}")
    for request in tick.answered:
        outcome = "done" if request.state is RequestState.DONE else f"failed: {request.answer}"
        out(f"{now} {_described(request)} (request {request.request_id}): {outcome}")


def _described(request: RelayRequest) -> str:
    if request.verb is PaneVerb.SPAWN:
        return f"spawn for Director {request.agent_id} of fleet {request.fleet_id}"
    if request.verb is PaneVerb.CLOSE:
        return f"closing the member panes of fleet {request.fleet_id}"
    return f"{request.verb.value} of agent {request.agent_id}"

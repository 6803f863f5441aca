"""Relays: one `cafleet relay` per host carries out the pane work addressed to that host.

A relay reports liveness with a beat (its host, process and when it was last seen); work for
its panes waits in the store (queued deliveries, pane requests) until a live relay takes it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from enum import StrEnum

RELAY_BEAT_SECONDS = 1.0  # how often a relay says it is alive (and looks for work, at least)
RELAY_ALIVE_SECONDS = 10.0  # a relay not seen for longer is taken to be down
RELAY_ANSWER_SECONDS = 20.0  # how long a command waits for a relay to answer its request


def relay_note(host: str) -> str:
    """The ledger note of a delivery left for another host's relay."""
    return f"relay:{host}"


def relayed_host(note: str | None) -> str | None:
    """The host whose relay a pending delivery waits for (see relay_note), else None."""
    if note is None or not note.startswith("relay:"):
        return None
    return note.removeprefix("relay:")


@dataclass(frozen=True)
class RelayBeat:
    host: str
    pid: int
    started_at: datetime
    seen_at: datetime

    def is_alive(self, now: datetime) -> bool:
        return now - self.seen_at <= timedelta(seconds=RELAY_ALIVE_SECONDS)

    def holds_against(self, pid: int, now: datetime, alive: Callable[[int], bool]) -> bool:
        """Whether this beat keeps process `pid` (on the beat's host) from being its relay:
        another process's, fresh, and that process still exists."""
        return self.pid != pid and self.is_alive(now) and alive(self.pid)


class RequestState(StrEnum):
    PENDING = "pending"
    DONE = "done"
    FAILED = "failed"


class PaneVerb(StrEnum):
    """The pane verbs a relay runs for a command on another host."""

    CAPTURE = "capture"
    CAPTURE_ANSI = "capture-ansi"
    PING = "ping"
    EXEC = "exec"


@dataclass(frozen=True)
class RelayRequest:
    """One pane verb asked of a host's relay; the answer is the text the verb returns (a
    capture's content) or, when it failed, its one-line error."""

    host: str
    fleet_id: int
    agent_id: int
    verb: PaneVerb
    argument: str
    created_at: datetime
    request_id: int = 0
    state: RequestState = RequestState.PENDING
    answer: str | None = None
    error_kind: str | None = None  # the CafleetError class name of a failed verb
    answered_at: datetime | None = None

    def answered(self, answer: str, at: datetime) -> RelayRequest:
        return replace(self, state=RequestState.DONE, answer=answer, answered_at=at)

    def failed(self, kind: str, error: str, at: datetime) -> RelayRequest:
        return replace(
            self, state=RequestState.FAILED, answer=error, error_kind=kind, answered_at=at
        )

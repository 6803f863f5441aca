"""Relays: one `cafleet relay` per host carries out the pane work addressed to that host.

A relay reports liveness with a beat (its host, process and when it was last seen); work for
its panes waits in the store (queued deliveries, pane requests) until a live relay takes it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from cafleet.domain.agents.status import StatusReport
from cafleet.domain.errors import Invalid, Unavailable
from cafleet.domain.placement import PaneLocation, PaneState

RELAY_BEAT_SECONDS = 1.0  # how often a relay says it is alive (and looks for work, at least)
RELAY_ALIVE_SECONDS = 10.0  # a relay not seen for longer is taken to be down
RELAY_ANSWER_SECONDS = 20.0  # how long a command waits for a relay to answer its request
RELAY_WAKE_SECONDS = 10.0  # how long the monitor waits for another host to type its wake
# beyond the verb's own bound (a start timeout, an exit timeout): the relay's way to it
RELAY_MARGIN_SECONDS = 30.0


class RelayDown(Unavailable):
    """No live relay on the host a pane verb must run on."""

    def __init__(self, host: str, message: str) -> None:
        super().__init__(message)
        self.host = host


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
    # the relay's own pane, when it runs in one: members spawned on its host from elsewhere
    # open beside it (in its multiplexer session)
    pane: PaneLocation | None = None

    def is_alive(self, now: datetime) -> bool:
        return now - self.seen_at <= timedelta(seconds=RELAY_ALIVE_SECONDS)

    def holds_against(self, pid: int, now: datetime, alive: Callable[[int], bool]) -> bool:
        """Whether this beat keeps process `pid` (on the beat's host) from being its relay:
        another process's, fresh, and that process still exists."""
        return self.pid != pid and self.is_alive(now) and alive(self.pid)


@dataclass(frozen=True)
class RelaySession:
    """The multiplexer session of a relay's own, for a relay that runs in no pane (a service):
    members spawned on its host from other hosts open in it, beside `pane`."""

    name: str
    pane: PaneLocation
    attach: str  # the command that shows the session, e.g. `tmux -L cafleet attach -t members`


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
    WAKE = "wake"  # the monitor's wake line, typed into the monitoring member's pane
    SPAWN = "spawn"  # member create on this host; agent_id is the Director's
    DELETE = "delete"  # member delete
    CLOSE = "close"  # fleet delete: close these members' panes; agent_id is 0


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


@dataclass(frozen=True)
class HostRelay:
    """A host's relay as seen at one moment: its last beat (None: never seen) and whether
    that beat is fresh."""

    host: str
    beat: RelayBeat | None
    alive: bool

    @staticmethod
    def of(host: str, beats: Mapping[str, RelayBeat], now: datetime) -> HostRelay:
        beat = beats.get(host)
        return HostRelay(host, beat, beat is not None and beat.is_alive(now))


@dataclass(frozen=True)
class PaneReport:
    """What a relay last saw of one member pane of its host; the other hosts' `member list`
    and monitor read it while that relay is alive (a relay rechecks its panes every beat)."""

    agent_id: int
    host: str
    pane: PaneState | None  # None: the multiplexer did not answer
    status: StatusReport
    detected: str | None = None  # the multiplexer's own word for the agent's state (herdr)


def payload(values: Mapping[str, Any]) -> str:
    """A verb's argument or answer that carries several values (JSON)."""
    import json  # a relay's verbs only: not on a send's path

    return json.dumps(dict(values), separators=(",", ":"), sort_keys=True)


def values_of(text: str) -> dict[str, Any]:
    """payload()'s values; a text that is not one is refused as the relay's own error."""
    import json

    try:
        found = json.loads(text)
    except ValueError:
        found = None
    if not isinstance(found, dict):
        raise Invalid(f"the relay request or answer is not a JSON object: {text[:80]!r}")
    return found

"""Monitoring: which agents the heartbeat watches, when they are due, and the wake line.

Everything here is pure: time comes in as `now`, process liveness as a callable.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from cafleet.domain.agents.status import AgentStatus
from cafleet.domain.fleet import Agent
from cafleet.domain.preview import sanitized

DIRECTOR_INTERVAL_SECONDS = 180
MEMBER_INTERVAL_SECONDS = 720
DEFAULT_TICK_SECONDS = 5
MIN_STALE_SECONDS = 15

INTERVAL = "interval"
STALL_CHECK = "stall-check"
UNREAD_WHILE_IDLE = "idle-unread"
# worth a wake on change: waiting for a person, finished, or idle with mail it has not read
BLOCKED = "blocked"
NATIVE_WAKE_STATES = (BLOCKED, "done", UNREAD_WHILE_IDLE)
WORKING = "working"


def status_reason(state: str) -> str:
    return f"status:{state}"


def state_of(status: AgentStatus, unread: int) -> str | None:
    """An agent's own status in the monitor's words (herdr's: idle, working, blocked, done),
    with mail waiting while it idles as a state of its own."""
    match status:
        case AgentStatus.WAITING:
            return BLOCKED
        case AgentStatus.WORKING:
            return WORKING
        case AgentStatus.IDLE:
            return UNREAD_WHILE_IDLE if unread else "idle"
        case _:
            return None


def blocked_notice(agent: Agent, fleet_id: int) -> tuple[str, str]:
    """Title and body of the notification raised when a member turns blocked."""
    return f"{agent.label} is blocked", f"fleet {fleet_id}: it waits for an approval or an answer"


@dataclass(frozen=True)
class MonitorSchedule:
    agent_id: int
    interval_seconds: int
    enabled: bool = True
    last_ping_at: datetime | None = None
    last_stall_check_at: datetime | None = None
    last_native_status: str | None = None

    def reconfigured(self, interval_seconds: int | None, enabled: bool | None) -> MonitorSchedule:
        updated = self
        if interval_seconds is not None:
            updated = replace(updated, interval_seconds=interval_seconds)
        if enabled is not None:
            updated = replace(updated, enabled=enabled)
            if not enabled:
                updated = replace(updated, last_stall_check_at=None)
        return updated

    def due(
        self, now: datetime, *, alive: bool, stall_interval: int, native_status: str | None = None
    ) -> tuple[str, ...]:
        """Why this agent needs the watcher's look now; empty when it does not.

        Reasons come in the order interval, stall-check, status:<state>.
        """
        if not self.enabled or not alive:
            return ()
        reasons = []
        if _elapsed(self.last_ping_at, now, self.interval_seconds):
            reasons.append(INTERVAL)
        stalls = native_status != WORKING  # an agent that says it works is not stalled
        if (
            stall_interval > 0
            and stalls
            and _elapsed(self.last_stall_check_at, now, stall_interval)
        ):
            reasons.append(STALL_CHECK)
        if native_status in NATIVE_WAKE_STATES and native_status != self.last_native_status:
            reasons.append(status_reason(native_status))
        return tuple(reasons)

    def after_wake(
        self, reasons: Sequence[str], now: datetime, native_status: str | None
    ) -> MonitorSchedule:
        """What a delivered wake records: pings, stall-check time, the native state seen."""
        updated = self
        if INTERVAL in reasons or any(r.startswith("status:") for r in reasons):
            updated = replace(updated, last_ping_at=now)
        if STALL_CHECK in reasons:
            updated = replace(updated, last_stall_check_at=now)
        if native_status is not None:
            updated = replace(updated, last_native_status=native_status)
        return updated

    def observed(self, *, alive: bool, native_status: str | None) -> MonitorSchedule:
        """Changes recorded every tick whether or not a wake goes out.

        A dead or pending pane forgets its stall-check baseline; a native state that is not a
        transition into a waking state is recorded at once (so the next transition wakes).
        """
        updated = self
        if (not alive or not self.enabled) and self.last_stall_check_at is not None:
            updated = replace(updated, last_stall_check_at=None)
        if native_status is not None and native_status not in NATIVE_WAKE_STATES:
            updated = replace(updated, last_native_status=native_status)
        return updated


def _elapsed(since: datetime | None, now: datetime, seconds: int) -> bool:
    """A time in the future (the clock jumped back) counts as elapsed: waiting for the
    clock to catch up would silence the agent for as long as the jump."""
    return since is None or since > now or now - since >= timedelta(seconds=seconds)


@dataclass(frozen=True)
class MonitorRuntime:
    """The per-fleet slot a running monitor loop owns, kept alive by its heartbeat."""

    fleet_id: int
    pid: int | None = None
    host: str | None = None
    started_at: datetime | None = None
    last_tick_at: datetime | None = None
    tick_seconds: int = DEFAULT_TICK_SECONDS

    def is_live(self, now: datetime, this_host: str, process_alive: Callable[[int], bool]) -> bool:
        """Fresh heartbeat, and (only on this host) a process that still exists."""
        if self.pid is None or self.last_tick_at is None:
            return False
        stale_after = max(3 * self.tick_seconds, MIN_STALE_SECONDS)
        if now - self.last_tick_at > timedelta(seconds=stale_after):
            return False
        return self.host != this_host or process_alive(self.pid)

    def claimed(self, pid: int, host: str, now: datetime, tick_seconds: int) -> MonitorRuntime:
        return replace(
            self, pid=pid, host=host, started_at=now, last_tick_at=now, tick_seconds=tick_seconds
        )

    def released(self) -> MonitorRuntime:
        return replace(self, pid=None, started_at=None, last_tick_at=None)

    def owned_by(self, pid: int, host: str) -> bool:
        return self.pid == pid and self.host == host

    def claim_key(self) -> str:
        """What tells this claim from any other: its loop writes it into the mark it holds.
        A pid and host alone repeat: loops in tool sandboxes (own pid namespaces) of one
        host all have small pids such as 2."""
        started = self.started_at.isoformat(timespec="microseconds") if self.started_at else ""
        return f"{self.pid} {self.host} {started}"


@dataclass(frozen=True)
class DueAgent:
    agent_id: int
    name: str
    role: str  # "director" or "member"
    reasons: tuple[str, ...]

    def entry(self) -> str:
        return f"{self.role} {self.agent_id} ({sanitized(self.name)}) [{','.join(self.reasons)}]"


WAKE_INSTRUCTIONS = (
    "Capture each named pane read-only, with the Director pane ({director}) always inspected."
    " From capture content only, classify each pane in this precedence order: awaiting_user,"
    " unknown, finished, stalled, working. For an agent tagged stall-check, compare its capture"
    " against your previous stall-check capture of that pane, then keep the new capture as that"
    " pane's baseline; with no previous stall-check capture, classify unknown. Never re-engage a"
    " pane classified awaiting_user: when the Director is awaiting_user, send nothing this wake,"
    " whatever the other panes show. Otherwise re-engage the Director via cafleet member nudge"
    " when a due agent is stalled or finished, or the Director is finished with un-acked work."
)


def wake_text(due: Sequence[DueAgent], director_id: int) -> str:
    """The one-line wake typed into the watcher's pane."""
    noun = "agent" if len(due) == 1 else "agents"
    entries = ", ".join(agent.entry() for agent in due)
    return f"[monitor] wake: {len(due)} {noun} due — {entries}. " + WAKE_INSTRUCTIONS.format(
        director=director_id
    )

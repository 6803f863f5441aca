"""Read models of the admin WebUI: what its routes show, never storage rows.

They carry domain objects plus what a page needs beside them (resolved names, the
ledger row, liveness judged at read time); the HTTP layer only reshapes them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from cafleet.application.ports.store import ConversationMark
from cafleet.domain.agents.status import StatusReport
from cafleet.domain.delivery import Delivery
from cafleet.domain.fleet import Agent, AgentKind
from cafleet.domain.message import Message, MessageState
from cafleet.domain.monitor import MonitorRuntime, MonitorSchedule
from cafleet.domain.placement import CodingAgent

DEFAULT_PAGE_SIZE = 200
MAX_PAGE_SIZE = 1000


@dataclass(frozen=True)
class Page:
    """Newest first: at most `limit` messages, only ids below `before` when given."""

    limit: int = DEFAULT_PAGE_SIZE
    before: int | None = None


@dataclass(frozen=True)
class RosterEntry:
    agent: Agent
    kind: AgentKind  # as the CLI says it: director, administrator, monitor, member
    schedule: MonitorSchedule | None
    agent_status: StatusReport | None = None  # None: not a member with a pane
    coding_agent: CodingAgent | None = None  # None: no recorded pane
    unread: int = 0  # messages it owns that are not acknowledged (input_required)


@dataclass(frozen=True)
class MessageView:
    message: Message
    from_agent_name: str | None
    to_agent_name: str | None
    delivery: Delivery | None  # the last attempt
    attempts: tuple[Delivery, ...] = ()  # every attempt, first to last


@dataclass(frozen=True)
class SearchView:
    """A search hit as the page lists it: the message, its score and its snippet."""

    view: MessageView
    score: float
    snippet: str


@dataclass(frozen=True)
class RuntimeView:
    """The fleet's monitor slot as `monitor status` judges it."""

    runtime: MonitorRuntime | None
    running: bool
    now: datetime

    @property
    def live(self) -> MonitorRuntime | None:
        """The slot's process fields are only meaningful while its owner runs."""
        return self.runtime if self.running else None

    @property
    def last_tick_age_seconds(self) -> int | None:
        live = self.live
        if live is None or live.last_tick_at is None:
            return None
        return max(0, int((self.now - live.last_tick_at).total_seconds()))


@dataclass(frozen=True)
class SendReceipt:
    task_id: int
    state: MessageState
    unrecorded: str | None = None  # the store failed after the message was stored: why


class FleetEvent(StrEnum):
    MESSAGE = "message"  # a new message exists
    STATE = "state"  # something already shown changed: states, deliveries, roster, monitor


AgentStatusMark = tuple[tuple[int, str, datetime | None], ...]  # (agent_id, status, since)


@dataclass(frozen=True)
class FleetMark:
    """A cheap fingerprint of everything the dashboard shows for one fleet."""

    conversation: ConversationMark
    roster: tuple[tuple[int, str], ...]  # (agent_id, status)
    schedules: tuple[tuple[int, int, bool, datetime | None], ...]  # id, interval, on, last ping
    monitor_running: bool
    agent_statuses: AgentStatusMark = ()  # each member's agent status, as last read

    def changes_since(self, earlier: FleetMark) -> dict[FleetEvent, tuple[str, ...]]:
        """Which events a watcher should hear, with what changed for the state event."""
        events: dict[FleetEvent, tuple[str, ...]] = {}
        now, then = self.conversation, earlier.conversation
        changed = []
        if now.last_task_id != then.last_task_id:
            # a reader refetches the lists on a new message, which also shows any state change
            events[FleetEvent.MESSAGE] = ("messages",)
        elif (now.last_state_change, now.open_messages) != (
            then.last_state_change,
            then.open_messages,
        ):
            changed.append("messages")
        if (now.settled_deliveries, now.confirmed_deliveries) != (
            then.settled_deliveries,
            then.confirmed_deliveries,
        ):
            changed.append("deliveries")
        if (self.roster, self.agent_statuses) != (earlier.roster, earlier.agent_statuses):
            changed.append("agents")
        if (self.schedules, self.monitor_running) != (earlier.schedules, earlier.monitor_running):
            changed.append("monitor")
        if changed:
            events[FleetEvent.STATE] = tuple(changed)
        return events

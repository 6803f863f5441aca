"""The store: units of work and the repositories (SQLite, PostgreSQL, the in-memory fake).

Repositories never commit: a UnitOfWork rolls back unless commit() is called.
A write UnitOfWork takes the database write lock when it opens, so timestamps
taken inside it order the same way as the ids it assigns."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from types import TracebackType
from typing import Protocol

from cafleet.domain.delivery import Delivery
from cafleet.domain.fleet import Agent, Fleet
from cafleet.domain.message import Message
from cafleet.domain.monitor import MonitorRuntime, MonitorSchedule
from cafleet.domain.placement import Placement
from cafleet.domain.relay import PaneReport, RelayBeat, RelayRequest
from cafleet.domain.search import SearchHit, SearchQuery
from cafleet.domain.skills import SkillInstall


class FleetRepository(Protocol):
    def add(self, fleet: Fleet) -> int: ...
    def get(self, fleet_id: int) -> Fleet | None: ...
    def save(self, fleet: Fleet) -> None: ...
    def list_live(self) -> list[Fleet]:
        """Fleets not deleted, newest first (ties: higher id first)."""
        ...

    def list_all(self) -> list[Fleet]:
        """Every fleet, deleted ones included, in the same order."""
        ...


class AgentRepository(Protocol):
    def add(self, agent: Agent) -> int: ...
    def get(self, agent_id: int) -> Agent | None: ...
    def save(self, agent: Agent) -> None: ...
    def in_fleet(self, fleet_id: int, *, active_only: bool = True) -> list[Agent]:
        """Agents of one fleet in id order."""
        ...

    def count_active(self, fleet_ids: Iterable[int]) -> dict[int, int]: ...


class PlacementRepository(Protocol):
    def add(self, placement: Placement) -> None: ...
    def get(self, agent_id: int) -> Placement | None: ...
    def save(self, placement: Placement) -> None: ...
    def remove(self, agent_id: int) -> None: ...
    def for_agents(self, agent_ids: Iterable[int]) -> dict[int, Placement]: ...


@dataclass(frozen=True)
class Activity:
    last_sent: datetime | None = None
    last_recv: datetime | None = None
    last_ack: datetime | None = None

    @property
    def last_contact(self) -> datetime | None:
        """The newest message sent or received: what idleness is measured from."""
        return max((t for t in (self.last_sent, self.last_recv) if t is not None), default=None)


@dataclass(frozen=True)
class ConversationMark:
    """Where a fleet's conversation stands, read cheaply so a watcher can tell it moved.

    A new message raises last_task_id; an ACK or cancel changes open_messages and
    last_state_change; a settled push raises settled_deliveries; an agent's receipt
    raises confirmed_deliveries.
    """

    last_task_id: int | None = None
    last_state_change: datetime | None = None
    open_messages: int = 0
    settled_deliveries: int = 0
    confirmed_deliveries: int = 0


class MessageRepository(Protocol):
    def add(self, message: Message) -> int:
        """Store a new message; a broadcast summary gets its own id as origin, and a message
        without a thread starts its own (its id as thread_id)."""
        ...

    def get(self, task_id: int) -> Message | None: ...
    def save(self, message: Message) -> None: ...
    def pending_for(self, agent_id: int, limit: int | None = None) -> list[Message]:
        """input_required messages owned by the agent, summaries excluded, newest first."""
        ...

    def activity(self, agent_ids: Sequence[int]) -> dict[int, Activity]: ...
    def pending_counts(self, agent_ids: Sequence[int]) -> dict[int, int]:
        """input_required messages owned per agent, summaries excluded."""
        ...

    def timeline(self, fleet_id: int, limit: int, before: int | None = None) -> list[Message]:
        """Messages sent by agents of the fleet, summaries excluded, newest first."""
        ...

    def owned_by(self, agent_id: int, limit: int, before: int | None = None) -> list[Message]:
        """The agent's inbox: messages it owns in any state, summaries excluded, newest first;
        `before` keeps only ids below it."""
        ...

    def sent_by(self, agent_id: int, limit: int, before: int | None = None) -> list[Message]:
        """Messages the agent sent, summaries excluded, newest first; `before` as above."""
        ...

    def broadcast_copies(self, summary: Message) -> list[Message]:
        """The unicast rows a broadcast summary stands for, one per recipient, in id order."""
        ...

    def thread(self, thread_id: int) -> list[Message]:
        """Every message of the thread (summaries and copies included), in id order."""
        ...

    def search(self, fleet_id: int, query: SearchQuery, offset: int, limit: int) -> list[SearchHit]:
        """The fleet's messages that match, best first (summaries left out; a broadcast's
        copies each match); rows `offset` to `offset + limit`. A raw query the store cannot
        read is Invalid."""
        ...

    def conversation_mark(self, fleet_id: int) -> ConversationMark:
        """Messages owned by agents of the fleet (summaries included) and their deliveries."""
        ...


class DeliveryRepository(Protocol):
    def add(self, delivery: Delivery) -> None: ...
    def get(self, task_id: int, recipient_agent_id: int) -> Delivery | None: ...
    def save(self, delivery: Delivery) -> None: ...
    def confirm(self, recipient_agent_id: int, task_ids: Sequence[int], at: datetime) -> int:
        """Mark the sent attempts of these messages to this recipient as taken in by the
        agent itself (first time only); how many rows changed."""
        ...

    def for_task(self, task_id: int) -> list[Delivery]: ...
    def for_tasks(self, task_ids: Sequence[int]) -> list[Delivery]:
        """The ledger rows of many messages at once (for listing them with their outcome),
        earlier attempts first."""
        ...

    def count_pending_since(self, before: datetime) -> int: ...

    def queued_for(self, recipient_agent_id: int) -> list[Delivery]:
        """The pending rows of this recipient (the pane's delivery queue), in task order."""
        ...

    def stranded(self, recipient_agent_ids: Iterable[int], before: datetime) -> list[int]:
        """Which of these recipients have a row pending since before `before` (a queue whose
        sender and drainer ended), in id order."""
        ...

    def announced_untaken(self, recipient_agent_id: int, since: datetime) -> list[int]:
        """The unread messages to this recipient announced (a sent attempt) since `since`
        that its agent has not yet been seen to take in (no `confirmed_at`), oldest first."""
        ...


class MonitorRepository(Protocol):
    def enroll(self, schedule: MonitorSchedule) -> None: ...
    def get(self, agent_id: int) -> MonitorSchedule | None: ...
    def for_agents(self, agent_ids: Iterable[int]) -> dict[int, MonitorSchedule]: ...
    def save(self, schedule: MonitorSchedule) -> None: ...
    def record_progress(self, schedules: Sequence[MonitorSchedule]) -> None:
        """Store only what the monitor owns (last ping, stall-check time, native state), in
        one batch; interval and enabled keep their current values, and rows removed
        meanwhile are skipped."""
        ...

    def unenroll(self, agent_id: int) -> None: ...
    def runtime(self, fleet_id: int) -> MonitorRuntime | None: ...
    def save_runtime(self, runtime: MonitorRuntime) -> None:
        """Insert or replace the fleet's runtime row."""
        ...

    def heartbeat(self, fleet_id: int, pid: int, host: str, at: datetime) -> bool:
        """Refresh last_tick_at if (pid, host) still owns the slot; False when displaced."""
        ...

    def remove_runtime(self, fleet_id: int) -> None: ...


class InstallRepository(Protocol):
    def list(self) -> list[SkillInstall]:
        """Every recorded install, by coding agent."""
        ...

    def record(self, install: SkillInstall) -> None:
        """Insert or replace the install of one coding agent."""
        ...


class RelayRepository(Protocol):
    """Each host's relay beat and the pane requests addressed to hosts (domain/relay.py)."""

    def beat(self, beat: RelayBeat) -> None:
        """Insert or replace the beat of the beat's host."""
        ...

    def beats(self) -> list[RelayBeat]:
        """Every host's last beat, by host."""
        ...

    def leave(self, host: str, pid: int) -> None:
        """Remove the host's beat if this process wrote it (a relay stopping)."""
        ...

    def ask(self, request: RelayRequest) -> int:
        """Store a pending request; its id."""
        ...

    def request(self, request_id: int) -> RelayRequest | None: ...

    def pending(self, host: str) -> list[RelayRequest]:
        """The host's pending requests, oldest first."""
        ...

    def settle(self, request: RelayRequest) -> None:
        """Store a request's state and answer."""
        ...

    def wake(self, host: str) -> None:
        """Tell the host's relay, once this unit of work commits, that work waits for it
        (PostgreSQL: NOTIFY; elsewhere nothing, the relay looks for work on its own)."""
        ...

    def report(self, host: str, reports: Sequence[PaneReport]) -> None:
        """The host's pane reports are these now (any other of the host's is dropped)."""
        ...

    def reports(self, agent_ids: Iterable[int]) -> dict[int, PaneReport]:
        """The last reports of these agents' panes, whoever wrote them."""
        ...


class WorkSignals(Protocol):
    """How a relay waits for work: until a unit of work tells its host of some
    (RelayRepository.wake) or the time is up."""

    def wait(self, seconds: float) -> bool:
        """True when told of work, False when `seconds` passed without a word."""
        ...

    def close(self) -> None: ...


class UnitOfWork(Protocol):
    fleets: FleetRepository
    agents: AgentRepository
    placements: PlacementRepository
    messages: MessageRepository
    deliveries: DeliveryRepository
    monitor: MonitorRepository
    installs: InstallRepository
    relays: RelayRepository

    def __enter__(self) -> UnitOfWork: ...
    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...
    def commit(self) -> None: ...


class UnitOfWorkFactory(Protocol):
    def __call__(self, *, write: bool = False) -> UnitOfWork: ...

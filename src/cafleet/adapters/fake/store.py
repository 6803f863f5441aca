"""An in-memory unit of work with the same semantics as the SQLite one.

A unit of work works on a copy of the store and publishes it on commit, so a
unit of work that is not committed leaves no trace. A lock serialises writers
the way SQLite's write lock does.
"""

from __future__ import annotations

import copy
import re
import threading
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from types import TracebackType
from typing import TypeVar

from cafleet.application.ports import (
    Activity,
    ConversationMark,
    UnitOfWork,
    UnitOfWorkFactory,
)
from cafleet.domain.agent import Agent
from cafleet.domain.delivery import Delivery, DeliveryState
from cafleet.domain.errors import CafleetError
from cafleet.domain.fleet import Fleet
from cafleet.domain.message import Message, MessageState, MessageType
from cafleet.domain.monitor import MonitorRuntime, MonitorSchedule
from cafleet.domain.placement import Placement
from cafleet.domain.relay import PaneReport, RelayBeat, RelayRequest, RequestState
from cafleet.domain.search import SearchHit, SearchQuery, marked
from cafleet.domain.skills import SkillInstall

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


def _insert(table: dict[K, V], key: K, row: V) -> None:
    """A second row under one key is refused, as a primary key refuses it."""
    if key in table:
        raise ValueError(f"duplicate key {key!r}")
    table[key] = row


def _update(table: dict[K, V], key: K, row: V) -> None:
    """Like UPDATE ... WHERE key: a row that was never added stays absent."""
    if key in table:
        table[key] = row


@dataclass
class MemoryTables:
    fleets: dict[int, Fleet] = field(default_factory=dict)
    agents: dict[int, Agent] = field(default_factory=dict)
    placements: dict[int, Placement] = field(default_factory=dict)
    messages: dict[int, Message] = field(default_factory=dict)
    deliveries: dict[tuple[int, int, int], Delivery] = field(default_factory=dict)
    schedules: dict[int, MonitorSchedule] = field(default_factory=dict)
    runtimes: dict[int, MonitorRuntime] = field(default_factory=dict)
    installs: dict[str, SkillInstall] = field(default_factory=dict)
    beats: dict[str, RelayBeat] = field(default_factory=dict)
    requests: dict[int, RelayRequest] = field(default_factory=dict)
    reports: dict[int, PaneReport] = field(default_factory=dict)
    wakes: list[str] = field(default_factory=list)  # hosts told of work, in commit order
    next_ids: dict[str, int] = field(default_factory=dict)

    def new_id(self, table: str) -> int:
        self.next_ids[table] = self.next_ids.get(table, 0) + 1
        return self.next_ids[table]


class MemoryFleets:
    def __init__(self, t: MemoryTables) -> None:
        self._t = t

    def add(self, fleet: Fleet) -> int:
        fleet_id = self._t.new_id("fleets")
        self._t.fleets[fleet_id] = replace(fleet, fleet_id=fleet_id)
        return fleet_id

    def get(self, fleet_id: int) -> Fleet | None:
        return self._t.fleets.get(fleet_id)

    def save(self, fleet: Fleet) -> None:
        _update(self._t.fleets, fleet.fleet_id, fleet)

    def list_live(self) -> list[Fleet]:
        return [f for f in self.list_all() if not f.is_deleted]

    def list_all(self) -> list[Fleet]:
        every = self._t.fleets.values()
        return sorted(every, key=lambda f: (f.created_at, f.fleet_id), reverse=True)


class MemoryAgents:
    def __init__(self, t: MemoryTables) -> None:
        self._t = t

    def add(self, agent: Agent) -> int:
        agent_id = self._t.new_id("agents")
        self._t.agents[agent_id] = replace(agent, agent_id=agent_id)
        return agent_id

    def get(self, agent_id: int) -> Agent | None:
        return self._t.agents.get(agent_id)

    def save(self, agent: Agent) -> None:
        _update(self._t.agents, agent.agent_id, agent)

    def in_fleet(self, fleet_id: int, *, active_only: bool = True) -> list[Agent]:
        return sorted(
            (
                a
                for a in self._t.agents.values()
                if a.fleet_id == fleet_id and (a.is_active or not active_only)
            ),
            key=lambda a: a.agent_id,
        )

    def count_active(self, fleet_ids: Iterable[int]) -> dict[int, int]:
        wanted = set(fleet_ids)
        counts: dict[int, int] = {}
        for agent in self._t.agents.values():
            if agent.fleet_id in wanted and agent.is_active:
                counts[agent.fleet_id] = counts.get(agent.fleet_id, 0) + 1
        return counts


class MemoryPlacements:
    def __init__(self, t: MemoryTables) -> None:
        self._t = t

    def add(self, placement: Placement) -> None:
        _insert(self._t.placements, placement.agent_id, placement)

    def get(self, agent_id: int) -> Placement | None:
        return self._t.placements.get(agent_id)

    def save(self, placement: Placement) -> None:
        _update(self._t.placements, placement.agent_id, placement)

    def remove(self, agent_id: int) -> None:
        self._t.placements.pop(agent_id, None)

    def for_agents(self, agent_ids: Iterable[int]) -> dict[int, Placement]:
        return {a: self._t.placements[a] for a in agent_ids if a in self._t.placements}


class MemoryMessages:
    def __init__(self, t: MemoryTables) -> None:
        self._t = t

    def add(self, message: Message) -> int:
        task_id = self._t.new_id("tasks")
        origin = task_id if message.is_summary else message.origin_task_id
        thread = message.thread_id or task_id
        self._t.messages[task_id] = replace(
            message, task_id=task_id, origin_task_id=origin, thread_id=thread
        )
        return task_id

    def get(self, task_id: int) -> Message | None:
        return self._t.messages.get(task_id)

    def save(self, message: Message) -> None:
        _update(self._t.messages, message.task_id, message)

    def pending_for(self, agent_id: int, limit: int | None = None) -> list[Message]:
        pending = sorted(
            (
                m
                for m in self._t.messages.values()
                if m.context_id == agent_id
                and not m.is_summary
                and m.state is MessageState.INPUT_REQUIRED
            ),
            key=lambda m: (m.status_timestamp, m.task_id),
            reverse=True,
        )
        return pending[:limit] if limit is not None else pending

    def activity(self, agent_ids: Sequence[int]) -> dict[int, Activity]:
        def newest(values: Iterable[datetime]) -> datetime | None:
            return max(values, default=None)

        ordinary = [m for m in self._t.messages.values() if m.type is MessageType.UNICAST]
        return {
            a: Activity(
                newest(m.created_at for m in ordinary if m.from_agent_id == a),
                newest(m.created_at for m in ordinary if m.context_id == a),
                newest(
                    m.status_timestamp
                    for m in ordinary
                    if m.context_id == a and m.state is MessageState.COMPLETED
                ),
            )
            for a in agent_ids
        }

    def pending_counts(self, agent_ids: Sequence[int]) -> dict[int, int]:
        counts: dict[int, int] = {}
        for m in self._t.messages.values():
            if (
                m.context_id in agent_ids
                and not m.is_summary
                and m.state is MessageState.INPUT_REQUIRED
            ):
                counts[m.context_id] = counts.get(m.context_id, 0) + 1
        return counts

    def timeline(self, fleet_id: int, limit: int, before: int | None = None) -> list[Message]:
        senders = {a.agent_id for a in self._t.agents.values() if a.fleet_id == fleet_id}
        found = [
            m
            for m in self._t.messages.values()
            if m.from_agent_id in senders
            and not m.is_summary
            and (before is None or m.task_id < before)
        ]
        return sorted(found, key=lambda m: (m.created_at, m.task_id), reverse=True)[:limit]

    def owned_by(self, agent_id: int, limit: int, before: int | None = None) -> list[Message]:
        return self._page(lambda m: m.context_id == agent_id, limit, before)

    def sent_by(self, agent_id: int, limit: int, before: int | None = None) -> list[Message]:
        return self._page(lambda m: m.from_agent_id == agent_id, limit, before)

    def _page(
        self, matches: Callable[[Message], bool], limit: int, before: int | None
    ) -> list[Message]:
        found = [
            m
            for m in self._t.messages.values()
            if matches(m) and not m.is_summary and (before is None or m.task_id < before)
        ]
        return sorted(found, key=lambda m: (m.created_at, m.task_id), reverse=True)[:limit]

    def search(self, fleet_id: int, query: SearchQuery, offset: int, limit: int) -> list[SearchHit]:
        """Every word of the query (its letters and digits, as a database's tokenizer reads
        them) among the body's words, any case; more occurrences rank higher."""
        words = _words(query.text)
        hits = []
        for m in self._t.messages.values():
            owner = self._t.agents.get(m.context_id)
            body = _words(m.text)
            if (
                owner is None
                or owner.fleet_id != fleet_id
                or m.is_summary
                or not words
                or not set(words) <= set(body)
                or (query.from_agent_id is not None and m.from_agent_id != query.from_agent_id)
                or (query.to_agent_id is not None and m.to_agent_id != query.to_agent_id)
                or (query.since is not None and m.created_at < query.since)
            ):
                continue
            score = float(sum(body.count(w) for w in words))
            hits.append(SearchHit(m, score, marked(m.text, words)))
        hits.sort(key=lambda h: (-h.score, -h.message.task_id))
        return hits[offset : offset + limit]

    def thread(self, thread_id: int) -> list[Message]:
        return sorted(
            (m for m in self._t.messages.values() if m.thread_id == thread_id),
            key=lambda m: m.task_id,
        )

    def broadcast_copies(self, summary: Message) -> list[Message]:
        found = [
            m
            for m in self._t.messages.values()
            if m.origin_task_id == summary.task_id
            and m.from_agent_id == summary.from_agent_id
            and not m.is_summary
        ]
        return sorted(found, key=lambda m: m.task_id)

    def conversation_mark(self, fleet_id: int) -> ConversationMark:
        owners = {a.agent_id for a in self._t.agents.values() if a.fleet_id == fleet_id}
        owned = [m for m in self._t.messages.values() if m.context_id in owners]
        theirs = [d for d in self._t.deliveries.values() if d.recipient_agent_id in owners]
        return ConversationMark(
            max((m.task_id for m in owned), default=None),
            max((m.status_timestamp for m in owned), default=None),
            sum(1 for m in owned if m.state is MessageState.INPUT_REQUIRED),
            sum(1 for d in theirs if d.attempted_at is not None),
            sum(1 for d in theirs if d.confirmed_at is not None),
        )


class MemoryDeliveries:
    def __init__(self, t: MemoryTables) -> None:
        self._t = t

    def add(self, delivery: Delivery) -> None:
        key = (delivery.task_id, delivery.recipient_agent_id, delivery.attempt)
        _insert(self._t.deliveries, key, delivery)

    def get(self, task_id: int, recipient_agent_id: int) -> Delivery | None:
        attempts = [
            d
            for (t, r, _), d in self._t.deliveries.items()
            if (t, r) == (task_id, recipient_agent_id)
        ]
        return max(attempts, key=lambda d: d.attempt, default=None)

    def save(self, delivery: Delivery) -> None:
        key = (delivery.task_id, delivery.recipient_agent_id, delivery.attempt)
        _update(self._t.deliveries, key, delivery)

    def confirm(self, recipient_agent_id: int, task_ids: Sequence[int], at: datetime) -> int:
        wanted = set(task_ids)
        due = [
            key
            for key, d in self._t.deliveries.items()
            if d.recipient_agent_id == recipient_agent_id
            and d.task_id in wanted
            and d.state is DeliveryState.SENT
            and d.confirmed_at is None
        ]
        for key in due:
            self._t.deliveries[key] = replace(self._t.deliveries[key], confirmed_at=at)
        return len(due)

    def for_task(self, task_id: int) -> list[Delivery]:
        return sorted(
            (d for (t, _, _), d in self._t.deliveries.items() if t == task_id),
            key=lambda d: (d.recipient_agent_id, d.attempt),
        )

    def for_tasks(self, task_ids: Sequence[int]) -> list[Delivery]:
        wanted = set(task_ids)
        found = [d for (t, _, _), d in self._t.deliveries.items() if t in wanted]
        return sorted(found, key=lambda d: d.attempt)

    def announced_untaken(self, recipient_agent_id: int, since: datetime) -> list[int]:
        unread = {
            task
            for task, m in self._t.messages.items()
            if m.context_id == recipient_agent_id and m.state is MessageState.INPUT_REQUIRED
        }
        return sorted(
            {
                d.task_id
                for d in self._t.deliveries.values()
                if d.recipient_agent_id == recipient_agent_id
                and d.state is DeliveryState.SENT
                and d.confirmed_at is None
                and d.attempted_at is not None
                and d.attempted_at >= since
                and d.task_id in unread
            }
        )

    def count_pending_since(self, before: datetime) -> int:
        return sum(
            1
            for d in self._t.deliveries.values()
            if d.state is DeliveryState.PENDING and d.created_at < before
        )

    def queued_for(self, recipient_agent_id: int) -> list[Delivery]:
        return sorted(
            (
                d
                for d in self._t.deliveries.values()
                if d.state is DeliveryState.PENDING and d.recipient_agent_id == recipient_agent_id
            ),
            key=lambda d: (d.task_id, d.attempt),
        )

    def stranded(self, recipient_agent_ids: Iterable[int], before: datetime) -> list[int]:
        wanted = set(recipient_agent_ids)
        return sorted(
            {
                d.recipient_agent_id
                for d in self._t.deliveries.values()
                if d.state is DeliveryState.PENDING
                and d.created_at < before
                and d.recipient_agent_id in wanted
            }
        )


class MemoryMonitor:
    def __init__(self, t: MemoryTables) -> None:
        self._t = t

    def enroll(self, schedule: MonitorSchedule) -> None:
        _insert(self._t.schedules, schedule.agent_id, schedule)

    def get(self, agent_id: int) -> MonitorSchedule | None:
        return self._t.schedules.get(agent_id)

    def save(self, schedule: MonitorSchedule) -> None:
        _update(self._t.schedules, schedule.agent_id, schedule)

    def unenroll(self, agent_id: int) -> None:
        self._t.schedules.pop(agent_id, None)

    def for_agents(self, agent_ids: Iterable[int]) -> dict[int, MonitorSchedule]:
        return {a: self._t.schedules[a] for a in agent_ids if a in self._t.schedules}

    def record_progress(self, schedules: Sequence[MonitorSchedule]) -> None:
        for progress in schedules:
            current = self._t.schedules.get(progress.agent_id)
            if current is not None:
                self._t.schedules[progress.agent_id] = replace(
                    current,
                    last_ping_at=progress.last_ping_at,
                    last_stall_check_at=progress.last_stall_check_at,
                    last_native_status=progress.last_native_status,
                )

    def runtime(self, fleet_id: int) -> MonitorRuntime | None:
        return self._t.runtimes.get(fleet_id)

    def save_runtime(self, runtime: MonitorRuntime) -> None:
        self._t.runtimes[runtime.fleet_id] = runtime

    def heartbeat(self, fleet_id: int, pid: int, host: str, at: datetime) -> bool:
        runtime = self._t.runtimes.get(fleet_id)
        if runtime is None or not runtime.owned_by(pid, host):
            return False
        self._t.runtimes[fleet_id] = replace(runtime, last_tick_at=at)
        return True

    def remove_runtime(self, fleet_id: int) -> None:
        self._t.runtimes.pop(fleet_id, None)


class MemoryInstalls:
    def __init__(self, t: MemoryTables) -> None:
        self._t = t

    def list(self) -> list[SkillInstall]:
        return [self._t.installs[k] for k in sorted(self._t.installs)]

    def record(self, install: SkillInstall) -> None:
        self._t.installs[install.coding_agent] = install


class MemoryRelays:
    def __init__(self, t: MemoryTables) -> None:
        self._t = t

    def beat(self, beat: RelayBeat) -> None:
        self._t.beats[beat.host] = beat

    def beats(self) -> list[RelayBeat]:
        return [self._t.beats[k] for k in sorted(self._t.beats)]

    def leave(self, host: str, pid: int) -> None:
        beat = self._t.beats.get(host)
        if beat is not None and beat.pid == pid:
            del self._t.beats[host]

    def ask(self, request: RelayRequest) -> int:
        request_id = self._t.new_id("relay_requests")
        _insert(self._t.requests, request_id, replace(request, request_id=request_id))
        return request_id

    def request(self, request_id: int) -> RelayRequest | None:
        return self._t.requests.get(request_id)

    def pending(self, host: str) -> list[RelayRequest]:
        return [
            r
            for _, r in sorted(self._t.requests.items())
            if r.host == host and r.state is RequestState.PENDING
        ]

    def settle(self, request: RelayRequest) -> None:
        _update(self._t.requests, request.request_id, request)

    def wake(self, host: str) -> None:
        self._t.wakes.append(host)

    def report(self, host: str, reports: Sequence[PaneReport]) -> None:
        for agent_id in [a for a, r in self._t.reports.items() if r.host == host]:
            del self._t.reports[agent_id]
        self._t.reports.update((r.agent_id, r) for r in reports)

    def reports(self, agent_ids: Iterable[int]) -> dict[int, PaneReport]:
        return {a: self._t.reports[a] for a in agent_ids if a in self._t.reports}


class MemoryUnitOfWork(UnitOfWork):
    def __init__(self, owner: MemoryStore, *, write: bool) -> None:
        self._owner = owner
        self._write = write
        self._tables: MemoryTables | None = None

    def __enter__(self) -> MemoryUnitOfWork:
        if self._write:
            self._owner.write_lock.acquire()
        tables = copy.deepcopy(self._owner.tables)
        self._tables = tables
        self.fleets = MemoryFleets(tables)
        self.agents = MemoryAgents(tables)
        self.placements = MemoryPlacements(tables)
        self.messages = MemoryMessages(tables)
        self.deliveries = MemoryDeliveries(tables)
        self.monitor = MemoryMonitor(tables)
        self.installs = MemoryInstalls(tables)
        self.relays = MemoryRelays(tables)
        return self

    def commit(self) -> None:
        assert self._tables is not None, "commit() outside the unit of work"
        if not self._write:
            raise RuntimeError("commit() on a read-only unit of work")
        refusal = self._owner.refusal()
        if refusal is not None and not refusal.applied:
            raise refusal.error
        # a copy: writes after commit() belong to the next transaction, published only by
        # another commit, as a database connection begins a new one
        self._owner.tables = copy.deepcopy(self._tables)
        self._owner.commits += 1
        if refusal is not None:
            raise refusal.error

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._tables = None
        if self._write:
            self._owner.write_lock.release()


@dataclass(frozen=True)
class CommitRefusal:
    """How commits fail: `error` raised, after the commit was `applied` (an answer lost with
    the connection) or instead of it (a full disk); `times`: how many (None: all)."""

    error: CafleetError
    applied: bool = False
    times: int | None = None


class MemoryStore(UnitOfWorkFactory):
    """The fake database: call it like a unit-of-work factory."""

    def __init__(self) -> None:
        self.tables = MemoryTables()
        self.write_lock = threading.Lock()
        self.commits = 0
        self._refusal: CommitRefusal | None = None
        self._commits_allowed = 0

    def __call__(self, *, write: bool = False) -> MemoryUnitOfWork:
        return MemoryUnitOfWork(self, write=write)

    def refuse_commits(self, refusal: CommitRefusal | None, after: int = 0) -> None:
        """Commits after the next `after` fail as `refusal` says (None: they work again)."""
        self._refusal, self._commits_allowed = refusal, after

    def refusal(self) -> CommitRefusal | None:
        """How the commit being made fails (None: it works); called once per commit."""
        refusal = self._refusal
        if refusal is None or self._commits_allowed > 0:
            self._commits_allowed -= 1
            return None
        if refusal.times is not None:
            left = refusal.times - 1
            self._refusal = replace(refusal, times=left) if left > 0 else None
        return refusal


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())

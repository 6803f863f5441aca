"""Messages in memory, with a word search standing in for the database's full-text index."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from datetime import datetime

from cafleet.adapters.fake.store_tables import MemoryTables, update_row
from cafleet.application.ports.store import Activity, ConversationMark
from cafleet.domain.message import Message, MessageState, MessageType
from cafleet.domain.search import SearchHit, SearchQuery, marked


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
        update_row(self._t.messages, message.task_id, message)

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


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())

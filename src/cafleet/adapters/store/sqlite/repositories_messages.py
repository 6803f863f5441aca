"""Messages in plain SQL, with SQLite's FTS5 search of them."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from cafleet.adapters.store import mapping as rows
from cafleet.adapters.store.sqlite.repositories import OPEN, DirectRepository
from cafleet.adapters.store.sqlite.search import query_error, search_statement
from cafleet.adapters.store.sqlite.statements import select_all
from cafleet.application.ports.store import Activity, ConversationMark, MessageRepository
from cafleet.domain.message import Message, MessageState, MessageType
from cafleet.domain.search import SearchHit, SearchQuery

SUMMARY = MessageType.BROADCAST_SUMMARY.value


class DirectMessages(DirectRepository, MessageRepository):
    def add(self, message: Message) -> int:
        task_id = self._insert("tasks", rows.message_values(message))
        own = rows.own_id_columns(message)
        if own:
            self._update("tasks", dict.fromkeys(own, task_id), "task_id = ?", task_id)
        return task_id

    def get(self, task_id: int) -> Message | None:
        row = self._first(f"{select_all('tasks')} WHERE task_id = ?", [task_id])
        return None if row is None else rows.message_from(row)

    def save(self, message: Message) -> None:
        self._update("tasks", rows.message_values(message), "task_id = ?", message.task_id)

    def pending_for(self, agent_id: int, limit: int | None = None) -> list[Message]:
        sql = (
            f"{select_all('tasks')} WHERE context_id = ? AND status_state = ? AND type != ?"
            " ORDER BY status_timestamp DESC, task_id DESC LIMIT ?"
        )
        found = self._all(sql, [agent_id, OPEN, SUMMARY, -1 if limit is None else limit])
        return [rows.message_from(r) for r in found]

    def activity(self, agent_ids: Sequence[int]) -> dict[int, Activity]:
        if not agent_ids:
            return {}
        sent = self._newest("from_agent_id", "created_at", agent_ids)
        received = self._newest("context_id", "created_at", agent_ids)
        acked = self._newest(
            "context_id", "status_timestamp", agent_ids, MessageState.COMPLETED.value
        )
        return {
            a: Activity(rows.dt(sent.get(a)), rows.dt(received.get(a)), rows.dt(acked.get(a)))
            for a in agent_ids
        }

    def _newest(
        self, agent: str, stamp: str, agent_ids: Sequence[int], state: str | None = None
    ) -> dict[int, str]:
        """The newest stamp per agent over ordinary messages (summaries excluded)."""
        condition, params = (
            ("", [SUMMARY]) if state is None else (" AND status_state = ?", [SUMMARY, state])
        )
        sql = (
            f"SELECT {agent} AS agent, max({stamp}) AS newest FROM tasks"
            f" WHERE {agent} IN ({{ids}}) AND type != ?{condition} GROUP BY {agent}"
        )
        return {int(r["agent"]): r["newest"] for r in self._grouped(sql, agent_ids, *params)}

    def pending_counts(self, agent_ids: Sequence[int]) -> dict[int, int]:
        sql = (
            "SELECT context_id, count(*) AS n FROM tasks"
            " WHERE context_id IN ({ids}) AND status_state = ? AND type != ?"
            " GROUP BY context_id"
        )
        return {
            int(r["context_id"]): int(r["n"]) for r in self._grouped(sql, agent_ids, OPEN, SUMMARY)
        }

    def timeline(self, fleet_id: int, limit: int, before: int | None = None) -> list[Message]:
        senders = "from_agent_id IN (SELECT agent_id FROM agents WHERE fleet_id = ?)"
        return self._page(senders, [fleet_id], limit, before)

    def owned_by(self, agent_id: int, limit: int, before: int | None = None) -> list[Message]:
        return self._page("context_id = ?", [agent_id], limit, before)

    def sent_by(self, agent_id: int, limit: int, before: int | None = None) -> list[Message]:
        return self._page("from_agent_id = ?", [agent_id], limit, before)

    def _page(
        self, condition: str, params: list[Any], limit: int, before: int | None
    ) -> list[Message]:
        """Ordinary messages matching condition, newest first (id order is time order)."""
        sql = f"{select_all('tasks')} WHERE {condition} AND type != ?"
        bound = [*params, SUMMARY]
        if before is not None:
            sql, bound = f"{sql} AND task_id < ?", [*bound, before]
        sql = f"{sql} ORDER BY created_at DESC, task_id DESC LIMIT ?"
        return [rows.message_from(r) for r in self._all(sql, [*bound, limit])]

    def broadcast_copies(self, summary: Message) -> list[Message]:
        sql = (  # the sender narrows it to its index; origin alone has none
            f"{select_all('tasks')} WHERE from_agent_id = ? AND origin_task_id = ?"
            " AND type != ? ORDER BY task_id"
        )
        found = self._all(sql, [summary.from_agent_id, summary.task_id, SUMMARY])
        return [rows.message_from(r) for r in found]

    def search(self, fleet_id: int, query: SearchQuery, offset: int, limit: int) -> list[SearchHit]:
        since = None if query.since is None else rows.ts(query.since)
        sql, params = search_statement(fleet_id, query, since, offset, limit)
        try:
            found = self._all(sql, params)
        except sqlite3.OperationalError as exc:
            if (error := query_error(query, exc)) is not None:
                raise error from None
            raise
        return [rows.hit_from(r) for r in found]

    def thread(self, thread_id: int) -> list[Message]:
        sql = f"{select_all('tasks')} WHERE thread_id = ? ORDER BY task_id"
        return [rows.message_from(r) for r in self._all(sql, [thread_id])]

    def conversation_mark(self, fleet_id: int) -> ConversationMark:
        owners = "IN (SELECT agent_id FROM agents WHERE fleet_id = ?)"
        messages = self._first(
            "SELECT max(task_id) AS last_task, max(status_timestamp) AS last_change,"
            " count(CASE WHEN status_state = ? THEN 1 END) AS open_count"
            f" FROM tasks WHERE context_id {owners}",
            [OPEN, fleet_id],
        )
        ledger = self._first(
            "SELECT count(attempted_at) AS settled, count(confirmed_at) AS confirmed"
            f" FROM deliveries WHERE recipient_agent_id {owners}",
            [fleet_id],
        )
        assert messages is not None and ledger is not None, "aggregates return one row"
        return ConversationMark(
            None if messages["last_task"] is None else int(messages["last_task"]),
            rows.dt(messages["last_change"]),
            int(messages["open_count"]),
            int(ledger["settled"]),
            int(ledger["confirmed"]),
        )

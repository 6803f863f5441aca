"""Messages over SQLAlchemy Core, and the engine's full-text search of them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from sqlalchemy import ColumnElement, Connection, func, insert, select, update
from sqlalchemy.exc import DBAPIError

from cafleet.adapters.store import mapping as rows
from cafleet.adapters.store.sqlalchemy.repositories import new_id
from cafleet.adapters.store.sqlalchemy.tables import agents, deliveries, tasks
from cafleet.adapters.store.sqlite.search import query_error, search_statement
from cafleet.application.ports.store import Activity, ConversationMark
from cafleet.domain.message import Message, MessageState, MessageType
from cafleet.domain.search import SearchHit, SearchQuery


class SqlMessages:
    def __init__(self, conn: Connection, search: MessageSearch | None = None) -> None:
        self._c = conn
        self._search = search or fts5_search  # the engine's full-text search (SqlEngineRules)

    def add(self, message: Message) -> int:
        result = self._c.execute(insert(tasks).values(rows.message_values(message)))
        task_id = new_id(result)
        own = rows.own_id_columns(message)
        if own:
            self._c.execute(
                update(tasks).where(tasks.c.task_id == task_id).values(dict.fromkeys(own, task_id))
            )
        return task_id

    def get(self, task_id: int) -> Message | None:
        row = self._c.execute(select(tasks).where(tasks.c.task_id == task_id)).mappings().first()
        return None if row is None else rows.message_from(row)

    def save(self, message: Message) -> None:
        self._c.execute(
            update(tasks)
            .where(tasks.c.task_id == message.task_id)
            .values(rows.message_values(message))
        )

    def pending_for(self, agent_id: int, limit: int | None = None) -> list[Message]:
        query = (
            select(tasks)
            .where(
                tasks.c.context_id == agent_id,
                tasks.c.status_state == MessageState.INPUT_REQUIRED.value,
                tasks.c.type != MessageType.BROADCAST_SUMMARY.value,
            )
            .order_by(tasks.c.status_timestamp.desc(), tasks.c.task_id.desc())
            .limit(limit)
        )
        return [rows.message_from(r) for r in self._c.execute(query).mappings()]

    def activity(self, agent_ids: Sequence[int]) -> dict[int, Activity]:
        if not agent_ids:
            return {}
        sent = self._newest(tasks.c.from_agent_id, tasks.c.created_at, agent_ids)
        received = self._newest(tasks.c.context_id, tasks.c.created_at, agent_ids)
        acked = self._newest(
            tasks.c.context_id,
            tasks.c.status_timestamp,
            agent_ids,
            tasks.c.status_state == MessageState.COMPLETED.value,
        )
        return {
            a: Activity(rows.dt(sent.get(a)), rows.dt(received.get(a)), rows.dt(acked.get(a)))
            for a in agent_ids
        }

    def _newest(
        self,
        agent: ColumnElement[Any],
        stamp: ColumnElement[Any],
        agent_ids: Sequence[int],
        *conditions: ColumnElement[bool],
    ) -> dict[int, str]:
        """The newest stamp per agent over ordinary messages (summaries excluded)."""
        query = (
            select(agent, func.max(stamp))
            .where(
                agent.in_(agent_ids),
                tasks.c.type != MessageType.BROADCAST_SUMMARY.value,
                *conditions,
            )
            .group_by(agent)
        )
        return {int(agent_id): newest for agent_id, newest in self._c.execute(query)}

    def pending_counts(self, agent_ids: Sequence[int]) -> dict[int, int]:
        if not agent_ids:
            return {}
        query = (
            select(tasks.c.context_id, func.count())
            .where(
                tasks.c.context_id.in_(agent_ids),
                tasks.c.status_state == MessageState.INPUT_REQUIRED.value,
                tasks.c.type != MessageType.BROADCAST_SUMMARY.value,
            )
            .group_by(tasks.c.context_id)
        )
        return {int(agent): int(n) for agent, n in self._c.execute(query)}

    def timeline(self, fleet_id: int, limit: int, before: int | None = None) -> list[Message]:
        senders = select(agents.c.agent_id).where(agents.c.fleet_id == fleet_id)
        query = select(tasks).where(
            tasks.c.from_agent_id.in_(senders),
            tasks.c.type != MessageType.BROADCAST_SUMMARY.value,
        )
        if before is not None:
            query = query.where(tasks.c.task_id < before)
        query = query.order_by(tasks.c.created_at.desc(), tasks.c.task_id.desc()).limit(limit)
        return [rows.message_from(r) for r in self._c.execute(query).mappings()]

    def owned_by(self, agent_id: int, limit: int, before: int | None = None) -> list[Message]:
        return self._page(tasks.c.context_id == agent_id, limit, before)

    def sent_by(self, agent_id: int, limit: int, before: int | None = None) -> list[Message]:
        return self._page(tasks.c.from_agent_id == agent_id, limit, before)

    def _page(
        self, condition: ColumnElement[bool], limit: int, before: int | None
    ) -> list[Message]:
        """Ordinary messages matching condition, newest first (id order is time order)."""
        query = select(tasks).where(condition, tasks.c.type != MessageType.BROADCAST_SUMMARY.value)
        if before is not None:
            query = query.where(tasks.c.task_id < before)
        query = query.order_by(tasks.c.created_at.desc(), tasks.c.task_id.desc()).limit(limit)
        return [rows.message_from(r) for r in self._c.execute(query).mappings()]

    def broadcast_copies(self, summary: Message) -> list[Message]:
        query = (  # the sender narrows it to its index; origin alone has none
            select(tasks)
            .where(
                tasks.c.from_agent_id == summary.from_agent_id,
                tasks.c.origin_task_id == summary.task_id,
                tasks.c.type != MessageType.BROADCAST_SUMMARY.value,
            )
            .order_by(tasks.c.task_id)
        )
        return [rows.message_from(r) for r in self._c.execute(query).mappings()]

    def search(self, fleet_id: int, query: SearchQuery, offset: int, limit: int) -> list[SearchHit]:
        return self._search(self._c, fleet_id, query, offset, limit)

    def thread(self, thread_id: int) -> list[Message]:
        query = select(tasks).where(tasks.c.thread_id == thread_id).order_by(tasks.c.task_id)
        return [rows.message_from(r) for r in self._c.execute(query).mappings()]

    def conversation_mark(self, fleet_id: int) -> ConversationMark:
        owners = select(agents.c.agent_id).where(agents.c.fleet_id == fleet_id)
        open_state = tasks.c.status_state == MessageState.INPUT_REQUIRED.value
        message_row = self._c.execute(
            select(
                func.max(tasks.c.task_id),
                func.max(tasks.c.status_timestamp),
                func.count().filter(open_state),
            ).where(tasks.c.context_id.in_(owners))
        ).one()
        settled, confirmed = self._c.execute(
            select(
                func.count(deliveries.c.attempted_at), func.count(deliveries.c.confirmed_at)
            ).where(deliveries.c.recipient_agent_id.in_(owners))
        ).one()
        last_task_id, last_change, open_count = message_row
        return ConversationMark(
            None if last_task_id is None else int(last_task_id),
            rows.dt(last_change),
            int(open_count),
            int(settled),
            int(confirmed),
        )


MessageSearch = Callable[[Connection, int, SearchQuery, int, int], list[SearchHit]]


def fts5_search(
    conn: Connection, fleet_id: int, query: SearchQuery, offset: int, limit: int
) -> list[SearchHit]:
    """SQLite's FTS5 index, with the direct adapter's statement
    (adapters/store/sqlite/search.py)."""
    since = None if query.since is None else rows.ts(query.since)
    sql, params = search_statement(fleet_id, query, since, offset, limit)
    try:
        found = conn.exec_driver_sql(sql, tuple(params)).mappings()
    except DBAPIError as exc:
        if (error := query_error(query, exc)) is not None:
            raise error from None
        raise
    return [rows.hit_from(r) for r in found]

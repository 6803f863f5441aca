"""Deliveries (the ledger of each message's attempts) over SQLAlchemy Core."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime

from sqlalchemy import Connection, func, insert, select, update

from cafleet.adapters.store import mapping as rows
from cafleet.adapters.store.sqlalchemy.repositories import IN_CHUNK
from cafleet.adapters.store.sqlalchemy.tables import deliveries, tasks
from cafleet.domain.delivery import Delivery, DeliveryState
from cafleet.domain.message import MessageState


class SqlDeliveries:
    def __init__(self, conn: Connection) -> None:
        self._c = conn

    def add(self, delivery: Delivery) -> None:
        self._c.execute(insert(deliveries).values(rows.delivery_values(delivery)))

    def get(self, task_id: int, recipient_agent_id: int) -> Delivery | None:
        row = (
            self._c.execute(
                select(deliveries)
                .where(
                    deliveries.c.task_id == task_id,
                    deliveries.c.recipient_agent_id == recipient_agent_id,
                )
                .order_by(deliveries.c.attempt.desc())
            )
            .mappings()
            .first()
        )
        return None if row is None else rows.delivery_from(row)

    def save(self, delivery: Delivery) -> None:
        self._c.execute(
            update(deliveries)
            .where(
                deliveries.c.task_id == delivery.task_id,
                deliveries.c.recipient_agent_id == delivery.recipient_agent_id,
                deliveries.c.attempt == delivery.attempt,
            )
            .values(rows.delivery_values(delivery))
        )

    def confirm(self, recipient_agent_id: int, task_ids: Sequence[int], at: datetime) -> int:
        query = (
            update(deliveries)
            .where(
                deliveries.c.recipient_agent_id == recipient_agent_id,
                deliveries.c.task_id.in_(list(task_ids)),
                deliveries.c.state == DeliveryState.SENT.value,
                deliveries.c.confirmed_at.is_(None),
            )
            .values(confirmed_at=rows.ts(at))
        )
        return int(self._c.execute(query).rowcount)

    def for_task(self, task_id: int) -> list[Delivery]:
        query = (
            select(deliveries)
            .where(deliveries.c.task_id == task_id)
            .order_by(deliveries.c.recipient_agent_id, deliveries.c.attempt)
        )
        return [rows.delivery_from(r) for r in self._c.execute(query).mappings()]

    def for_tasks(self, task_ids: Sequence[int]) -> list[Delivery]:
        found: list[Delivery] = []
        ids = list(dict.fromkeys(task_ids))  # an id in two chunks would give its rows twice
        for start in range(0, len(ids), IN_CHUNK):  # stay far below SQLite's variable limit
            query = select(deliveries).where(
                deliveries.c.task_id.in_(ids[start : start + IN_CHUNK])
            )
            found.extend(rows.delivery_from(r) for r in self._c.execute(query).mappings())
        return sorted(found, key=lambda d: d.attempt)  # across chunks too

    def announced_untaken(self, recipient_agent_id: int, since: datetime) -> list[int]:
        query = (
            select(deliveries.c.task_id)
            .join(tasks, tasks.c.task_id == deliveries.c.task_id)
            .where(  # the recipient's unread messages (indexed) first, then their ledger
                tasks.c.context_id == recipient_agent_id,
                tasks.c.status_state == MessageState.INPUT_REQUIRED.value,
                deliveries.c.recipient_agent_id == recipient_agent_id,
                deliveries.c.state == DeliveryState.SENT.value,
                deliveries.c.confirmed_at.is_(None),
                deliveries.c.attempted_at >= rows.ts(since),
            )
            .distinct()
            .order_by(deliveries.c.task_id)
        )
        return [int(task) for task in self._c.execute(query).scalars()]

    def count_pending_since(self, before: datetime) -> int:
        query = (
            select(func.count())
            .select_from(deliveries)
            .where(
                deliveries.c.state == DeliveryState.PENDING.value,
                deliveries.c.created_at < rows.ts(before),
            )
        )
        return int(self._c.execute(query).scalar_one())

    def queued_for(self, recipient_agent_id: int) -> list[Delivery]:
        query = (
            select(deliveries)
            .where(  # pending rows are few: the (state, created_at) index finds them
                deliveries.c.state == DeliveryState.PENDING.value,
                deliveries.c.recipient_agent_id == recipient_agent_id,
            )
            .order_by(deliveries.c.task_id, deliveries.c.attempt)
        )
        return [rows.delivery_from(r) for r in self._c.execute(query).mappings()]

    def stranded(self, recipient_agent_ids: Iterable[int], before: datetime) -> list[int]:
        query = (
            select(deliveries.c.recipient_agent_id)
            .distinct()
            .where(
                deliveries.c.state == DeliveryState.PENDING.value,
                deliveries.c.created_at < rows.ts(before),
                deliveries.c.recipient_agent_id.in_(list(recipient_agent_ids)),
            )
            .order_by(deliveries.c.recipient_agent_id)
        )
        return [int(agent) for agent in self._c.execute(query).scalars()]

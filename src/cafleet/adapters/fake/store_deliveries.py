"""Deliveries (the ledger of each message's attempts) in memory."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from datetime import datetime

from cafleet.adapters.fake.store_tables import MemoryTables, insert_row, update_row
from cafleet.domain.delivery import Delivery, DeliveryState
from cafleet.domain.message import MessageState


class MemoryDeliveries:
    def __init__(self, t: MemoryTables) -> None:
        self._t = t

    def add(self, delivery: Delivery) -> None:
        key = (delivery.task_id, delivery.recipient_agent_id, delivery.attempt)
        insert_row(self._t.deliveries, key, delivery)

    def get(self, task_id: int, recipient_agent_id: int) -> Delivery | None:
        attempts = [
            d
            for (t, r, _), d in self._t.deliveries.items()
            if (t, r) == (task_id, recipient_agent_id)
        ]
        return max(attempts, key=lambda d: d.attempt, default=None)

    def save(self, delivery: Delivery) -> None:
        key = (delivery.task_id, delivery.recipient_agent_id, delivery.attempt)
        update_row(self._t.deliveries, key, delivery)

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

"""Deliveries (the ledger of each message's attempts) in plain SQL."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime

from cafleet.adapters.store import mapping as rows
from cafleet.adapters.store.sqlite.repositories import OPEN, DirectRepository
from cafleet.adapters.store.sqlite.statements import chunks, insert, marks, select_all
from cafleet.application.ports.store import DeliveryRepository
from cafleet.domain.delivery import Delivery, DeliveryState

PENDING = DeliveryState.PENDING.value
SENT = DeliveryState.SENT.value


class DirectDeliveries(DirectRepository, DeliveryRepository):
    def add(self, delivery: Delivery) -> None:
        self._run(*insert("deliveries", rows.delivery_values(delivery)))

    def get(self, task_id: int, recipient_agent_id: int) -> Delivery | None:
        row = self._first(
            f"{select_all('deliveries')} WHERE task_id = ? AND recipient_agent_id = ?"
            " ORDER BY attempt DESC",
            [task_id, recipient_agent_id],
        )
        return None if row is None else rows.delivery_from(row)

    def save(self, delivery: Delivery) -> None:
        self._update(
            "deliveries",
            rows.delivery_values(delivery),
            "task_id = ? AND recipient_agent_id = ? AND attempt = ?",
            delivery.task_id,
            delivery.recipient_agent_id,
            delivery.attempt,
        )

    def confirm(self, recipient_agent_id: int, task_ids: Sequence[int], at: datetime) -> int:
        changed = 0
        for chunk in chunks(list(task_ids)):
            changed += self._run(
                "UPDATE deliveries SET confirmed_at = ? WHERE recipient_agent_id = ?"
                f" AND task_id IN ({marks(len(chunk))}) AND state = ? AND confirmed_at IS NULL",
                [rows.ts(at), recipient_agent_id, *chunk, SENT],
            ).rowcount
        return changed

    def for_task(self, task_id: int) -> list[Delivery]:
        sql = f"{select_all('deliveries')} WHERE task_id = ? ORDER BY recipient_agent_id, attempt"
        return [rows.delivery_from(r) for r in self._all(sql, [task_id])]

    def for_tasks(self, task_ids: Sequence[int]) -> list[Delivery]:
        sql = f"{select_all('deliveries')} WHERE task_id IN ({{ids}})"
        unique = list(dict.fromkeys(task_ids))  # an id in two chunks would give its rows twice
        found = [rows.delivery_from(r) for r in self._grouped(sql, unique)]
        return sorted(found, key=lambda d: d.attempt)  # across chunks too

    def announced_untaken(self, recipient_agent_id: int, since: datetime) -> list[int]:
        sql = (  # the recipient's unread messages (indexed) first, then their ledger
            "SELECT DISTINCT deliveries.task_id AS task_id FROM deliveries"
            " JOIN tasks ON tasks.task_id = deliveries.task_id"
            " WHERE tasks.context_id = ? AND tasks.status_state = ?"
            " AND deliveries.recipient_agent_id = ? AND deliveries.state = ?"
            " AND deliveries.confirmed_at IS NULL AND deliveries.attempted_at >= ?"
            " ORDER BY deliveries.task_id"
        )
        params = [recipient_agent_id, OPEN, recipient_agent_id, SENT, rows.ts(since)]
        return [int(r["task_id"]) for r in self._all(sql, params)]

    def count_pending_since(self, before: datetime) -> int:
        row = self._first(
            "SELECT count(*) AS n FROM deliveries WHERE state = ? AND created_at < ?",
            [PENDING, rows.ts(before)],
        )
        return 0 if row is None else int(row["n"])

    def queued_for(self, recipient_agent_id: int) -> list[Delivery]:
        sql = (  # pending rows are few: the (state, created_at) index finds them
            f"{select_all('deliveries')} WHERE state = ? AND recipient_agent_id = ?"
            " ORDER BY task_id, attempt"
        )
        return [rows.delivery_from(r) for r in self._all(sql, [PENDING, recipient_agent_id])]

    def stranded(self, recipient_agent_ids: Iterable[int], before: datetime) -> list[int]:
        sql = (
            "SELECT DISTINCT recipient_agent_id FROM deliveries"
            " WHERE recipient_agent_id IN ({ids}) AND state = ? AND created_at < ?"
        )
        found = self._grouped(sql, list(recipient_agent_ids), PENDING, rows.ts(before))
        return sorted(int(r["recipient_agent_id"]) for r in found)

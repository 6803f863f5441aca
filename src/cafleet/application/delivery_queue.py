"""The per-pane delivery queue: every pending ledger row of a recipient is its queue.

A sender stores its pending row first (the send transaction), then takes the queue lock of
the recipient's pane and delivers every row queued there, oldest task first, its own among
them. A sender that cannot take the lock within a moment leaves its row to the holder and
reports it `pending` (`queued`): the holder reads the queue only after taking the lock, and
reads it again after releasing it, so a row stored while the holder finished is never
stranded. Each row is marked as begun (`attempted_at`) before it is announced; a pending row
with that mark is one whose deliverer died, and it is settled `failed` (interrupted) rather
than typed a second time.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from cafleet.application.keystrokes import lock_key
from cafleet.application.ports import (
    Announcement,
    Clock,
    Notifier,
    PaneLocks,
    PushTarget,
    UnitOfWorkFactory,
)
from cafleet.domain.delivery import (
    INTERRUPTED,
    JOIN_WINDOW_SECONDS,
    QUEUED,
    Delivery,
    DeliveryState,
    PushOutcome,
    SkipReason,
)
from cafleet.domain.placement import Placement

QUEUE_WAIT_SECONDS = 0.5  # how long a sender waits for the pane before leaving its row queued


def queue_key(target: PushTarget) -> str:
    """The queue lock of a pane: not its send lock, which the keystroke path takes inside."""
    return f"queue-{lock_key(target)}"


class DeliveryQueue:
    def __init__(
        self,
        uow: UnitOfWorkFactory,
        clock: Clock,
        notifier: Notifier,
        locks: PaneLocks,
        wait: float = QUEUE_WAIT_SECONDS,
    ) -> None:
        self._uow = uow
        self._clock = clock
        self._notifier = notifier
        self._locks = locks
        self._wait = wait

    def deliver(self, delivery: Delivery, target: PushTarget) -> Delivery:
        """Deliver the recipient's queue (this row among it) if the pane is free; the row
        as it stands then: settled, or pending with the note `queued`."""
        recipient = target.agent_id
        wait = self._wait
        while True:
            try:
                with self._locks.hold(queue_key(target), wait):
                    emptied = self.drain(recipient)
            except TimeoutError:
                break  # the holder reads the queue after taking the lock: the row is its now
            if not emptied or not self._has_queue(recipient):
                break
            wait = 0.0  # a row came as the lock was released: whoever holds it now takes it
        return self._row(delivery)

    def deliver_queued(self, target: PushTarget) -> None:
        """Deliver what is queued for this pane unless another process holds it (which then
        does): rows whose sender ended before it delivered them."""
        if self._has_queue(target.agent_id):
            try:
                with self._locks.hold(queue_key(target), 0.0):
                    self.drain(target.agent_id)
            except TimeoutError:
                pass

    def record(self, delivery: Delivery, outcome: PushOutcome) -> Delivery:
        """Store one row's outcome (the ladder's earlier attempts as rows of their own)."""
        with self._uow(write=True) as uow:
            first, *later = delivery.attempts_of(outcome, self._clock.now())
            uow.deliveries.save(first)
            for attempt in later:
                uow.deliveries.add(attempt)
            uow.commit()
        return later[-1] if later else first

    def drain(self, recipient: int) -> bool:
        """Under the pane's queue lock: deliver the queued rows in task order. False when it
        stopped with rows left for their senders (the member is still starting)."""
        while True:
            step = self._next(recipient)
            if step is None:
                return True
            row, announcement, outcome = step
            if outcome is None and announcement is None:
                return False
            if announcement is not None:
                outcome = self._announce(announcement)
            assert outcome is not None
            self.record(row, outcome)

    def _next(
        self, recipient: int
    ) -> tuple[Delivery, Announcement | None, PushOutcome | None] | None:
        """The queue's head, marked as begun, with what to announce or its outcome already;
        (row, None, None) when the member is starting; None when the queue is empty."""
        with self._uow(write=True) as uow:
            queued = uow.deliveries.queued_for(recipient)
            if not queued:
                return None
            row = queued[0]
            placement = uow.placements.get(recipient)
            message = uow.messages.get(row.task_id)
            fixed = _fixed_outcome(row, placement)
            if fixed is not None or placement is None or message is None:
                return row, None, fixed or PushOutcome.skipped(SkipReason.NO_PLACEMENT)
            if placement.is_starting:
                return row, None, None
            untaken = uow.deliveries.announced_untaken(
                recipient, message.created_at - timedelta(seconds=JOIN_WINDOW_SECONDS)
            )
            started = row.started(self._clock.now())
            uow.deliveries.save(started)
            uow.commit()
        announcement = Announcement(
            message.task_id,
            message.from_agent_id,
            message.created_at,
            message.text,
            PushTarget.of(placement),
            tuple(task for task in untaken if task < message.task_id),
        )
        return started, announcement, None

    def _announce(self, announcement: Announcement) -> PushOutcome:
        try:
            return self._notifier.announce(announcement)
        except Exception as exc:  # a notifier bug must not lose the ledger record
            first_line = str(exc).splitlines()[0] if str(exc) else ""
            return PushOutcome.failed(f"{type(exc).__name__}: {first_line}")

    def _has_queue(self, recipient: int) -> bool:
        with self._uow() as uow:
            return bool(uow.deliveries.queued_for(recipient))

    def _row(self, delivery: Delivery) -> Delivery:
        with self._uow() as uow:
            row = uow.deliveries.get(delivery.task_id, delivery.recipient_agent_id) or delivery
        return replace(row, error=QUEUED) if row.state is DeliveryState.PENDING else row


def _fixed_outcome(row: Delivery, placement: Placement | None) -> PushOutcome | None:
    """An outcome known without announcing: begun by a process that ended, or no pane."""
    if row.interrupted:
        return PushOutcome.failed(INTERRUPTED, row.transport, row.pane_id)
    if placement is None:
        return PushOutcome.skipped(SkipReason.NO_PLACEMENT)
    if placement.is_pending:
        return PushOutcome.skipped(SkipReason.PENDING_PANE)
    return None

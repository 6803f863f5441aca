"""The per-pane delivery queue: every pending ledger row of a recipient is its queue.

A sender stores its pending row first (the send transaction), then takes the queue lock of
the recipient's pane and delivers the rows queued there, oldest task first, up to its own
(and at most a few: a row far down the queue is left like the others).
A sender that cannot take the lock within a moment leaves its row to the holder and reports
it `pending` (`queued`). Whoever releases the lock reads the queue again and, when rows are
left, hands them to a drainer in the background, which holds the lock until the queue is
empty: so no row is stranded, and no sender waits for other senders' messages to be typed.
Each row is marked as begun (`attempted_at`) before it is announced; a pending row with that
mark is one whose deliverer died, and it is settled `failed` (interrupted) rather than typed
a second time.

The store may fail after a message was stored (a full disk, a lost connection): a row whose
outcome could not be recorded stays as it was (queued if it was not begun; begun, so never
announced again, if it was), and the sender learns the outcome as known (`Delivered`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
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
from cafleet.domain.errors import CafleetError, Unavailable
from cafleet.domain.placement import Placement

QUEUE_WAIT_SECONDS = 0.5  # how long a sender waits for the pane before leaving its row queued
SENDER_ROWS = 3  # rows a sender types before leaving the rest (its own too, if behind) to a drainer


class OutcomeUnrecorded(Unavailable):
    """An attempt's outcome that the store refused to record (its error's message): `row` is
    the row as it would have been stored."""

    def __init__(self, row: Delivery, cause: CafleetError) -> None:
        super().__init__(cause.message)
        self.row = row


@dataclass(frozen=True)
class Delivered:
    """A sender's row after its delivery: as stored, or, when `unrecorded` (the store's error)
    is set, as known here. `rows_left`: rows are queued behind it for a drainer."""

    row: Delivery
    rows_left: bool = False
    unrecorded: str | None = None


def queued(row: Delivery) -> Delivery:
    """A pending row as a sender reports it: another delivery of the pane takes it."""
    return replace(row, error=QUEUED)


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

    def deliver(self, delivery: Delivery, target: PushTarget) -> Delivered:
        """Deliver the recipient's queue up to this row if the pane is free. The row as it
        stands then (settled, or pending with the note `queued`), and whether rows are left
        for a drainer (see the module doc): never when another process held the lock."""
        recipient = target.agent_id
        recorded: list[Delivery] = []
        try:
            with self._locks.hold(queue_key(target), self._wait):
                emptied = self.drain(recipient, delivery.task_id, SENDER_ROWS, recorded)
        except TimeoutError:  # the holder reads the queue after taking the lock: the row is its
            emptied = False
        except OutcomeUnrecorded as exc:  # announced: that outcome is known here alone
            ours = exc.row if exc.row.task_id == delivery.task_id else queued(delivery)
            return Delivered(ours, unrecorded=exc.message)
        except CafleetError as exc:  # the store or the pane's lock failed before it was begun
            return Delivered(queued(delivery), unrecorded=exc.message)
        try:
            return Delivered(self._row(delivery), emptied and self._has_queue(recipient))
        except CafleetError:  # recorded (or left to the holder) but not read back
            mine = [row for row in recorded if row.task_id == delivery.task_id]
            return Delivered(mine[-1] if mine else queued(delivery))

    def deliver_queued(self, target: PushTarget) -> None:
        """The drainer: deliver what is queued for this pane until it stays empty, unless
        another process holds it (which reads the queue again when it lets go)."""
        while self._has_queue(target.agent_id):
            try:
                with self._locks.hold(queue_key(target), 0.0):
                    if not self.drain(target.agent_id):
                        return  # the member is starting: its senders wait for it
            except TimeoutError:
                return

    def record(self, delivery: Delivery, outcome: PushOutcome) -> Delivery:
        """Store one row's outcome (the ladder's earlier attempts as rows of their own);
        OutcomeUnrecorded when the store refuses it."""
        first, *later = delivery.attempts_of(outcome, self._clock.now())
        try:
            with self._uow(write=True) as uow:
                uow.deliveries.save(first)
                for attempt in later:
                    uow.deliveries.add(attempt)
                uow.commit()
        except CafleetError as exc:
            raise OutcomeUnrecorded(later[-1] if later else first, exc) from exc
        return later[-1] if later else first

    def drain(
        self,
        recipient: int,
        through: int | None = None,
        most: int | None = None,
        recorded: list[Delivery] | None = None,
    ) -> bool:
        """Under the pane's queue lock: deliver the queued rows in task order, up to the task
        `through` and at most `most` rows when given; each row recorded is added to
        `recorded`. False when it stopped with rows left for their senders (the member is
        still starting). A store error stops it (the rows not reached stay queued)."""
        delivered = 0
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
            row = self.record(row, outcome)
            if recorded is not None:
                recorded.append(row)
            delivered += 1
            if (through is not None and row.task_id >= through) or delivered == most:
                return True

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
            message.in_reply_to,
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
        return queued(row) if row.state is DeliveryState.PENDING else row


def _fixed_outcome(row: Delivery, placement: Placement | None) -> PushOutcome | None:
    """An outcome known without announcing: begun by a process that ended, or no pane."""
    if row.interrupted:
        return PushOutcome.failed(INTERRUPTED, row.transport, row.pane_id)
    if placement is None:
        return PushOutcome.skipped(SkipReason.NO_PLACEMENT)
    if placement.is_pending:
        return PushOutcome.skipped(SkipReason.PENDING_PANE)
    return None

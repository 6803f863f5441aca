"""The per-pane delivery queue: every pending ledger row of a recipient is its queue.

A sender stores its pending row first (the send transaction), then takes the queue lock of
the recipient's pane and delivers the rows queued there, oldest task first, up to its own
(and at most a few: a row far down the queue is left like the others).
A sender that cannot take the lock within a moment leaves its row to the holder and reports
it `pending` (`queued`). Whoever releases the lock reads the queue again and, when rows are
left, hands them to a drainer in the background, which holds the lock until the queue is
empty: so no row is stranded, and no sender waits for other senders' messages to be typed.
Each row is marked as begun (`attempted_at`) before it is announced.

A row whose announcement met a dialog, a pane that did not answer, or that left its preview
in the composer is held (domain/holds): it stays at the head, so no later row overtakes it,
and whoever holds the queue looks at the pane again (`Resumption`), typing nothing until
the pane is clear; then it finishes the preview left in the composer or announces the
message again, once. A drainer started as `python -m cafleet.entrypoints.processes.drain` keeps
looking, every HOLD_POLL_SECONDS for up to HOLD_WATCH_SECONDS; any other holder looks once. A
pending row with a begun mark was left by a process that died: its preview may be in the composer,
so it is held the same way and finished there, never typed a second time.

The store may fail after a message was stored (a full disk, a lost connection): a row whose
outcome could not be recorded stays as it was (queued if it was not begun; begun, so held
as interrupted by the next holder, if it was), and the sender learns the outcome as known
(`Delivered`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from enum import Enum

from cafleet.application.panes.keystrokes import lock_key
from cafleet.application.ports.delivery import Notifier, Resumption
from cafleet.application.ports.panes import PaneLocks
from cafleet.application.ports.store import UnitOfWorkFactory
from cafleet.application.ports.system import Clock
from cafleet.domain.delivery import (
    JOIN_WINDOW_SECONDS,
    QUEUED,
    Announcement,
    Delivery,
    DeliveryState,
    PushOutcome,
    Residue,
    SkipReason,
)
from cafleet.domain.errors import CafleetError, Unavailable
from cafleet.domain.holds import Hold, held_after, held_in_place, hold_of
from cafleet.domain.message import Message, MessageState
from cafleet.domain.placement import Placement, PushTarget

QUEUE_WAIT_SECONDS = 0.5  # how long a sender waits for the pane before leaving its row queued
SENDER_ROWS = 3  # rows a sender types before leaving the rest (its own too, if behind) to a drainer
HOLD_POLL_SECONDS = 1.0  # how often a drainer looks at the pane of a held row
HOLD_WATCH_SECONDS = 3600.0  # how long a drainer keeps looking before leaving it to others
# how long a drainer keeps looking at a pane that does not answer (its server stalled, or gone)
UNANSWERED_WATCH_SECONDS = 30.0


def queue_key(target: PushTarget) -> str:
    """The queue lock of a pane: not its send lock, which the keystroke path takes inside."""
    return f"queue-{lock_key(target)}"


class Drained(Enum):
    DONE = "done"  # up to the row asked for, or the queue is empty
    STARTING = "starting"  # the member is starting: its senders wait for it
    HELD = "held"  # the head waits for a dialog to close
    UNANSWERED = "unanswered"  # the head waits for its pane to answer


class Left(Enum):
    """What a sender leaves behind in its pane's queue."""

    NOTHING = "nothing"  # an empty queue, one another process holds, or a starting member's
    QUEUED = "queued"  # rows behind the sender's: a drainer delivers them
    HELD = "held"  # a head that waits for its pane: a drainer watches it


class OutcomeUnrecorded(Unavailable):
    """An attempt's outcome that the store refused to record (its error's message): `row` is
    the row as it would have been stored."""

    def __init__(self, row: Delivery, cause: CafleetError) -> None:
        super().__init__(cause.message)
        self.row = row


@dataclass(frozen=True)
class Delivered:
    """A sender's row after its delivery: as stored, or, when `unrecorded` (the store's error)
    is set, as known here; and what it left in its pane's queue for a drainer."""

    row: Delivery
    left: Left = Left.NOTHING
    unrecorded: str | None = None


def queued(row: Delivery) -> Delivery:
    """A pending row as a sender reports it: another delivery of the pane takes it."""
    return replace(row, error=QUEUED)


@dataclass(frozen=True)
class _Step:
    """The head of a queue: what to announce (or the hold to look at again), or its outcome
    known already; neither while the member is starting."""

    row: Delivery
    announcement: Announcement | None = None
    outcome: PushOutcome | None = None
    hold: Hold | None = None


class DeliveryQueue:
    def __init__(
        self,
        uow: UnitOfWorkFactory,
        clock: Clock,
        notifier: Notifier,
        locks: PaneLocks,
        wait: float = QUEUE_WAIT_SECONDS,
        resumption: Resumption | None = None,
    ) -> None:
        self._uow = uow
        self._clock = clock
        self._notifier = notifier
        self._locks = locks
        self._wait = wait
        self._resumption = resumption  # None: a held pane counts as clear, its composer unread

    def deliver(self, delivery: Delivery, target: PushTarget) -> Delivered:
        """Deliver the recipient's queue up to this row if the pane is free. The row as it
        stands then (settled, held, or pending with the note `queued`), and what is left for
        a drainer (see the module doc): nothing when another process held the lock."""
        recipient = target.agent_id
        recorded: list[Delivery] = []
        try:
            with self._locks.hold(queue_key(target), self._wait):
                drained = self.drain(recipient, delivery.task_id, SENDER_ROWS, recorded)
        except TimeoutError:  # the holder reads the queue after taking the lock: the row is its
            drained = None
        except OutcomeUnrecorded as exc:  # announced: that outcome is known here alone
            ours = exc.row if exc.row.task_id == delivery.task_id else queued(delivery)
            return Delivered(ours, unrecorded=exc.message)
        except CafleetError as exc:  # the store or the pane's lock failed before it was begun
            return Delivered(queued(delivery), unrecorded=exc.message)
        try:
            if drained in (Drained.HELD, Drained.UNANSWERED):
                left = Left.HELD
            elif drained is Drained.DONE and self._has_queue(recipient):
                left = Left.QUEUED
            else:
                left = Left.NOTHING
            return Delivered(self._row(delivery), left)
        except CafleetError:  # recorded (or left to the holder) but not read back
            mine = [row for row in recorded if row.task_id == delivery.task_id]
            return Delivered(mine[-1] if mine else queued(delivery))

    def deliver_queued(self, target: PushTarget, watch: float = 0.0) -> None:
        """The drainer: deliver what is queued for this pane until it stays empty, unless
        another process holds it (which reads the queue again when it lets go). A held head
        is looked at again for `watch` seconds, the queue kept meanwhile."""
        until = self._clock.now() + timedelta(seconds=watch)
        while self._has_queue(target.agent_id):
            try:
                with self._locks.hold(queue_key(target), 0.0):
                    if not self._drain_watching(target.agent_id, until):
                        return
            except TimeoutError:
                return

    def record(
        self, delivery: Delivery, outcome: PushOutcome, hold: Hold | None = None
    ) -> Delivery:
        """Store one row's outcome (the ladder's earlier attempts as rows of their own) and,
        for a hold, the pending row that waits for the pane; the last row stored.
        OutcomeUnrecorded when the store refuses it."""
        first, *later = delivery.attempts_of(outcome, self._clock.now())
        attempted = later[-1] if later else first
        held = None if hold is None else held_after(attempted, hold)
        try:
            with self._uow(write=True) as uow:
                uow.deliveries.save(first)
                for attempt in later:
                    uow.deliveries.add(attempt)
                if held is not None:
                    uow.deliveries.add(held)
                uow.commit()
        except CafleetError as exc:
            raise OutcomeUnrecorded(attempted, exc) from exc
        return held or attempted

    def drain(
        self,
        recipient: int,
        through: int | None = None,
        most: int | None = None,
        recorded: list[Delivery] | None = None,
    ) -> Drained:
        """Under the pane's queue lock: deliver the queued rows in task order, up to the task
        `through` and at most `most` rows when given; each row recorded is added to
        `recorded`. Stop at a held row that still waits, and where the member is still
        starting (its senders wait for it). A store error stops it (the rows not reached
        stay queued)."""
        delivered = 0
        while True:
            step = self._next(recipient)
            if step is None:
                return Drained.DONE
            if step.announcement is None and step.outcome is None:
                return Drained.STARTING
            outcome = step.outcome or self._attempt(step)
            if isinstance(outcome, Hold):  # the pane is not clear yet; nothing was tried
                return _waiting(outcome)
            hold = self._hold_after(step.row, outcome)
            row = self.record(step.row, outcome, hold)
            if recorded is not None:
                recorded.append(row)
            if hold is not None:
                return _waiting(hold)
            delivered += 1
            if (through is not None and row.task_id >= through) or delivered == most:
                return Drained.DONE

    def _drain_watching(self, recipient: int, until: datetime) -> bool:
        """Drain, looking at a held head again until `until` (a pane that does not answer,
        for UNANSWERED_WATCH_SECONDS in a row); False when rows are left (the member is
        starting, or the head still waits)."""
        unanswered_since: datetime | None = None
        while True:
            drained = self.drain(recipient)
            if drained is Drained.DONE:
                return True
            now = self._clock.now()
            if drained is not Drained.UNANSWERED:
                unanswered_since = None
            elif unanswered_since is None:
                unanswered_since = now
            given_up = unanswered_since is not None and now - unanswered_since > timedelta(
                seconds=UNANSWERED_WATCH_SECONDS
            )
            if drained is Drained.STARTING or now >= until or given_up:
                return False
            self._clock.sleep(HOLD_POLL_SECONDS)

    def _attempt(self, step: _Step) -> PushOutcome | Hold:
        """Announce the head; a held one only once its pane is clear (until then, what it
        still waits for), finishing the preview an earlier attempt left in the composer."""
        announcement, hold = step.announcement, step.hold
        assert announcement is not None
        if hold is None:
            return self._announce(announcement)
        resumption = self._resumption
        obstacle = None if resumption is None else resumption.obstacle(announcement)
        if obstacle is not None:
            still = Hold.of(obstacle)
            waits = still is not None and not hold.given_up(step.row, self._clock.now())
            return still if still is not None and waits else obstacle
        self._begin(step.row)
        if hold.residue is Residue.NOTHING:
            return self._announce(announcement)
        target = announcement.target
        finished = None if resumption is None else resumption.complete(announcement, hold.residue)
        finished = finished or hold.without_preview(target.backend.value, target.pane_id)
        return finished or self._announce(announcement)  # None: it never landed

    def _hold_after(self, row: Delivery, outcome: PushOutcome) -> Hold | None:
        hold = Hold.of(outcome)
        if hold is None or hold.given_up(row, self._clock.now()):
            return None
        return hold

    def _next(self, recipient: int) -> _Step | None:
        """The queue's head, marked as begun unless it is held; None when the queue is empty."""
        with self._uow(write=True) as uow:
            queued = uow.deliveries.queued_for(recipient)
            if not queued:
                return None
            row = queued[0]
            hold = hold_of(row)
            if row.interrupted:  # its process ended mid-way: its preview may be in the composer
                hold = Hold.interrupted()
                row = held_in_place(row, hold)
                uow.deliveries.save(row)
            placement = uow.placements.get(recipient)
            message = uow.messages.get(row.task_id)
            fixed = _fixed_outcome(placement, message, hold)
            if fixed is not None or placement is None or message is None:
                uow.commit()
                return _Step(row, outcome=fixed or PushOutcome.skipped(SkipReason.NO_PLACEMENT))
            if placement.is_starting:
                uow.commit()
                return _Step(row)
            untaken = uow.deliveries.announced_untaken(
                recipient, message.created_at - timedelta(seconds=JOIN_WINDOW_SECONDS)
            )
            if hold is None:
                row = row.started(self._clock.now())
                uow.deliveries.save(row)
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
        return _Step(row, announcement, hold=hold)

    def _begin(self, row: Delivery) -> None:
        """Mark a held row as begun before anything is typed for it (see `interrupted`)."""
        with self._uow(write=True) as uow:
            uow.deliveries.save(row.started(self._clock.now()))
            uow.commit()

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
        waiting = row.state is DeliveryState.PENDING and hold_of(row) is None
        return queued(row) if waiting else row


def _waiting(hold: Hold) -> Drained:
    return Drained.HELD if hold.for_dialog else Drained.UNANSWERED


def _fixed_outcome(
    placement: Placement | None, message: Message | None, hold: Hold | None
) -> PushOutcome | None:
    """An outcome known without announcing: no pane, or a held message read meanwhile."""
    if placement is None:
        return PushOutcome.skipped(SkipReason.NO_PLACEMENT)
    if placement.is_pending:
        return PushOutcome.skipped(SkipReason.PENDING_PANE)
    if hold is not None and message is not None:
        if message.state is MessageState.COMPLETED:
            return PushOutcome.skipped(SkipReason.READ)
        if message.state is MessageState.CANCELED:
            return PushOutcome.skipped(SkipReason.CANCELED)
    return None

"""Sending, reading and settling messages.

The pipeline of a send: one short write transaction stores the message and its
ledger row (outcomes known without a pane are final right away), it commits,
and only then is the recipient's pane touched. The outcome is recorded in a
second short transaction. A push failure never loses the message.

Once the message is stored the send has happened: a store that fails after the commit (a
full disk, a lost connection) never makes it look failed, or a sender would send it again.
The result carries the delivery as known and the store's error (`unrecorded`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext, suppress
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from cafleet.application.identity import history_reader, verified_actor
from cafleet.application.lookups import (
    active_agent,
    answered_message,
    message_in_fleet,
    no_placement_row,
    refuse_deleted_fleet,
)
from cafleet.application.messaging.confirmations import (
    RECEIPT_PATIENCE_SECONDS,
    RECEIPT_POLL_SECONDS,
    confirm_taken,
)
from cafleet.application.messaging.queue import (
    QUEUE_WAIT_SECONDS,
    Delivered,
    DeliveryQueue,
    Left,
    queued,
)
from cafleet.application.panes.gathering import Gathering, Gatherings
from cafleet.application.ports.delivery import Notifier, QueueDrains, Resumption
from cafleet.application.ports.panes import PaneLocks
from cafleet.application.ports.store import UnitOfWork, UnitOfWorkFactory
from cafleet.application.ports.system import Clock
from cafleet.domain.bounds import DEFAULT_MAX_BODY_BYTES
from cafleet.domain.delivery import (
    Delivery,
    DeliveryState,
    PushOutcome,
    SkipReason,
)
from cafleet.domain.errors import (
    CafleetError,
    ConnectionLost,
    Invalid,
    NotFound,
    Unavailable,
    UsageProblem,
)
from cafleet.domain.fleet import Agent
from cafleet.domain.identity import MemberCredential
from cafleet.domain.message import Message, broadcast_summary, once_per_broadcast, unicast
from cafleet.domain.placement import Placement, PushTarget
from cafleet.domain.relay import relay_note

if TYPE_CHECKING:
    from cafleet.application.members.titles import PaneTitles

# a thread per recipient up to this many, so one gathering types into all panes at once
BROADCAST_PUSH_WORKERS = 128
START_WAIT_SECONDS = 120.0  # longer than a member's start-up may take (CAFLEET_START_TIMEOUT)
START_POLL_SECONDS = 0.25


@dataclass(frozen=True)
class SendResult:
    message: Message
    delivery: Delivery  # as stored, or as known when `unrecorded` is set
    unrecorded: str | None = None  # the store's error that kept the delivery from the ledger


@dataclass(frozen=True)
class BroadcastResult:
    summary: Message
    deliveries: tuple[Delivery, ...]
    unrecorded: str | None = None  # as SendResult's, for any of the deliveries

    @property
    def recipients(self) -> int:
        return len(self.deliveries)

    @property
    def delivered(self) -> int:
        return sum(1 for d in self.deliveries if d.state is DeliveryState.SENT)


@dataclass(frozen=True)
class MessageDetail:
    message: Message
    deliveries: tuple[Delivery, ...]
    fleet_deleted_at: datetime | None = None  # set: the fleet's history is read-only
    copies: tuple[Message, ...] = ()  # a broadcast summary's: what each recipient was sent


@dataclass(frozen=True)
class Thread:
    thread_id: int
    messages: tuple[Message, ...]  # in id order; a broadcast as one copy (see thread())
    fleet_deleted_at: datetime | None = None


@dataclass(frozen=True)
class NudgeResult:
    target: Agent
    placement: Placement
    sent: SendResult


@dataclass(frozen=True)
class _Planned:
    """A stored delivery and, when a pane must be touched, where to push."""

    delivery: Delivery
    target: PushTarget | None


class MessagingService:
    def __init__(
        self,
        uow: UnitOfWorkFactory,
        clock: Clock,
        notifier: Notifier,
        locks: PaneLocks,
        start_wait: float = START_WAIT_SECONDS,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        queue_wait: float = QUEUE_WAIT_SECONDS,
        drains: QueueDrains | None = None,
        gatherings: Gatherings | None = None,
        reaches: Callable[[str | None], bool] | None = None,
        titles: PaneTitles | None = None,
        resumption: Resumption | None = None,
    ) -> None:
        self._uow = uow
        self._titles = titles  # None: panes keep their titles (no multiplexer to show them)
        self._reaches = reaches or (lambda host: True)  # None: every pane is on this host
        self._gatherings = gatherings  # shared with the keystroke sender: None, no batching
        self._clock = clock
        self._queue = DeliveryQueue(uow, clock, notifier, locks, queue_wait, resumption)
        self._drains = drains  # None: rows left queued are delivered before returning
        self._start_wait = start_wait
        self._max_body_bytes = max_body_bytes

    def _check_size(self, text: str) -> None:
        """A body over CAFLEET_MAX_BODY_BYTES (UTF-8) is refused before anything is stored."""
        limit = self._max_body_bytes
        if len(text) * 4 <= limit:  # no codepoint takes more than 4 bytes
            return
        size = len(text.encode("utf-8", "surrogatepass"))
        if size > limit:
            raise Invalid(
                f"message body is {size} bytes; the limit is {limit} bytes (CAFLEET_MAX_BODY_BYTES)"
            )

    def send(
        self,
        fleet_id: int,
        agent_id: int,
        to_agent_id: int | None,
        text: str,
        caller: MemberCredential | None = None,
        reply_to: int | None = None,
    ) -> SendResult:
        """`reply_to`: the message this one answers (its thread is joined); the recipient
        defaults to that message's other party."""
        self._check_size(text)
        with self._committing() as committing, self._uow(write=True) as uow:
            sender, verified = verified_actor(uow, fleet_id, agent_id, caller)
            answers = (
                None
                if reply_to is None
                else answered_message(uow, fleet_id, sender.agent_id, reply_to)
            )
            to = to_agent_id
            if to is None and answers is not None:
                to = answers.answered_by_default(sender.agent_id)
            if to is None:
                raise UsageProblem(
                    "name the recipient with --to (a broadcast has no sender to answer)"
                )
            recipient = active_agent(uow, fleet_id, to, f"Destination agent not found: {to}")
            now = self._clock.now()
            message = unicast(
                sender.agent_id,
                recipient.agent_id,
                text,
                now,
                sender_verified=verified,
                answers=answers,
            )
            message = _with_id(message, uow.messages.add(message))
            planned = self._plan(uow, message, recipient)
            committing.append(message)
            uow.commit()
        [delivered] = self._push([planned])
        self._retitle_panes([planned])
        return SendResult(message, delivered.row, delivered.unrecorded)

    @contextmanager
    def _committing(self) -> Iterator[list[Message]]:
        """Around a send's write transaction, which names its message before committing. A
        connection that breaks during the commit leaves it unknown whether the commit was
        applied: the message is looked for, and the send goes on only if it is there."""
        committing: list[Message] = []
        try:
            yield committing
        except ConnectionLost as lost:
            if not committing:
                raise
            self._require_stored(committing[0], lost)

    def _require_stored(self, message: Message, lost: ConnectionLost) -> None:
        """Raise `lost` unless the message is stored; when that cannot be told, say so."""
        try:
            with self._uow() as uow:
                found = uow.messages.get(message.task_id)
        except CafleetError:
            raise Unavailable(
                f"{lost.message}; message {message.task_id} may have been stored:"
                " `cafleet message show` tells, before it is sent again"
            ) from lost
        if found is None or (found.created_at, found.text) != (message.created_at, message.text):
            raise lost

    def nudge(
        self,
        fleet_id: int,
        sender_id: int,
        member_id: int,
        text: str,
        caller: MemberCredential | None = None,
    ) -> NudgeResult:
        """An ordinary message to a placed agent; the target is resolved before the sender."""
        with self._uow() as uow:
            refuse_deleted_fleet(uow, fleet_id)
            target = active_agent(uow, fleet_id, member_id, f"Agent {member_id} not found")
            placement = uow.placements.get(member_id)
            if placement is None:
                raise NotFound(no_placement_row(member_id))
            active_agent(
                uow,
                fleet_id,
                sender_id,
                f"Sender agent not found or not active in fleet: {sender_id}",
            )
        sent = self.send(fleet_id, sender_id, member_id, text, caller)
        return NudgeResult(target, placement, sent)

    def broadcast(
        self, fleet_id: int, agent_id: int, text: str, caller: MemberCredential | None = None
    ) -> BroadcastResult:
        self._check_size(text)
        with self._committing() as committing, self._uow(write=True) as uow:
            sender, verified = verified_actor(uow, fleet_id, agent_id, caller)
            recipients = [
                a
                for a in uow.agents.in_fleet(fleet_id)
                if a.agent_id != sender.agent_id and not a.is_administrator
            ]
            now = self._clock.now()
            summary = broadcast_summary(
                sender.agent_id, len(recipients), now, sender_verified=verified
            )
            summary_id = uow.messages.add(summary)
            summary = _with_id(summary, summary_id, origin=summary_id)
            planned = []
            for recipient in recipients:
                delivery = unicast(
                    sender.agent_id,
                    recipient.agent_id,
                    text,
                    now,
                    summary_id,
                    sender_verified=verified,
                )
                delivery = _with_id(delivery, uow.messages.add(delivery))
                planned.append(self._plan(uow, delivery, recipient))
            committing.append(summary)
            uow.commit()
        pushed = self._push(planned)
        self._retitle_panes(planned)
        unrecorded = next((d.unrecorded for d in pushed if d.unrecorded), None)
        return BroadcastResult(summary, tuple(d.row for d in pushed), unrecorded)

    def poll(
        self,
        fleet_id: int,
        agent_id: int,
        limit: int | None = None,
        caller: MemberCredential | None = None,
    ) -> list[Message]:
        with self._uow() as uow:
            verified_actor(uow, fleet_id, agent_id, caller)
            return uow.messages.pending_for(agent_id, limit)

    def ack(
        self, fleet_id: int, agent_id: int, task_id: int, caller: MemberCredential | None = None
    ) -> Message:
        with self._uow(write=True) as uow:
            verified_actor(uow, fleet_id, agent_id, caller)
            message = message_in_fleet(uow, fleet_id, task_id).ack(agent_id, self._clock.now())
            uow.messages.save(message)
            uow.commit()
        self._retitle([message.context_id])
        return message

    def cancel(
        self, fleet_id: int, agent_id: int, task_id: int, caller: MemberCredential | None = None
    ) -> Message:
        with self._uow(write=True) as uow:
            verified_actor(uow, fleet_id, agent_id, caller)
            message = message_in_fleet(uow, fleet_id, task_id).cancel(agent_id, self._clock.now())
            uow.messages.save(message)
            uow.commit()
        self._retitle([message.context_id])  # the recipient has one message fewer to read
        return message

    def show(
        self, fleet_id: int, agent_id: int, task_id: int, caller: MemberCredential | None = None
    ) -> MessageDetail:
        """Any message of the fleet; a deleted fleet's stay readable."""
        with self._uow() as uow:
            fleet = history_reader(uow, fleet_id, agent_id, caller)
            message = message_in_fleet(uow, fleet_id, task_id)
            deliveries = tuple(uow.deliveries.for_task(task_id))
            copies = uow.messages.broadcast_copies(message) if message.is_summary else []
        return MessageDetail(message, deliveries, fleet.deleted_at, tuple(copies))

    def thread(
        self, fleet_id: int, agent_id: int, task_id: int, caller: MemberCredential | None = None
    ) -> Thread:
        """The whole thread of a message of the fleet, in order; a broadcast once, as its
        first copy's text with its recipients (a deleted fleet's stay readable)."""
        with self._uow() as uow:
            fleet = history_reader(uow, fleet_id, agent_id, caller)
            message = message_in_fleet(uow, fleet_id, task_id)
            found = uow.messages.thread(message.thread)
        shown = once_per_broadcast((m for m in found if not m.is_summary), _itself)
        return Thread(message.thread, tuple(shown), fleet.deleted_at)

    def confirm(
        self,
        recipient_agent_id: int,
        task_ids: Sequence[int],
        at: datetime,
        patience: float = RECEIPT_PATIENCE_SECONDS,
    ) -> int:
        """The recipient's agent says it took these messages in (its own hook saw the
        preview in a prompt); the first such word is kept. A message still being announced
        is confirmed once its sender records it, waited for up to `patience` seconds. How
        many attempts it confirmed."""
        deadline = self._clock.now() + timedelta(seconds=patience)
        confirmed, waiting = 0, list(task_ids)
        while True:
            with self._uow(write=True) as uow:
                changed, waiting = confirm_taken(uow, recipient_agent_id, waiting, at)
                uow.commit()
            confirmed += changed
            if not waiting or self._clock.now() >= deadline:
                return confirmed
            self._clock.sleep(RECEIPT_POLL_SECONDS)

    def timeline(self, fleet_id: int, limit: int = 200, before: int | None = None) -> list[Message]:
        """The fleet's conversation, newest first (the fleet may be deleted: history stays)."""
        with self._uow() as uow:
            if uow.fleets.get(fleet_id) is None:
                raise NotFound(f"fleet {fleet_id} not found.")
            return uow.messages.timeline(fleet_id, limit, before)

    def _retitle(self, agent_ids: Sequence[int]) -> None:
        """Their unread counts changed: the pane titles say so."""
        if self._titles is not None and agent_ids:
            self._titles.refresh(agent_ids)

    def _retitle_panes(self, planned: Sequence[_Planned]) -> None:
        """The recipients whose panes this process pushed to (another host's relay titles
        its own; a recipient without a pane has no title, and costs nothing here)."""
        self._retitle([p.delivery.recipient_agent_id for p in planned if p.target is not None])

    def _plan(self, uow: UnitOfWork, message: Message, recipient: Agent) -> _Planned:
        """Write the ledger row; outcomes that need no pane are final at once."""
        delivery = Delivery(
            message.task_id, recipient.agent_id, DeliveryState.PENDING, message.created_at
        )
        placement = uow.placements.get(recipient.agent_id)
        if message.from_agent_id == recipient.agent_id:
            return _skip_now(uow, delivery, SkipReason.SELF)
        if placement is None:
            return _skip_now(uow, delivery, SkipReason.NO_PLACEMENT)
        if placement.is_pending:
            return _skip_now(uow, delivery, SkipReason.PENDING_PANE)
        if placement.host is not None and not self._reaches(placement.host):
            relayed = replace(delivery, error=relay_note(placement.host))
            uow.deliveries.add(relayed)  # queued for the relay of the pane's host
            uow.relays.wake(placement.host)
            return _Planned(relayed, None)
        uow.deliveries.add(delivery)  # queued: the pane's queue announces it (delivery_queue)
        return _Planned(delivery, PushTarget.of(placement))

    def _push(self, planned: list[_Planned]) -> list[Delivered]:
        """Deliver pending rows through their panes' queues, with no transaction open; each
        outcome is recorded as it comes. Rows left queued behind ours, and held rows, go to
        a drainer; without one, queued rows are delivered here before returning and held
        ones wait for the monitor's tick or the next message to their pane."""
        jobs = [p for p in planned if p.target is not None]
        if not jobs:
            return [Delivered(p.delivery) for p in planned]
        results = [self._deliver(jobs[0])] if len(jobs) == 1 else self._deliver_together(jobs)
        left = {
            job.delivery.recipient_agent_id: result.left
            for job, result in zip(jobs, results, strict=True)
            if result.left is not Left.NOTHING
        }
        if left:
            self._hand_over(left)
        settled = {id(job): result for job, result in zip(jobs, results, strict=True)}
        return [settled.get(id(p), Delivered(p.delivery)) for p in planned]

    def _hand_over(self, left: Mapping[int, Left]) -> None:
        """Rows left behind ours (other senders', or a held head): to a drainer; without one,
        queued rows are delivered here and held ones wait for the monitor or the next send."""
        if self._drains is not None:
            self._drains.start(list(left))
            return
        with suppress(CafleetError):  # theirs stay queued for the next delivery or the monitor
            self.drain_queued([agent for agent, rows in left.items() if rows is Left.QUEUED])

    def _deliver_together(self, jobs: list[_Planned]) -> list[Delivered]:
        """Each row through its own pane's queue, in threads that form one gathering: the
        rows that reach the keystroke rung are typed as one batch, with one submit delay."""
        workers = min(BROADCAST_PUSH_WORKERS, len(jobs))
        gathering: Gathering[object, object] = Gathering(workers)
        results: list[Delivered | None] = [None] * len(jobs)
        todo = iter(list(enumerate(jobs)))
        guard = threading.Lock()

        def work() -> None:
            with self._membership(gathering):
                while True:
                    with guard:
                        item = next(todo, None)
                    if item is None:
                        return
                    results[item[0]] = self._deliver(item[1])

        from concurrent.futures import ThreadPoolExecutor  # it imports logging: when needed

        with ThreadPoolExecutor(max_workers=workers) as pool:
            for running in [pool.submit(work) for _ in range(workers)]:
                running.result()
        return [result for result in results if result is not None]

    def _membership(self, gathering: Gathering[object, object]) -> AbstractContextManager[None]:
        if self._gatherings is None:
            return nullcontext()
        return self._gatherings.member(gathering)

    def drain_queued(self, recipients: Sequence[int], watch: float = 0.0) -> None:
        """Deliver what is queued for these recipients' panes (see delivery_queue), looking
        at a held row's pane again for `watch` seconds: each pane in a thread of its own
        then, so one pane's dialog does not keep the others waiting."""
        if watch <= 0 or len(recipients) < 2:
            for recipient in recipients:
                self._drain_one(recipient, watch)
            return
        from concurrent.futures import ThreadPoolExecutor  # it imports logging: when needed

        with ThreadPoolExecutor(max_workers=min(BROADCAST_PUSH_WORKERS, len(recipients))) as pool:
            for running in [pool.submit(self._drain_one, r, watch) for r in recipients]:
                running.result()

    def _drain_one(self, recipient: int, watch: float) -> None:
        with self._uow() as uow:
            placement = uow.placements.get(recipient)
        if placement is not None and not placement.is_pending and self._reaches(placement.host):
            self._queue.deliver_queued(PushTarget.of(placement), watch)

    def _deliver(self, job: _Planned) -> Delivered:
        """The row after delivery, and what is left in its pane's queue. Its message
        is stored: a store error now leaves the row queued and is reported with it."""
        target = job.target
        assert target is not None
        try:
            if not target.ready:
                ready = self._when_ready(target)
                if ready is None:
                    outcome = PushOutcome.skipped(
                        SkipReason.AGENT_STARTING, target.backend.value, target.pane_id
                    )
                    return Delivered(self._queue.record(job.delivery, outcome))
                target = ready
            return self._queue.deliver(job.delivery, target)
        except CafleetError as exc:  # not begun, or only skipped: the row stays queued
            return Delivered(queued(job.delivery), unrecorded=exc.message)

    def _when_ready(self, target: PushTarget) -> PushTarget | None:
        """Wait (bounded) until a starting member's agent was seen ready; None if it was not.

        Text typed into a TUI that is still starting is lost, so the push waits instead.
        """
        deadline = self._clock.now() + timedelta(seconds=self._start_wait)
        while self._clock.now() < deadline:
            self._clock.sleep(START_POLL_SECONDS)
            with self._uow() as uow:
                placement = uow.placements.get(target.agent_id)
            if placement is None or placement.pane_id != target.pane_id:
                return None  # the start failed and was rolled back
            if not placement.is_starting:
                return PushTarget.of(placement)
        return None


def _itself(message: Message) -> Message:
    return message


def _skip_now(uow: UnitOfWork, delivery: Delivery, reason: str) -> _Planned:
    settled = delivery.settled(PushOutcome.skipped(reason), delivery.created_at)
    uow.deliveries.add(settled)
    return _Planned(settled, None)


def _with_id(message: Message, task_id: int, origin: int | None = None) -> Message:
    """The message as stored under its new id (MessageRepository.add)."""
    updated = replace(message, task_id=task_id, thread_id=message.thread_id or task_id)
    return replace(updated, origin_task_id=origin) if origin is not None else updated

"""The per-pane delivery queue on the fakes: every row delivered once, in task order, by
whoever holds the pane; a sender that cannot take it leaves its row queued."""

from __future__ import annotations

from dataclasses import dataclass, replace

import pytest

from cafleet.adapters.fake.clock import FakeClock
from cafleet.adapters.fake.notifier import RecordingNotifier
from cafleet.adapters.fake.pane_driver import ThreadLocks
from cafleet.adapters.fake.queue_drains import RecordingDrains
from cafleet.adapters.fake.store import MemoryStore
from cafleet.application.messaging.queue import DeliveryQueue, queue_key
from cafleet.application.messaging.service import MessagingService
from cafleet.domain.delivery import (
    INTERRUPTED,
    QUEUED,
    Announcement,
    Delivery,
    DeliveryState,
    PushOutcome,
)
from cafleet.domain.message import unicast
from cafleet.domain.placement import CodingAgent, PushTarget


@dataclass
class Pair:
    fleet_id: int
    director: int
    worker: int


@pytest.fixture
def pair(world) -> Pair:
    made = world.fleet("alpha")
    worker = world.member(made, "worker", pane_id="%1", coding_agent=CodingAgent.CUSTOM)
    return Pair(made.fleet.fleet_id, made.director.agent_id, worker)


@pytest.fixture
def locks() -> ThreadLocks:
    return ThreadLocks()


def service(
    store: MemoryStore, clock: FakeClock, notifier: RecordingNotifier, locks: ThreadLocks
) -> MessagingService:
    return MessagingService(store, clock, notifier, locks, queue_wait=0.0)


def target_of(store: MemoryStore, agent_id: int) -> PushTarget:
    with store() as uow:
        placement = uow.placements.get(agent_id)
    assert placement is not None
    return PushTarget.of(placement)


def test_a_sender_that_cannot_take_the_pane_leaves_its_row_queued_for_the_holder(
    store: MemoryStore, clock: FakeClock, pair: Pair, locks: ThreadLocks, world
) -> None:
    notifier = RecordingNotifier()
    messaging = service(store, clock, notifier, locks)
    key = queue_key(target_of(store, pair.worker))

    with locks.hold(key, 1):  # another process delivers to the pane now
        first = messaging.send(pair.fleet_id, pair.director, pair.worker, "first")
        second = messaging.send(pair.fleet_id, pair.director, pair.worker, "second")
    assert notifier.announced == []
    assert (first.delivery.state, first.delivery.error) == (DeliveryState.PENDING, QUEUED)
    assert (second.delivery.state, second.delivery.error) == (DeliveryState.PENDING, QUEUED)

    third = messaging.send(pair.fleet_id, pair.director, pair.worker, "third")

    assert [a.text for a in notifier.announced] == ["first", "second", "third"]
    assert third.delivery.state is DeliveryState.SENT
    for result in (first, second, third):
        [row] = world.deliveries(result.message.task_id)
        assert (row.state, row.pane_id, row.error) == (DeliveryState.SENT, "%1", None)


def test_a_row_stored_while_the_holder_delivers_is_delivered_by_the_holder_in_order(
    store: MemoryStore, clock: FakeClock, pair: Pair, locks: ThreadLocks, world
) -> None:
    sent_meanwhile: list[Delivery] = []

    def outcome(announcement: Announcement) -> PushOutcome:
        if announcement.text == "first":  # a second sender arrives while this one types
            later = messaging.send(pair.fleet_id, pair.director, pair.worker, "second")
            sent_meanwhile.append(later.delivery)
        return PushOutcome.sent("tmux", announcement.target.pane_id)

    notifier = RecordingNotifier(outcome)
    messaging = service(store, clock, notifier, locks)

    first = messaging.send(pair.fleet_id, pair.director, pair.worker, "first")

    assert [a.text for a in notifier.announced] == ["first", "second"]
    assert [(d.state, d.error) for d in sent_meanwhile] == [(DeliveryState.PENDING, QUEUED)]
    assert first.delivery.state is DeliveryState.SENT
    [row] = world.deliveries(sent_meanwhile[0].task_id)
    assert row.state is DeliveryState.SENT


def test_a_row_begun_by_a_process_that_died_is_settled_failed_and_not_typed_again(
    store: MemoryStore, clock: FakeClock, pair: Pair, locks: ThreadLocks, world
) -> None:
    with store(write=True) as uow:  # what a sender killed mid-delivery leaves behind
        message = unicast(pair.director, pair.worker, "killed", clock.now())
        task = uow.messages.add(message)
        pending = Delivery(task, pair.worker, DeliveryState.PENDING, clock.now())
        uow.deliveries.add(pending.started(clock.now()))
        queued = uow.messages.add(unicast(pair.director, pair.worker, "queued", clock.now()))
        uow.deliveries.add(Delivery(queued, pair.worker, DeliveryState.PENDING, clock.now()))
        uow.commit()
    notifier = RecordingNotifier()
    messaging = service(store, clock, notifier, locks)

    messaging.send(pair.fleet_id, pair.director, pair.worker, "next")

    assert [a.text for a in notifier.announced] == ["queued", "next"]
    [row] = world.deliveries(task)
    assert (row.state, row.error) == (DeliveryState.FAILED, INTERRUPTED)
    [row] = world.deliveries(queued)
    assert row.state is DeliveryState.SENT
    with store() as uow:
        assert uow.deliveries.queued_for(pair.worker) == []


def test_the_queue_waits_for_a_starting_member_and_leaves_its_rows_to_their_senders(
    store: MemoryStore, clock: FakeClock, pair: Pair, locks: ThreadLocks, world
) -> None:
    notifier = RecordingNotifier()
    queue = DeliveryQueue(store, clock, notifier, locks, 0.0)
    with store(write=True) as uow:
        placement = uow.placements.get(pair.worker)
        assert placement is not None
        task = uow.messages.add(unicast(pair.director, pair.worker, "early", clock.now()))
        uow.deliveries.add(Delivery(task, pair.worker, DeliveryState.PENDING, clock.now()))
        uow.placements.save(replace(placement, ready_at=None))  # its agent not seen ready
        uow.commit()

    queue.deliver_queued(target_of(store, pair.worker))

    assert notifier.announced == []
    [row] = world.deliveries(task)
    assert row.state is DeliveryState.PENDING and not row.interrupted


def test_the_holder_types_up_to_its_own_row_and_hands_later_rows_to_a_drainer(
    store: MemoryStore, clock: FakeClock, pair: Pair, locks: ThreadLocks, world
) -> None:
    later: list[Delivery] = []

    def outcome(announcement: Announcement) -> PushOutcome:
        if announcement.text == "a":  # a later sender arrives while the holder types
            later.append(messaging.send(pair.fleet_id, pair.director, pair.worker, "late").delivery)
        return PushOutcome.sent("tmux", announcement.target.pane_id)

    notifier = RecordingNotifier(outcome)
    drains = RecordingDrains()
    messaging = MessagingService(store, clock, notifier, locks, queue_wait=0.0, drains=drains)
    with locks.hold(queue_key(target_of(store, pair.worker)), 1):  # rows left to the holder
        queued = [messaging.send(pair.fleet_id, pair.director, pair.worker, t) for t in "ab"]

    mine = messaging.send(pair.fleet_id, pair.director, pair.worker, "mine")

    assert [a.text for a in notifier.announced] == ["a", "b", "mine"]  # older rows first
    assert mine.delivery.state is DeliveryState.SENT
    assert [(d.state, d.error) for d in later] == [(DeliveryState.PENDING, QUEUED)]
    assert drains.started == [[pair.worker]]  # the sender returns; a drainer takes the rest
    messaging.drain_queued([pair.worker])  # what the drainer does
    assert [a.text for a in notifier.announced] == ["a", "b", "mine", "late"]
    for task in (*(r.message.task_id for r in queued), later[0].task_id):
        [row] = world.deliveries(task)
        assert row.state is DeliveryState.SENT
    with store() as uow:
        assert uow.deliveries.queued_for(pair.worker) == []


def test_a_sender_far_down_the_queue_types_a_few_rows_and_leaves_the_rest_with_its_own(
    store: MemoryStore, clock: FakeClock, pair: Pair, locks: ThreadLocks, world
) -> None:
    notifier = RecordingNotifier()
    drains = RecordingDrains()
    messaging = MessagingService(store, clock, notifier, locks, queue_wait=0.0, drains=drains)
    with locks.hold(queue_key(target_of(store, pair.worker)), 1):
        for text in "abcde":
            messaging.send(pair.fleet_id, pair.director, pair.worker, text)

    mine = messaging.send(pair.fleet_id, pair.director, pair.worker, "mine")

    assert [a.text for a in notifier.announced] == ["a", "b", "c"]
    assert (mine.delivery.state, mine.delivery.error) == (DeliveryState.PENDING, QUEUED)
    assert drains.started == [[pair.worker]]
    messaging.drain_queued([pair.worker])
    assert [a.text for a in notifier.announced] == ["a", "b", "c", "d", "e", "mine"]

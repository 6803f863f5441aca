"""The monitor settles queues nobody is left to deliver: rows pending past
STRANDED_AFTER_SECONDS (their sender and its drainer ended) go to a drainer each tick, so
they do not wait for the next message to that pane."""

from __future__ import annotations

from typing import Any

from cafleet.adapters.fake.notifier import RecordingNotifier
from cafleet.adapters.fake.pane_driver import ThreadLocks
from cafleet.adapters.fake.queue_drains import RecordingDrains
from cafleet.application.messaging.queue import queue_key
from cafleet.application.messaging.service import MessagingService
from cafleet.application.monitoring.service import STRANDED_AFTER_SECONDS
from cafleet.domain.delivery import Delivery, DeliveryState
from cafleet.domain.placement import PushTarget


def left_pending(fleet: Any, to: int, state: DeliveryState = DeliveryState.PENDING) -> int:
    """A message whose ledger row its sender stored and never delivered."""
    task = fleet.message(to, fleet.director_id, "left behind")
    with fleet.store(write=True) as uow:
        uow.deliveries.add(Delivery(task, to, state, fleet.clock.now()))
        uow.commit()
    return task


def claimed(fleet: Any, drains: RecordingDrains) -> Any:
    service = fleet.service(drains=drains)
    service.claim(fleet.fleet_id, 5)
    return service


def test_a_row_pending_past_the_limit_goes_to_a_drainer(fleet: Any) -> None:
    worker = fleet.members["worker"]
    left_pending(fleet, worker)
    drains = RecordingDrains()
    service = claimed(fleet, drains)
    fleet.clock.advance(STRANDED_AFTER_SECONDS + 1)

    report = service.tick(fleet.fleet_id)

    assert report.drained == (worker,)
    assert drains.started == [[worker]]


def test_a_young_row_is_left_to_its_sender(fleet: Any) -> None:
    left_pending(fleet, fleet.members["worker"])
    drains = RecordingDrains()
    service = claimed(fleet, drains)
    fleet.clock.advance(STRANDED_AFTER_SECONDS - 1)

    report = service.tick(fleet.fleet_id)

    assert report.drained == ()
    assert drains.started == []


def test_settled_rows_and_other_fleets_rows_are_not_drained(fleet: Any, make_fleet: Any) -> None:
    left_pending(fleet, fleet.members["worker"], DeliveryState.SENT)
    other = make_fleet()
    left_pending(other, other.members["worker"])
    drains = RecordingDrains()
    service = claimed(fleet, drains)
    fleet.clock.advance(STRANDED_AFTER_SECONDS + 1)

    assert service.tick(fleet.fleet_id).drained == ()
    assert drains.started == []


def test_the_drained_queue_ends_delivered_and_the_loop_says_so(fleet: Any) -> None:
    director, worker = fleet.director_id, fleet.members["worker"]
    first, second = left_pending(fleet, worker), left_pending(fleet, director)
    drains = RecordingDrains()
    fleet.clock.advance(STRANDED_AFTER_SECONDS + 1)

    run = fleet.run(fleet.service(drains=drains), ticks=1)

    assert drains.started == [[director, worker]]
    assert any(f"(agents {director}, {worker})" in line for line in run.out)
    notifier = RecordingNotifier()
    MessagingService(fleet.store, fleet.clock, notifier, ThreadLocks()).drain_queued(
        drains.started[0]
    )  # what the drainer process does
    assert sorted(a.task_id for a in notifier.announced) == [first, second]
    with fleet.store() as uow:
        assert uow.deliveries.stranded([director, worker], fleet.clock.now()) == []


def test_a_queue_a_drainer_still_holds_is_not_handed_to_another_every_tick(fleet: Any) -> None:
    worker = fleet.members["worker"]
    left_pending(fleet, worker)  # held for a dialog, say: its drainer watches the pane
    drains, locks = RecordingDrains(), ThreadLocks()
    service = fleet.service(drains=drains, locks=locks)
    service.claim(fleet.fleet_id, 5)
    fleet.clock.advance(STRANDED_AFTER_SECONDS + 1)
    with fleet.store() as uow:
        placement = uow.placements.get(worker)
    assert placement is not None

    with locks.hold(queue_key(PushTarget.of(placement)), 1):
        assert service.tick(fleet.fleet_id).drained == ()
    assert service.tick(fleet.fleet_id).drained == (worker,)  # its drainer ended: a new one
    assert drains.started == [[worker]]

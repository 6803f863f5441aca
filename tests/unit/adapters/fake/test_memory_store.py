"""Unit-of-work semantics of the in-memory store, and rollback through the services."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from cafleet.adapters.fake.store import MemoryStore
from cafleet.adapters.fake.store_deliveries import MemoryDeliveries
from cafleet.application.messaging.service import MessagingService
from cafleet.domain.fleet import Fleet

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def test_a_committed_write_is_visible_to_a_later_reader(store: MemoryStore) -> None:
    with store(write=True) as uow:
        fleet_id = uow.fleets.add(Fleet(0, "kept", T0))
        uow.commit()

    with store() as uow:
        assert uow.fleets.get(fleet_id).name == "kept"


def test_a_write_that_raises_midway_leaves_nothing(store: MemoryStore) -> None:
    with pytest.raises(RuntimeError), store(write=True) as uow:
        uow.fleets.add(Fleet(0, "doomed", T0))
        raise RuntimeError("boom")

    with store() as uow:
        assert uow.fleets.list_live() == []
    assert store.commits == 0


def test_a_write_that_is_not_committed_leaves_nothing(store: MemoryStore) -> None:
    with store(write=True) as uow:
        uow.fleets.add(Fleet(0, "forgotten", T0))

    with store() as uow:
        assert uow.fleets.list_live() == []


def test_a_reader_does_not_see_an_open_write(store: MemoryStore) -> None:
    with store(write=True) as writer:
        fleet_id = writer.fleets.add(Fleet(0, "in-flight", T0))
        with store() as reader:
            assert reader.fleets.get(fleet_id) is None
        writer.commit()

    with store() as reader:
        assert reader.fleets.get(fleet_id) is not None


def test_a_read_unit_of_work_cannot_commit(store: MemoryStore) -> None:
    with store() as uow, pytest.raises(RuntimeError):
        uow.commit()


def test_the_write_lock_is_released_after_a_failed_write(store: MemoryStore) -> None:
    with pytest.raises(ValueError), store(write=True):
        raise ValueError("x")

    assert not store.write_lock.locked()


def test_a_broadcast_that_fails_midway_stores_no_message_and_no_ledger_row(
    messaging: MessagingService, world, store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = world.fleet("alpha")
    for n in range(3):
        world.member(made, f"m{n}", pane_id=f"%{n + 1}")
    real_add = MemoryDeliveries.add
    calls = {"n": 0}

    def failing_add(self, delivery) -> None:
        calls["n"] += 1
        if calls["n"] == 3:
            raise RuntimeError("disk full")
        real_add(self, delivery)

    monkeypatch.setattr(MemoryDeliveries, "add", failing_add)

    with pytest.raises(RuntimeError):
        messaging.broadcast(made.fleet.fleet_id, made.director.agent_id, "x")

    assert store.tables.messages == {}
    assert store.tables.deliveries == {}
    assert not store.write_lock.locked()

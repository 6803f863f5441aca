"""A relay on PostgreSQL hears of work for its host by LISTEN/NOTIFY: when the unit of work
that left it commits, never before, and never for another host's work."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from cafleet.adapters.store.postgres.notifications import NotifiedWork
from cafleet.adapters.store.postgres.schema import migrate
from cafleet.adapters.store.postgres.unit_of_work import PostgresUnitOfWorkFactory

pytestmark = pytest.mark.postgres


@pytest.fixture
def store(postgres_url: str) -> Iterator[PostgresUnitOfWorkFactory]:
    migrate(postgres_url)
    made = PostgresUnitOfWorkFactory(postgres_url)
    yield made
    made.close()


@pytest.fixture
def listening(postgres_url: str) -> Iterator[NotifiedWork]:
    signals = NotifiedWork(postgres_url, "b-host")
    assert signals.wait(0.1) is False  # listening from now on; nothing was said yet
    yield signals
    signals.close()


def test_a_wake_is_heard_when_its_unit_of_work_commits(
    store: PostgresUnitOfWorkFactory, listening: NotifiedWork
) -> None:
    with store(write=True) as uow:
        uow.relays.wake("b-host")  # rolled back: never said
    assert listening.wait(0.3) is False

    with store(write=True) as uow:
        uow.relays.wake("b-host")
        uow.commit()
    started = time.monotonic()
    assert listening.wait(5.0) is True
    assert time.monotonic() - started < 1.0


def test_another_host_s_work_does_not_wake_this_relay(
    store: PostgresUnitOfWorkFactory, listening: NotifiedWork
) -> None:
    with store(write=True) as uow:
        uow.relays.wake("c-host")
        uow.commit()
    started = time.monotonic()
    assert listening.wait(0.5) is False
    assert time.monotonic() - started >= 0.45  # waited the time out, not woken


def test_without_a_server_it_waits_out_the_time() -> None:
    unreachable = "postgresql+psycopg://cafleet@/none?host=/nonexistent-socket-dir"
    signals = NotifiedWork(unreachable, "b-host")
    try:
        started = time.monotonic()
        assert signals.wait(0.3) is False
        assert 0.25 <= time.monotonic() - started < 5
    finally:
        signals.close()

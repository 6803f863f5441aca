"""The storage backends the UnitOfWork contract runs against, one builder per name.

A builder takes a StorePlace (a private directory, and a fresh database on the private
PostgreSQL server when it asks for one) and is a context manager yielding a
UnitOfWorkFactory over an empty, migrated store; leaving it releases the store. The
`store` fixture (conftest.py) runs every contract case once per entry of BUILDERS, so
another implementation joins the contract with one function and one entry here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path

from cafleet.adapters.fake.store import MemoryStore
from cafleet.adapters.store.postgres.schema import migrate as migrate_postgres
from cafleet.adapters.store.postgres.unit_of_work import PostgresUnitOfWorkFactory
from cafleet.adapters.store.sqlalchemy.engine import open_engine
from cafleet.adapters.store.sqlalchemy.unit_of_work import SqlUnitOfWorkFactory, sqlite_rules
from cafleet.adapters.store.sqlite.schema import migrate
from cafleet.adapters.store.sqlite.unit_of_work import DirectUnitOfWorkFactory
from cafleet.application.ports.store import UnitOfWorkFactory
from cafleet.domain.errors import CafleetError


@dataclass(frozen=True)
class StorePlace:
    directory: Path
    postgres_url: Callable[[], str]  # a new database; starts the server on first use


StoreBuilder = Callable[[StorePlace], AbstractContextManager[UnitOfWorkFactory]]

# What a store may raise when a write breaks a key (a second row under one primary key):
# the fake refuses at once with ValueError, a database when its unit of work ends, as the
# one-line CafleetError every driver error becomes.
REFUSALS = (ValueError, CafleetError)


@contextmanager
def memory(_place: StorePlace) -> Iterator[UnitOfWorkFactory]:
    yield MemoryStore()


@contextmanager
def sqlalchemy(place: StorePlace) -> Iterator[UnitOfWorkFactory]:
    path = place.directory / "contract.db"
    migrate(path)
    engine = open_engine(path)
    try:
        yield SqlUnitOfWorkFactory(engine, sqlite_rules(path))
    finally:
        engine.dispose()


@contextmanager
def direct(place: StorePlace) -> Iterator[UnitOfWorkFactory]:
    """The standard library's sqlite3, on a file the Alembic migrations built."""
    path = place.directory / "contract.db"
    migrate(path)
    factory = DirectUnitOfWorkFactory(path)
    try:
        yield factory
    finally:
        factory.close()


@contextmanager
def postgres(place: StorePlace) -> Iterator[UnitOfWorkFactory]:
    """SQLAlchemy on psycopg 3, on a database of the private server the migrations built."""
    url = place.postgres_url()
    migrate_postgres(url)
    factory = PostgresUnitOfWorkFactory(url)
    try:
        yield factory
    finally:
        factory.close()


BUILDERS: dict[str, StoreBuilder] = {
    "memory": memory,
    "sqlalchemy": sqlalchemy,
    "direct": direct,
    "postgres": postgres,
}

"""The store a database URL names: SQLite (the default, on the standard sqlite3 module for
speed) or PostgreSQL (SQLAlchemy on psycopg 3). Everything that opens or migrates the store
asks here, so nothing else tells the two apart."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cafleet.adapters.store.sqlite.schema import MigrationReport
    from cafleet.application.ports.store import UnitOfWorkFactory, WorkSignals
    from cafleet.application.ports.system import Clock
    from cafleet.settings import Settings


def open_units_of_work(settings: Settings, *, check_revision: bool = True) -> UnitOfWorkFactory:
    """Units of work on the store; check_revision: refuse a schema not at this version's head
    (skill-install records are read before a migration is demanded)."""
    if settings.on_postgres:
        from cafleet.adapters.store.postgres.unit_of_work import PostgresUnitOfWorkFactory

        return PostgresUnitOfWorkFactory(settings.database_url, check_revision=check_revision)
    from cafleet.adapters.store.sqlite.unit_of_work import DirectUnitOfWorkFactory

    return DirectUnitOfWorkFactory(settings.require_database_path(), check_revision=check_revision)


def store_name(settings: Settings) -> str:
    """The store as a message may name it: the file, or the URL without its password."""
    if settings.on_postgres:
        from cafleet.adapters.store.postgres.errors import shown_url

        return shown_url(settings.database_url)
    return str(settings.require_database_path())


def store_url(settings: Settings) -> str:
    """The database URL as it may be printed (a PostgreSQL password left out)."""
    if settings.on_postgres:
        from cafleet.adapters.store.postgres.errors import shown_url

        return shown_url(settings.database_url)
    return settings.database_url


def migrate_store(settings: Settings) -> MigrationReport:
    if settings.on_postgres:
        from cafleet.adapters.store.postgres.schema import migrate as migrate_postgres

        return migrate_postgres(settings.database_url)
    from cafleet.adapters.store.sqlite.schema import migrate

    return migrate(settings.require_database_path())


def store_revision(settings: Settings) -> str | None:
    """The store's recorded schema revision (None: not created or not migrated yet)."""
    if settings.on_postgres:
        from cafleet.adapters.store.postgres.schema import read_revision as postgres_revision

        return postgres_revision(settings.database_url)
    from cafleet.adapters.store.sqlite.schema import read_revision

    path = settings.database_path
    return None if path is None else read_revision(path)


def work_signals(settings: Settings, host: str, clock: Clock) -> WorkSignals:
    """How a relay hears of work for its host: PostgreSQL's notifications, else its poll."""
    if settings.on_postgres:
        from cafleet.adapters.store.postgres.notifications import NotifiedWork

        return NotifiedWork(settings.database_url, host)
    from cafleet.application.relay.service import PolledWork

    return PolledWork(clock)

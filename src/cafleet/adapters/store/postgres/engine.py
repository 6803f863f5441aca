"""The SQLAlchemy engine for a PostgreSQL URL, and how its transactions begin.

SQLite lets one writer in at a time (BEGIN IMMEDIATE), and the repositories' read-then-write
steps (the next delivery attempt, one live member per pane) rely on that. On PostgreSQL a
writer takes one transaction-level advisory lock first, which gives the same rule without
auditing every such step for row locks; a fleet writes a few rows a second, so one writer at
a time costs nothing measurable. Readers take a REPEATABLE READ snapshot, as a SQLite read
transaction sees one, and never wait for the lock.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.pool import QueuePool

WRITER_OPTION = "cafleet_writer"
# pg_advisory_xact_lock keys: any two 64-bit numbers no other program on the database uses
WRITER_LOCK = 0x43414645_4C454554  # "CAFELEET"
MIGRATION_LOCK = 0x43414645_4D494752  # "CAFEMIGR"
LOCK_TIMEOUT_MS = 5000  # then DatabaseBusy, and a writer tries again (transactions.begun)
CONNECT_TIMEOUT_SECONDS = 10


def is_postgres_url(url: str) -> bool:
    return url.split(":", 1)[0] in {"postgresql", "postgresql+psycopg"}


def driver_url(url: str) -> str:
    """The URL with psycopg 3 named as its driver (SQLAlchemy would pick psycopg2)."""
    scheme, rest = url.split(":", 1)
    return f"postgresql+psycopg:{rest}" if scheme == "postgresql" else url


def open_engine(url: str) -> Engine:
    engine = create_engine(
        driver_url(url),
        poolclass=QueuePool,
        pool_size=5,
        max_overflow=-1,
        pool_pre_ping=True,  # a server restarted since: a fresh connection, not an error
        connect_args={"connect_timeout": CONNECT_TIMEOUT_SECONDS},
    )
    event.listen(engine, "begin", _begin)
    return engine


def begin_options(write: bool) -> dict[str, Any]:
    if write:
        return {WRITER_OPTION: True, "isolation_level": "READ COMMITTED"}
    return {WRITER_OPTION: False, "isolation_level": "REPEATABLE READ"}


def _begin(connection: Connection) -> None:
    if connection.get_execution_options().get(WRITER_OPTION):
        take_lock(connection, WRITER_LOCK)


def take_lock(connection: Connection, key: int) -> None:
    """The advisory lock `key` until the transaction ends, waiting at most LOCK_TIMEOUT_MS."""
    connection.exec_driver_sql(f"SET LOCAL lock_timeout = {LOCK_TIMEOUT_MS}")
    connection.exec_driver_sql(f"SELECT pg_advisory_xact_lock({key})")

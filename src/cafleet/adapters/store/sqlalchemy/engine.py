"""The SQLAlchemy engine, on connections that follow the policy in connections.py."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.pool import QueuePool

from cafleet.adapters.store.sqlite.connections import READ_BEGIN, connect, database_uri

BEGIN_OPTION = "cafleet_begin"


def open_engine(path: Path, *, create: bool = False) -> Engine:
    """An engine for an existing database file (or a new one when create=True)."""
    uri = database_uri(path, create=create)
    # The URL carries no path (the creator opens the file), which would make SQLAlchemy pick
    # a per-thread singleton pool; the admin server answers on many threads, so use a queue.
    engine = create_engine(
        "sqlite+pysqlite://",
        creator=lambda: connect(uri, path),
        poolclass=QueuePool,
        pool_size=5,
        max_overflow=-1,
    )
    event.listen(engine, "begin", _begin)
    return engine


def _begin(connection: Connection) -> None:
    connection.exec_driver_sql(connection.get_execution_options().get(BEGIN_OPTION, READ_BEGIN))

"""Engine construction and the connection policy every connection follows.

WAL, foreign keys and a busy timeout on connect; write transactions begin
with BEGIN IMMEDIATE so the write lock is taken up front and a reader never
has to upgrade into a deadlock.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.pool import QueuePool

from cafleet.adapters.sqlite.errors import translated
from cafleet.adapters.sqlite.files import database_exists
from cafleet.domain.errors import DatabaseMissing, Unavailable

BUSY_TIMEOUT_MS = 5000
BEGIN_OPTION = "cafleet_begin"
WRITE_BEGIN = "BEGIN IMMEDIATE"
READ_BEGIN = "BEGIN"


def open_engine(path: Path, *, create: bool = False) -> Engine:
    """An engine for an existing database file (or a new one when create=True)."""
    if not database_exists(path) and not create:
        raise DatabaseMissing(path)
    if create:
        create_private_database(path)
    mode = "rwc" if create else "rw"
    uri = f"{path.absolute().as_uri()}?mode={mode}"

    def connect() -> sqlite3.Connection:
        with translated(path):
            return sqlite3.connect(
                uri,
                uri=True,
                timeout=BUSY_TIMEOUT_MS / 1000,
                isolation_level=None,
                check_same_thread=False,
            )

    # The URL carries no path (the creator opens the file), which would make SQLAlchemy pick
    # a per-thread singleton pool; the admin server answers on many threads, so use a queue.
    engine = create_engine(
        "sqlite+pysqlite://", creator=connect, poolclass=QueuePool, pool_size=5, max_overflow=-1
    )
    event.listen(engine, "connect", _apply_pragmas)
    event.listen(engine, "begin", _begin)
    return engine


def create_private_database(path: Path) -> None:
    """A new database starts as an empty file of mode 0600 (an empty file is a valid empty
    database): messages may hold secrets, and SQLite gives the -wal and -shm files it makes
    later the mode of the database file. An existing file keeps its mode."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(path, flags, 0o600)
    except FileExistsError:
        return
    except OSError as exc:
        raise Unavailable(f"cannot create database {path}: {exc.strerror or exc}") from None
    with contextlib.suppress(OSError):
        os.close(fd)


def _apply_pragmas(dbapi_connection: sqlite3.Connection, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def _begin(connection: Connection) -> None:
    connection.exec_driver_sql(connection.get_execution_options().get(BEGIN_OPTION, READ_BEGIN))

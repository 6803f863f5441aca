"""The connection policy every SQLite connection follows, on the standard library alone.

WAL, foreign keys and a busy timeout on connect; write transactions begin with BEGIN
IMMEDIATE so the write lock is taken up front and a reader never has to upgrade into a
deadlock. Both storage adapters (SQLAlchemy's and the direct one) open connections here.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from pathlib import Path

from cafleet.adapters.store.sqlite.errors import translated
from cafleet.adapters.store.sqlite.files import database_exists
from cafleet.domain.errors import DatabaseMissing, Unavailable

BUSY_TIMEOUT_MS = 5000
WRITE_BEGIN = "BEGIN IMMEDIATE"
READ_BEGIN = "BEGIN"


def database_uri(path: Path, *, create: bool = False) -> str:
    """The file's URI, after refusing a missing file (or creating a private one)."""
    if not database_exists(path) and not create:
        raise DatabaseMissing(path)
    if create:
        create_private_database(path)
    return f"{path.absolute().as_uri()}?mode={'rwc' if create else 'rw'}"


def connect(uri: str, path: Path) -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are begun explicitly), usable from the
    thread that takes it out of a pool, with the pragmas applied."""
    with translated(path):
        conn = sqlite3.connect(
            uri,
            uri=True,
            timeout=BUSY_TIMEOUT_MS / 1000,
            isolation_level=None,
            check_same_thread=False,
        )
        apply_pragmas(conn)
        return conn


def apply_pragmas(conn: sqlite3.Connection) -> None:
    conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA foreign_keys=ON")
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")


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

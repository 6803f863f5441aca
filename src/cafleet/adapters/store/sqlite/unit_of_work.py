"""Units of work on sqlite3 connections: one connection and one transaction each, rolled
back unless committed. The same rules as the SQLAlchemy unit of work (transactions.py)."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from types import TracebackType

from cafleet.adapters.store.revision import REVISION_QUERY, begun, require_head
from cafleet.adapters.store.sqlite.connections import READ_BEGIN, WRITE_BEGIN, connect, database_uri
from cafleet.adapters.store.sqlite.errors import as_cafleet_error, is_driver_error, translated
from cafleet.adapters.store.sqlite.repositories_deliveries import DirectDeliveries
from cafleet.adapters.store.sqlite.repositories_messages import DirectMessages
from cafleet.adapters.store.sqlite.repositories_operations import (
    DirectInstalls,
    DirectMonitor,
    DirectRelays,
)
from cafleet.adapters.store.sqlite.repositories_roster import (
    DirectAgents,
    DirectFleets,
    DirectPlacements,
)
from cafleet.adapters.store.sqlite.transaction import Transaction
from cafleet.application.ports.store import UnitOfWork, UnitOfWorkFactory


class ConnectionPool:
    """Idle connections to one file, handed to one unit of work at a time: a broadcast
    records its outcomes from several threads at once."""

    def __init__(self, path: Path) -> None:
        self._uri = database_uri(path)
        self._path = path
        self._idle: list[sqlite3.Connection] = []
        self._lock = threading.Lock()

    def take(self) -> sqlite3.Connection:
        with self._lock:
            if self._idle:
                return self._idle.pop()
        conn = connect(self._uri, self._path)
        conn.row_factory = sqlite3.Row  # by column name, in C
        return conn

    def give_back(self, conn: sqlite3.Connection) -> None:
        with self._lock:
            self._idle.append(conn)

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()


class DirectUnitOfWork(UnitOfWork):
    def __init__(self, pool: ConnectionPool, path: Path, *, write: bool) -> None:
        self._pool = pool
        self._path = path
        self._write = write
        self._conn: sqlite3.Connection | None = None

    def __enter__(self) -> DirectUnitOfWork:
        conn = self._conn = begun(self._begin, write=self._write)
        transaction = self._transaction = Transaction(conn, self._begin_statement)
        self.fleets = DirectFleets(transaction)
        self.agents = DirectAgents(transaction)
        self.placements = DirectPlacements(transaction)
        self.messages = DirectMessages(transaction)
        self.deliveries = DirectDeliveries(transaction)
        self.monitor = DirectMonitor(transaction)
        self.installs = DirectInstalls(transaction)
        self.relays = DirectRelays(transaction)
        return self

    @property
    def _begin_statement(self) -> str:
        return WRITE_BEGIN if self._write else READ_BEGIN

    def _begin(self) -> sqlite3.Connection:
        """A pooled connection inside a begun transaction (the write lock taken up front)."""
        with translated(self._path):
            conn = self._pool.take()
            try:
                conn.execute(self._begin_statement)
            except sqlite3.Error:
                self._pool.give_back(conn)  # a refused BEGIN (busy) leaves it as it was
                raise
            except BaseException:
                conn.close()
                raise
        return conn

    def commit(self) -> None:
        assert self._conn is not None, "commit() outside the unit of work"
        with translated(self._path):
            self._transaction.commit()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            self._end(conn)
        if exc is not None and is_driver_error(exc):
            raise as_cafleet_error(exc, self._path) from exc

    def _end(self, conn: sqlite3.Connection) -> None:
        """Roll back what was not committed; a connection that cannot is not reused."""
        try:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
        except sqlite3.Error:
            conn.close()
            return
        self._pool.give_back(conn)


class DirectUnitOfWorkFactory(UnitOfWorkFactory):
    def __init__(self, path: Path, *, check_revision: bool = True) -> None:
        self._pool = ConnectionPool(path)
        self._path = path
        self._revision_checked = not check_revision

    def __call__(self, *, write: bool = False) -> DirectUnitOfWork:
        if not self._revision_checked:
            self._require_head()
        return DirectUnitOfWork(self._pool, self._path, write=write)

    def _require_head(self) -> None:
        """Once per process: see transactions.require_head."""
        conn = self._pool.take()
        try:
            with translated(self._path):
                row = conn.execute(REVISION_QUERY).fetchone()
        finally:
            self._pool.give_back(conn)
        require_head(None if row is None else row["version_num"])
        self._revision_checked = True

    def close(self) -> None:
        self._pool.close()

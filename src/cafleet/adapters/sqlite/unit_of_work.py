"""A unit of work is one connection and one transaction; it rolls back unless committed."""

from __future__ import annotations

from pathlib import Path
from types import TracebackType

from sqlalchemy import Connection, Engine

from cafleet.adapters.sqlite.connections import READ_BEGIN, WRITE_BEGIN
from cafleet.adapters.sqlite.engine import BEGIN_OPTION
from cafleet.adapters.sqlite.errors import as_cafleet_error, is_driver_error, translated
from cafleet.adapters.sqlite.repositories import (
    SqlAgents,
    SqlDeliveries,
    SqlFleets,
    SqlInstalls,
    SqlMessages,
    SqlMonitor,
    SqlPlacements,
)
from cafleet.adapters.sqlite.transactions import REVISION_QUERY, begun, require_head
from cafleet.application.ports import UnitOfWork, UnitOfWorkFactory


class SqlUnitOfWork(UnitOfWork):
    def __init__(self, engine: Engine, path: Path, *, write: bool) -> None:
        self._engine = engine
        self._path = path
        self._write = write
        self._conn: Connection | None = None

    def __enter__(self) -> SqlUnitOfWork:
        conn = self._conn = begun(self._begin, write=self._write)
        self.fleets = SqlFleets(conn)
        self.agents = SqlAgents(conn)
        self.placements = SqlPlacements(conn)
        self.messages = SqlMessages(conn)
        self.deliveries = SqlDeliveries(conn)
        self.monitor = SqlMonitor(conn)
        self.installs = SqlInstalls(conn)
        return self

    def _begin(self) -> Connection:
        with translated(self._path):
            conn = self._engine.connect().execution_options(
                **{BEGIN_OPTION: WRITE_BEGIN if self._write else READ_BEGIN}
            )
            try:
                conn.begin()
            except BaseException:
                conn.close()
                raise
        return conn

    def commit(self) -> None:
        assert self._conn is not None, "commit() outside the unit of work"
        with translated(self._path):
            self._conn.commit()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.rollback()
            conn.close()
        if exc is not None and is_driver_error(exc):
            raise as_cafleet_error(exc, self._path) from exc


class SqlUnitOfWorkFactory(UnitOfWorkFactory):
    def __init__(self, engine: Engine, path: Path, *, check_revision: bool = True) -> None:
        self._engine = engine
        self._path = path
        self._revision_checked = not check_revision

    def __call__(self, *, write: bool = False) -> SqlUnitOfWork:
        if not self._revision_checked:
            self._require_head()
        return SqlUnitOfWork(self._engine, self._path, write=write)

    def _require_head(self) -> None:
        """Once per process: see transactions.require_head."""
        with translated(self._path), self._engine.connect() as conn:
            require_head(conn.exec_driver_sql(REVISION_QUERY).scalar())
        self._revision_checked = True

"""A unit of work is one connection and one transaction; it rolls back unless committed.

The same units of work and repositories run on SQLite and PostgreSQL; what differs between
the engines (how a transaction begins, what a driver error means, how messages are searched)
is a `SqlEngineRules`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from sqlalchemy import Connection, Engine

from cafleet.adapters.store.revision import REVISION_QUERY, begun, require_head
from cafleet.adapters.store.sqlalchemy.engine import BEGIN_OPTION
from cafleet.adapters.store.sqlalchemy.repositories_deliveries import SqlDeliveries
from cafleet.adapters.store.sqlalchemy.repositories_messages import (
    MessageSearch,
    SqlMessages,
    fts5_search,
)
from cafleet.adapters.store.sqlalchemy.repositories_operations import (
    SqlInstalls,
    SqlMonitor,
    SqlRelays,
    no_wake,
)
from cafleet.adapters.store.sqlalchemy.repositories_roster import (
    SqlAgents,
    SqlFleets,
    SqlPlacements,
)
from cafleet.adapters.store.sqlite.connections import READ_BEGIN, WRITE_BEGIN
from cafleet.adapters.store.sqlite.errors import as_cafleet_error, is_driver_error
from cafleet.application.ports.store import UnitOfWork, UnitOfWorkFactory
from cafleet.domain.errors import CafleetError


@dataclass(frozen=True)
class SqlEngineRules:
    """begin_options(write): the connection's execution options for a reader or a writer;
    error(exc): the one-line error a driver error becomes (None: not a driver error);
    wake(conn, host): tell a host's relay at commit that work waits (RelayRepository.wake);
    search: the engine's full-text search of messages (MessageRepository.search)."""

    begin_options: Callable[[bool], dict[str, Any]]
    error: Callable[[BaseException], CafleetError | None]
    wake: Callable[[Connection, str], None] = no_wake
    search: MessageSearch = fts5_search

    @contextmanager
    def translated(self) -> Iterator[None]:
        try:
            yield
        except Exception as exc:
            if (error := self.error(exc)) is None:
                raise
            raise error from exc


def sqlite_rules(path: Path) -> SqlEngineRules:
    """SQLite: a writer begins with BEGIN IMMEDIATE (see connections.py)."""
    return SqlEngineRules(
        begin_options=lambda write: {BEGIN_OPTION: WRITE_BEGIN if write else READ_BEGIN},
        error=lambda exc: as_cafleet_error(exc, path) if is_driver_error(exc) else None,
    )


class SqlUnitOfWork(UnitOfWork):
    def __init__(self, engine: Engine, rules: SqlEngineRules, *, write: bool) -> None:
        self._engine = engine
        self._rules = rules
        self._write = write
        self._conn: Connection | None = None

    def __enter__(self) -> SqlUnitOfWork:
        conn = self._conn = begun(self._begin, write=self._write)
        self.fleets = SqlFleets(conn)
        self.agents = SqlAgents(conn)
        self.placements = SqlPlacements(conn)
        self.messages = SqlMessages(conn, self._rules.search)
        self.deliveries = SqlDeliveries(conn)
        self.monitor = SqlMonitor(conn)
        self.installs = SqlInstalls(conn)
        self.relays = SqlRelays(conn, self._rules.wake)
        return self

    def _begin(self) -> Connection:
        with self._rules.translated():
            conn = self._engine.connect().execution_options(
                **self._rules.begin_options(self._write)
            )
            try:
                conn.begin()
            except BaseException:
                conn.close()
                raise
        return conn

    def commit(self) -> None:
        assert self._conn is not None, "commit() outside the unit of work"
        with self._rules.translated():
            self._conn.commit()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            with self._rules.translated():  # a server gone mid-transaction fails its rollback
                try:
                    conn.rollback()
                finally:
                    conn.close()
        if exc is not None and (error := self._rules.error(exc)) is not None:
            raise error from exc


class SqlUnitOfWorkFactory(UnitOfWorkFactory):
    def __init__(
        self, engine: Engine, rules: SqlEngineRules, *, check_revision: bool = True
    ) -> None:
        self._engine = engine
        self._rules = rules
        self._revision_checked = not check_revision

    def __call__(self, *, write: bool = False) -> SqlUnitOfWork:
        if not self._revision_checked:
            self._require_head()
        return SqlUnitOfWork(self._engine, self._rules, write=write)

    def _require_head(self) -> None:
        """Once per process: see transactions.require_head."""
        with self._rules.translated(), self._engine.connect() as conn:
            require_head(conn.exec_driver_sql(REVISION_QUERY).scalar())
        self._revision_checked = True

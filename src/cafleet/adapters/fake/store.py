"""An in-memory unit of work with the same semantics as the SQLite one.

A unit of work works on a copy of the store and publishes it on commit, so a
unit of work that is not committed leaves no trace. A lock serialises writers
the way SQLite's write lock does.
"""

from __future__ import annotations

import copy
import threading
from dataclasses import dataclass, replace
from types import TracebackType

from cafleet.adapters.fake.store_deliveries import MemoryDeliveries
from cafleet.adapters.fake.store_messages import MemoryMessages
from cafleet.adapters.fake.store_operations import MemoryInstalls, MemoryMonitor, MemoryRelays
from cafleet.adapters.fake.store_roster import MemoryAgents, MemoryFleets, MemoryPlacements
from cafleet.adapters.fake.store_tables import MemoryTables
from cafleet.application.ports.store import UnitOfWork, UnitOfWorkFactory
from cafleet.domain.errors import CafleetError


class MemoryUnitOfWork(UnitOfWork):
    def __init__(self, owner: MemoryStore, *, write: bool) -> None:
        self._owner = owner
        self._write = write
        self._tables: MemoryTables | None = None

    def __enter__(self) -> MemoryUnitOfWork:
        if self._write:
            self._owner.write_lock.acquire()
        tables = copy.deepcopy(self._owner.tables)
        self._tables = tables
        self.fleets = MemoryFleets(tables)
        self.agents = MemoryAgents(tables)
        self.placements = MemoryPlacements(tables)
        self.messages = MemoryMessages(tables)
        self.deliveries = MemoryDeliveries(tables)
        self.monitor = MemoryMonitor(tables)
        self.installs = MemoryInstalls(tables)
        self.relays = MemoryRelays(tables)
        return self

    def commit(self) -> None:
        assert self._tables is not None, "commit() outside the unit of work"
        if not self._write:
            raise RuntimeError("commit() on a read-only unit of work")
        refusal = self._owner.refusal()
        if refusal is not None and not refusal.applied:
            raise refusal.error
        # a copy: writes after commit() belong to the next transaction, published only by
        # another commit, as a database connection begins a new one
        self._owner.tables = copy.deepcopy(self._tables)
        self._owner.commits += 1
        if refusal is not None:
            raise refusal.error

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._tables = None
        if self._write:
            self._owner.write_lock.release()


@dataclass(frozen=True)
class CommitRefusal:
    """How commits fail: `error` raised, after the commit was `applied` (an answer lost with
    the connection) or instead of it (a full disk); `times`: how many (None: all)."""

    error: CafleetError
    applied: bool = False
    times: int | None = None


class MemoryStore(UnitOfWorkFactory):
    """The fake database: call it like a unit-of-work factory."""

    def __init__(self) -> None:
        self.tables = MemoryTables()
        self.write_lock = threading.Lock()
        self.commits = 0
        self._refusal: CommitRefusal | None = None
        self._commits_allowed = 0

    def __call__(self, *, write: bool = False) -> MemoryUnitOfWork:
        return MemoryUnitOfWork(self, write=write)

    def refuse_commits(self, refusal: CommitRefusal | None, after: int = 0) -> None:
        """Commits after the next `after` fail as `refusal` says (None: they work again)."""
        self._refusal, self._commits_allowed = refusal, after

    def refusal(self) -> CommitRefusal | None:
        """How the commit being made fails (None: it works); called once per commit."""
        refusal = self._refusal
        if refusal is None or self._commits_allowed > 0:
            self._commits_allowed -= 1
            return None
        if refusal.times is not None:
            left = refusal.times - 1
            self._refusal = replace(refusal, times=left) if left > 0 else None
        return refusal

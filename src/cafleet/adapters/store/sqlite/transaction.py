"""A unit of work's connection, which begins its transaction again on the first statement
after a commit: writes after commit() stay uncommitted, as on SQLAlchemy's connections."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any


class Transaction:
    def __init__(self, conn: sqlite3.Connection, begin: str) -> None:
        self._conn = conn
        self._begin = begin

    def execute(self, sql: str, params: Sequence[Any] = ()) -> sqlite3.Cursor:
        self._ensure_begun()
        return self._conn.execute(sql, params)

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> sqlite3.Cursor:
        self._ensure_begun()
        return self._conn.executemany(sql, rows)

    def commit(self) -> None:
        """Commit; the next statement opens a new transaction (BEGIN is lazy, so nothing is
        locked between a commit and the unit of work's end)."""
        if self._conn.in_transaction:
            self._conn.execute("COMMIT")

    def _ensure_begun(self) -> None:
        if not self._conn.in_transaction:
            self._conn.execute(self._begin)

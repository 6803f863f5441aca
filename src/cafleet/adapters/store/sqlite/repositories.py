"""The repository ports in plain SQL on one sqlite3 connection (a unit of work's).

Each method runs the statement its SQLAlchemy twin builds (SqlFleets for DirectFleets, and so
on); the same contract tests run over both. Rows map through the shared mappers in
adapters/store/mapping.py. One module per family, as the SQLAlchemy store has them:
repositories_roster, repositories_messages, repositories_deliveries, repositories_operations.
This module holds what they share.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from cafleet.adapters.store.sqlite.statements import chunks, insert, marks, update
from cafleet.adapters.store.sqlite.transaction import Transaction
from cafleet.domain.message import MessageState

OPEN = MessageState.INPUT_REQUIRED.value


class DirectRepository:
    """A repository's statements on its unit of work's connection."""

    def __init__(self, transaction: Transaction) -> None:
        self._c = transaction

    def _run(self, sql: str, params: Sequence[Any] = ()) -> sqlite3.Cursor:
        return self._c.execute(sql, params)

    def _all(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        return list(self._run(sql, params))

    def _first(self, sql: str, params: Sequence[Any] = ()) -> sqlite3.Row | None:
        found: sqlite3.Row | None = self._run(sql, params).fetchone()
        return found

    def _insert(self, table: str, values: dict[str, Any]) -> int:
        cursor = self._run(*insert(table, values))
        assert cursor.lastrowid is not None, "insert without a row id"
        return cursor.lastrowid

    def _update(self, table: str, values: dict[str, Any], where: str, *params: Any) -> int:
        sql, bound = update(table, values, where)
        return self._run(sql, [*bound, *params]).rowcount

    def _grouped(self, sql: str, ids: Sequence[int], *params: Any) -> list[sqlite3.Row]:
        """sql with `{ids}` as an IN list, run chunk by chunk (each chunk's groups are
        disjoint from the others', so the results concatenate)."""
        found: list[sqlite3.Row] = []
        for chunk in chunks(list(ids)):
            found.extend(self._all(sql.format(ids=marks(len(chunk))), [*chunk, *params]))
        return found

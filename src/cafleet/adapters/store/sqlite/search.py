"""Message search on SQLite's FTS5 index (`tasks_fts`, migration 0011), in plain SQL with
`?` placeholders: the direct adapter and SQLAlchemy's run the same statement.

A plain query becomes each word as a quoted FTS5 string (a `"` doubled), so nothing the user
typed is read as FTS5 syntax; a raw query is passed as it is. Ranking is FTS5's bm25 (lower
is better: the score is its negation), the snippet FTS5's own. Ranking reads every match it
ranks, so only the newest RANKED_MATCHES matches are ranked.
"""

from __future__ import annotations

from typing import Any

from cafleet.adapters.store.sqlite.statements import COLUMNS
from cafleet.domain.errors import Invalid
from cafleet.domain.message import MessageType
from cafleet.domain.search import HIGHLIGHT, RANKED_MATCHES, SNIPPET_WORDS, SearchQuery


def fts5_match(query: SearchQuery) -> str:
    """The MATCH expression: the raw text, or every word as a quoted string (all must occur)."""
    if query.raw:
        return query.text
    return " ".join('"' + word.replace('"', '""') + '"' for word in query.words)


def search_statement(
    fleet_id: int,
    query: SearchQuery,
    since: str | None,
    offset: int,
    limit: int,
    ranked: int = RANKED_MATCHES,
) -> tuple[str, list[Any]]:
    """The statement and its parameters: the fleet's messages (summaries left out) that
    match, best first; each row has the task's columns, then `score` and `snippet`. Only
    the newest `ranked` matches are ranked (the floor: the oldest of them), so a word
    found in most messages costs no more than one found in a few thousand."""
    columns = ", ".join(f"t.{c}" for c in COLUMNS["tasks"])
    snippet = f"snippet(tasks_fts, 0, '{HIGHLIGHT[0]}', '{HIGHLIGHT[1]}', '…', {SNIPPET_WORDS})"
    matching = (
        " FROM tasks_fts JOIN tasks t ON t.task_id = tasks_fts.rowid"
        " JOIN agents a ON a.agent_id = t.context_id"
        " WHERE tasks_fts MATCH ? AND a.fleet_id = ? AND t.type != ?"
    )
    params: list[Any] = [fts5_match(query), fleet_id, MessageType.BROADCAST_SUMMARY.value]
    for column, value in (
        ("t.from_agent_id = ?", query.from_agent_id),
        ("t.to_agent_id = ?", query.to_agent_id),
        ("t.created_at >= ?", since),
    ):
        if value is not None:
            matching += f" AND {column}"
            params.append(value)
    floor = (
        f"SELECT coalesce(min(rowid), 0) FROM (SELECT tasks_fts.rowid AS rowid{matching}"
        " ORDER BY tasks_fts.rowid DESC LIMIT ?)"
    )
    sql = (
        f"SELECT {columns}, -bm25(tasks_fts) AS score, {snippet} AS snippet{matching}"
        f" AND tasks_fts.rowid >= ({floor})"
        " ORDER BY bm25(tasks_fts), t.task_id DESC LIMIT ? OFFSET ?"
    )
    return sql, [*params, *params, ranked, limit, offset]


_QUERY_SIGNS = ("fts5", "syntax error", "no such column", "unterminated string")


def query_error(query: SearchQuery, error: Exception) -> Invalid | None:
    """A raw query SQLite could not read, as one line; None for any other error."""
    text = str(getattr(error, "orig", error)).strip()
    first = text.splitlines()[0] if text else type(error).__name__
    if query.raw and any(sign in first.lower() for sign in _QUERY_SIGNS):
        return Invalid(
            f"the search query is not valid FTS5 syntax ({first}); drop --raw to search"
            " for its words as text"
        )
    return None

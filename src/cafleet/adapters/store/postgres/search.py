"""Message search on PostgreSQL's text search over each body's stored vector
(`tasks.text_search`, migration 0012, GIN-indexed) in the `simple` configuration (words as
written, no stemming, as SQLite's FTS5 tokenizer reads them): a plain query through
`plainto_tsquery` (every word must occur; no syntax), a raw one through `to_tsquery`; the
newest RANKED_MATCHES matches ranked by `ts_rank`, the snippet from `ts_headline` (for the
page returned only).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, text
from sqlalchemy.exc import DBAPIError

from cafleet.adapters.store import mapping as rows
from cafleet.adapters.store.sqlite.statements import COLUMNS
from cafleet.domain.errors import Invalid
from cafleet.domain.message import MessageType
from cafleet.domain.search import (
    HIGHLIGHT,
    RANKED_MATCHES,
    SNIPPET_WORDS,
    SearchHit,
    SearchQuery,
)

_SYNTAX = {"42601", "22023"}  # syntax error, invalid parameter value (a malformed tsquery)
_VECTOR = "t.text_search"
# The query and the fleet's agents as values the planner sees (not a join, nor a CTE's
# column): it then knows a common word's matches are many, and walks the newest messages
# backwards to the first RANKED_MATCHES of them instead of reading them all.
_FLEET_AGENTS = "ARRAY(SELECT agent_id FROM agents WHERE fleet_id = :fleet)"
_COLUMNS = ", ".join(f"t.{c}" for c in COLUMNS["tasks"])  # not the vector: the page needs none
_HEADLINE = (
    f"StartSel={HIGHLIGHT[0]}, StopSel={HIGHLIGHT[1]}, MaxWords={SNIPPET_WORDS},"
    f" MinWords={SNIPPET_WORDS // 2}, MaxFragments=1, FragmentDelimiter=…"
)


def search(
    conn: Connection, fleet_id: int, query: SearchQuery, offset: int, limit: int
) -> list[SearchHit]:
    parse = "to_tsquery" if query.raw else "plainto_tsquery"
    matching = (
        f"SELECT t.task_id FROM tasks t WHERE {_VECTOR} @@ {parse}('simple', :query)"
        f" AND t.context_id = ANY({_FLEET_AGENTS}) AND t.type != :summary"
    )
    params: dict[str, Any] = {
        "headline": _HEADLINE,
        "query": query.text,
        "fleet": fleet_id,
        "summary": MessageType.BROADCAST_SUMMARY.value,
        "ranked": RANKED_MATCHES,
    }
    if query.from_agent_id is not None:
        matching += " AND t.from_agent_id = :sender"
        params["sender"] = query.from_agent_id
    if query.to_agent_id is not None:
        matching += " AND t.to_agent_id = :recipient"
        params["recipient"] = query.to_agent_id
    if query.since is not None:
        matching += " AND t.created_at >= :since"
        params["since"] = rows.ts(query.since)
    # the newest RANKED_MATCHES matches are ranked; the snippets only for the page returned
    sql = (
        f"WITH asked AS (SELECT {parse}('simple', :query) AS q),"
        f" newest AS ({matching} ORDER BY t.task_id DESC LIMIT :ranked),"
        f" ranked AS (SELECT {_COLUMNS}, ts_rank({_VECTOR}, asked.q) AS score"
        f" FROM newest JOIN tasks t ON t.task_id = newest.task_id, asked"
        f" ORDER BY score DESC, t.task_id DESC LIMIT :limit OFFSET :offset)"
        f" SELECT ranked.*, ts_headline('simple', ranked.text, asked.q, :headline) AS snippet"
        f" FROM ranked, asked ORDER BY ranked.score DESC, ranked.task_id DESC"
    )
    try:
        found = conn.execute(text(sql), {**params, "limit": limit, "offset": offset})
    except DBAPIError as exc:
        state = str(getattr(exc.orig, "sqlstate", "") or "")
        if query.raw and state in _SYNTAX:
            first = str(exc.orig).strip().splitlines()[0]
            raise Invalid(
                f"the search query is not valid to_tsquery syntax ({first}); drop --raw to"
                " search for its words as text"
            ) from None
        raise
    return [rows.hit_from(r) for r in found.mappings()]

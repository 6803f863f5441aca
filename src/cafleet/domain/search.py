"""Searching a fleet's messages: what is asked, and what a hit is.

By default a query is words, each matched as text (quotes, operators and `*` included, as
far as the store's tokenizer keeps them); a raw query is the store's own search syntax
(SQLite's FTS5, PostgreSQL's `to_tsquery`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from cafleet.domain.errors import UsageProblem
from cafleet.domain.message import Message

HIGHLIGHT = ("«", "»")  # around each matched word in a snippet
DEFAULT_LIMIT = 20
SNIPPET_WORDS = 12
# a query matching more messages than this ranks the newest of them only: ranking reads every
# match, and an old message that merely mentions a common word is rarely the one sought
RANKED_MATCHES = 5000


@dataclass(frozen=True)
class SearchQuery:
    text: str
    raw: bool = False  # the store's own syntax instead of plain words
    from_agent_id: int | None = None
    to_agent_id: int | None = None
    since: datetime | None = None  # messages created at or after
    limit: int = DEFAULT_LIMIT

    @property
    def words(self) -> list[str]:
        return self.text.split()

    @property
    def folds_broadcasts(self) -> bool:
        """A broadcast is one hit, shown as to all, unless a recipient is named: then each
        hit is that recipient's own copy."""
        return self.to_agent_id is None

    def checked(self) -> SearchQuery:
        if not self.words:
            raise UsageProblem("the search query is empty")
        return self


@dataclass(frozen=True)
class SearchHit:
    message: Message
    score: float  # higher is better, comparable only within one search
    snippet: str  # the body around the match, matched words within HIGHLIGHT


def marked(text: str, words: list[str]) -> str:
    """`text` with every occurrence of the words (any case) within HIGHLIGHT: the memory
    store's snippet, which a database's own highlighter replaces."""
    if not words:
        return text
    longest_first = sorted(words, key=len, reverse=True)
    pattern = re.compile(r"\b(?:" + "|".join(re.escape(w) for w in longest_first) + r")\b", re.I)
    return pattern.sub(lambda m: f"{HIGHLIGHT[0]}{m.group(0)}{HIGHLIGHT[1]}", text)

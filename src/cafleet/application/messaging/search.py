"""Searching a fleet's messages (domain/search.py): any agent of the fleet may, a deleted
fleet's included, as it may read any of its messages with `message show`."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from itertools import islice

from cafleet.application.identity import history_reader
from cafleet.application.lookups import existing_fleet
from cafleet.application.ports.store import UnitOfWork, UnitOfWorkFactory
from cafleet.domain.identity import MemberCredential
from cafleet.domain.message import Message, once_per_broadcast
from cafleet.domain.search import SearchHit, SearchQuery

PAGE_FACTOR = 4  # hits read per page, per hit wanted: a broadcast's copies fold into one


@dataclass(frozen=True)
class SearchResult:
    query: SearchQuery
    hits: tuple[SearchHit, ...]
    fleet_deleted_at: datetime | None = None


class SearchService:
    def __init__(self, uow: UnitOfWorkFactory) -> None:
        self._uow = uow

    def search(
        self,
        fleet_id: int,
        agent_id: int | None,
        query: SearchQuery,
        caller: MemberCredential | None = None,
    ) -> SearchResult:
        """The best `query.limit` hits. A broadcast counts once (its best copy), unless the
        query names a recipient, who has a copy of its own. `agent_id` None: the fleet's
        Administrator's view (the WebUI), which needs no acting agent."""
        query = query.checked()
        with self._uow() as uow:
            fleet = (
                existing_fleet(uow, fleet_id)
                if agent_id is None
                else history_reader(uow, fleet_id, agent_id, caller)
            )
            found = _pages(uow, fleet_id, query)
            if query.folds_broadcasts:
                found = once_per_broadcast(found, _message_of)
            hits = list(islice(found, query.limit))
        return SearchResult(query, tuple(hits), fleet.deleted_at)


def _pages(uow: UnitOfWork, fleet_id: int, query: SearchQuery) -> Iterator[SearchHit]:
    """Hits best first, page after page until the store has no more."""
    size = max(query.limit * PAGE_FACTOR, 20)
    offset = 0
    while True:
        page = uow.messages.search(fleet_id, query, offset, size)
        yield from page
        if len(page) < size:
            return
        offset += size


def _message_of(hit: SearchHit) -> Message:
    return hit.message

"""SearchService on the memory store: who may search, the filters, a broadcast counted once
unless a recipient is named, the limit across pages, and an empty query refused."""

from __future__ import annotations

import pytest

from cafleet.application.messaging.search import SearchService
from cafleet.application.messaging.service import MessagingService
from cafleet.domain.errors import CafleetError, ErrorKind
from cafleet.domain.search import SearchQuery

pytestmark = pytest.mark.usefixtures("world")


@pytest.fixture
def searching(store) -> SearchService:
    return SearchService(store)


@pytest.fixture
def team(world):
    made = world.fleet("alpha")
    coder = world.member(made, "coder", pane_id="%1")
    tester = world.member(made, "tester", pane_id="%2")
    return made, made.director.agent_id, coder, tester


def ids(result) -> list[int]:
    return [hit.message.task_id for hit in result.hits]


def test_a_member_searches_the_whole_fleet_and_the_best_hit_comes_first(
    messaging: MessagingService, searching: SearchService, team
) -> None:
    made, director, coder, tester = team
    fleet_id = made.fleet.fleet_id
    once = messaging.send(fleet_id, director, coder, "flaky test in ci").message.task_id
    twice = messaging.send(fleet_id, coder, tester, "flaky flaky retry").message.task_id
    messaging.send(fleet_id, tester, director, "all green")

    found = searching.search(fleet_id, tester, SearchQuery("flaky"))

    assert ids(found) == [twice, once]  # the tester sees a message between the others too
    assert "«flaky»" in found.hits[1].snippet


def test_filters_and_since_narrow_the_hits(
    messaging: MessagingService, searching: SearchService, team, clock
) -> None:
    made, director, coder, tester = team
    fleet_id = made.fleet.fleet_id
    old = messaging.send(fleet_id, director, coder, "deploy now").message.task_id
    clock.advance(7200)
    start = clock.now()
    new = messaging.send(fleet_id, coder, tester, "deploy later").message.task_id

    def search(**filters: object) -> list[int]:
        return ids(searching.search(fleet_id, None, SearchQuery("deploy", **filters)))  # type: ignore[arg-type]

    assert sorted(search()) == [old, new]
    assert search(from_agent_id=director) == [old]
    assert search(to_agent_id=tester) == [new]
    assert search(since=start) == [new]


def test_a_broadcast_is_one_hit_unless_a_recipient_is_named(
    messaging: MessagingService, searching: SearchService, team
) -> None:
    made, director, _coder, tester = team
    fleet_id = made.fleet.fleet_id
    sent = messaging.broadcast(fleet_id, director, "standup in five")
    copies = {d.recipient_agent_id: d.task_id for d in sent.deliveries}

    everyone = searching.search(fleet_id, None, SearchQuery("standup"))
    to_tester = searching.search(fleet_id, None, SearchQuery("standup", to_agent_id=tester))

    assert len(everyone.hits) == 1 and everyone.hits[0].message.task_id in copies.values()
    assert ids(to_tester) == [copies[tester]]


def test_the_limit_holds_across_pages_of_folded_broadcasts(
    messaging: MessagingService, searching: SearchService, team
) -> None:
    made, director, *_ = team
    fleet_id = made.fleet.fleet_id
    for n in range(30):
        messaging.broadcast(fleet_id, director, f"tick {n}")

    found = searching.search(fleet_id, None, SearchQuery("tick", limit=25))

    origins = [hit.message.origin_task_id for hit in found.hits]
    assert len(origins) == 25 and len(set(origins)) == 25


def test_an_empty_query_and_a_stranger_are_refused(
    messaging: MessagingService, searching: SearchService, team, world
) -> None:
    made, director, *_ = team
    other = world.fleet("beta")
    with pytest.raises(CafleetError) as empty:
        searching.search(made.fleet.fleet_id, director, SearchQuery("   "))
    with pytest.raises(CafleetError) as stranger:
        searching.search(made.fleet.fleet_id, other.director.agent_id, SearchQuery("x"))

    assert empty.value.kind is ErrorKind.USAGE
    assert "empty" in empty.value.message
    assert stranger.value.kind is not ErrorKind.USAGE

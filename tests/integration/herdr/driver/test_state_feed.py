"""HerdrStateFeed over the fake herdr server: the seed, pushed status changes, closed panes,
panes watched later, a dropped connection, a refused subscription, and close()."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from tests.fakes.herdr_server import FakeHerdrServer, wait_until

from cafleet.adapters.herdr.client import HerdrClient, HerdrRequestFailed
from cafleet.adapters.herdr.feed import HerdrStateFeed, HerdrStateFeeds
from cafleet.application.ports.panes import FeedReading
from cafleet.domain.placement import Multiplexer

DEADLINE = 5.0
AT = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


@pytest.fixture
def fast_server(server: FakeHerdrServer) -> FakeHerdrServer:
    server.event_poll = 0.01
    return server


@pytest.fixture
def members(fast_server: FakeHerdrServer) -> list[str]:
    """Two more panes beside the root pane, one working, one idle."""
    first = fast_server.handle_line(_split(fast_server.root_pane))["result"]["pane"]["pane_id"]
    second = fast_server.handle_line(_split(first))["result"]["pane"]["pane_id"]
    fast_server.set_agent_status(first, "working", agent="claude")
    fast_server.set_agent_status(second, "idle", agent="codex")
    return [first, second]


@pytest.fixture
def feed(fast_server: FakeHerdrServer) -> Iterator[HerdrStateFeed]:
    made = HerdrStateFeed(
        fast_server.socket_path,
        now=lambda: AT,
        backoff=(0.02, 0.1),
        read_seconds=0.01,
        relist_seconds=0.01,
    )
    try:
        yield made
    finally:
        made.close()


def _split(target: str) -> bytes:
    request = {"id": "t", "method": "pane.split", "params": {"target_pane_id": target,
               "direction": "down"}}  # fmt: skip
    return json.dumps(request).encode()


def live(feed: HerdrStateFeed, watched: list[str]) -> FeedReading:
    reading: FeedReading = wait_until(lambda: feed.reading(watched), "a live feed", DEADLINE)
    return reading


def status_of(feed: HerdrStateFeed, watched: list[str], pane: str, status: str) -> FeedReading:
    def seen() -> FeedReading | None:
        reading = feed.reading(watched)
        return reading if reading is not None and reading.states.get(pane) == status else None

    reading: FeedReading = wait_until(seen, f"{pane} {status}", DEADLINE)
    return reading


def listings(server: FakeHerdrServer) -> int:
    return server.methods().count("pane.list")


def test_the_first_reading_is_none_until_the_seed_and_the_subscription(
    feed: HerdrStateFeed, members: list[str]
) -> None:
    assert feed.reading(members) is None

    reading = live(feed, members)

    assert reading.states == {members[0]: "working", members[1]: "idle"}
    assert set(reading.panes) >= set(members)
    assert reading.panes[members[0]].agent == "claude"
    assert reading.since == {members[0]: AT, members[1]: AT}


def test_the_subscription_is_herdrs_request_shape(
    feed: HerdrStateFeed, fast_server: FakeHerdrServer, members: list[str]
) -> None:
    live(feed, members)

    subscribe = [p for m, p in fast_server.request_log() if m == "events.subscribe"]
    assert subscribe == [
        {
            "subscriptions": [
                {"type": "pane.closed"},
                {"type": "pane.exited"},
                *({"type": "pane.agent_status_changed", "pane_id": p} for p in sorted(members)),
            ]
        }
    ]


def test_a_status_change_arrives_without_a_listing(
    feed: HerdrStateFeed, fast_server: FakeHerdrServer, members: list[str]
) -> None:
    live(feed, members)
    before = listings(fast_server)

    fast_server.set_agent_status(members[0], "blocked")

    assert status_of(feed, members, members[0], "blocked").states[members[1]] == "idle"
    assert listings(fast_server) == before, fast_server.methods()


def test_a_closed_pane_leaves_the_reading(
    feed: HerdrStateFeed, fast_server: FakeHerdrServer, members: list[str]
) -> None:
    live(feed, members)

    fast_server.exit_pane(members[1])

    wait_until(lambda: members[1] not in (feed.reading(members) or live(feed, members)).panes,
               "the closed pane gone", DEADLINE)  # fmt: skip
    assert members[0] in live(feed, members).panes


def test_a_pane_watched_later_is_subscribed_to(
    feed: HerdrStateFeed, fast_server: FakeHerdrServer, members: list[str]
) -> None:
    live(feed, members[:1])

    assert feed.reading(members) is None  # not followed yet: the caller polls
    reading = live(feed, members)

    assert reading.states[members[1]] == "idle"
    fast_server.set_agent_status(members[1], "done")
    status_of(feed, members, members[1], "done")
    assert feed.subscriptions == 2


def test_a_turn_that_ends_in_the_active_tab_reads_done(
    feed: HerdrStateFeed, fast_server: FakeHerdrServer, members: list[str]
) -> None:
    live(feed, members)

    fast_server.set_agent_status(members[0], "idle")  # herdr says idle: the tab is active

    status_of(feed, members, members[0], "done")


def test_a_pane_moved_to_another_workspace_keeps_its_watched_id(
    feed: HerdrStateFeed, fast_server: FakeHerdrServer, members: list[str]
) -> None:
    live(feed, members)
    other = fast_server.handle_line(
        json.dumps({"id": "w", "method": "workspace.create", "params": {}}).encode()
    )["result"]["workspace"]["workspace_id"]
    fast_server.move_pane(members[0], other)
    fast_server.exit_pane(members[1])  # a closing event: the feed lists again

    wait_until(lambda: members[1] not in live(feed, members).panes, "the listing", DEADLINE)
    assert members[0] in live(feed, members).panes
    fast_server.set_agent_status(fast_server.pane_ids()[-1], "blocked")
    status_of(feed, members, members[0], "blocked")
    assert feed.subscriptions == 2  # subscribed again, to the pane's new id


def test_a_dropped_connection_is_reopened_and_reseeded(
    feed: HerdrStateFeed, fast_server: FakeHerdrServer, members: list[str]
) -> None:
    live(feed, members)

    with fast_server.lock:  # no new subscription until the change below is made
        fast_server.drop_subscriptions()
        fast_server.set_agent_status(members[0], "blocked")
    wait_until(lambda: feed.subscriptions == 2, "a second subscription", DEADLINE)

    assert status_of(feed, members, members[0], "blocked")
    fast_server.set_agent_status(members[1], "working")
    status_of(feed, members, members[1], "working")


def test_while_the_server_is_away_the_feed_answers_none_and_keeps_trying(
    feed: HerdrStateFeed, fast_server: FakeHerdrServer, members: list[str]
) -> None:
    live(feed, members)
    fast_server.fail("pane.list", "internal_error", times=3)

    fast_server.drop_subscriptions()

    wait_until(lambda: feed.reading(members) is None, "the feed down", DEADLINE)
    live(feed, members)
    assert feed.subscriptions == 2
    assert listings(fast_server) >= 4


def test_a_refused_subscription_leaves_the_feed_without_readings(
    fast_server: FakeHerdrServer, members: list[str]
) -> None:
    fast_server.fail("events.subscribe", "invalid_request", "unknown method", times=1000)
    feed = HerdrStateFeed(fast_server.socket_path, refused_seconds=0.05)
    try:
        feed.reading(members)
        wait_until(lambda: fast_server.methods().count("events.subscribe") >= 2, "retries",
                   DEADLINE)  # fmt: skip

        assert feed.reading(members) is None
        assert feed.failure == "herdr events.subscribe failed: invalid_request: unknown method"
    finally:
        feed.close()


def test_close_ends_the_thread_and_the_connection(
    feed: HerdrStateFeed, fast_server: FakeHerdrServer, members: list[str]
) -> None:
    live(feed, members)
    assert feed.running and fast_server.subscribers() == 1

    feed.close()

    assert not feed.running
    wait_until(lambda: fast_server.subscribers() == 0, "the stream ended", DEADLINE)
    assert feed.reading(members) is None
    assert not feed.running


def test_a_gone_pane_fails_the_whole_subscription_with_its_probe_id(
    fast_server: FakeHerdrServer,
) -> None:
    client = HerdrClient(fast_server.socket_path)

    with pytest.raises(HerdrRequestFailed) as caught:
        client.subscribe([{"type": "pane.agent_status_changed", "pane_id": "w1:p99"}])

    assert caught.value.code == "pane_not_found"
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.connect(fast_server.socket_path)
    entries = [{"type": "pane.closed"}, {"type": "pane.agent_status_changed", "pane_id": "w1:p99"}]
    request = {"id": "r7", "method": "events.subscribe", "params": {"subscriptions": entries}}
    conn.sendall(json.dumps(request).encode() + b"\n")
    reply: dict[str, Any] = json.loads(conn.makefile("rb").readline())
    conn.close()
    assert reply["id"] == "r7:sub:1:probe"
    assert reply["error"]["code"] == "pane_not_found"


def test_events_on_the_wire_are_herdrs_lines(
    fast_server: FakeHerdrServer, members: list[str]
) -> None:
    stream = HerdrClient(fast_server.socket_path).subscribe(
        [{"type": "pane.closed"}, {"type": "pane.agent_status_changed", "pane_id": members[0]}]
    )
    try:
        fast_server.set_agent_status(members[0], "blocked")
        fast_server.handle_line(
            json.dumps({"id": "c", "method": "pane.close", "params": {"pane_id": members[1]}})
            .encode()
        )  # fmt: skip
        lines = [json.loads(wait_until(lambda: stream.next_line(0.05), "a line", DEADLINE))
                 for _ in range(2)]  # fmt: skip
    finally:
        stream.close()

    assert sorted(lines, key=lambda e: str(e["event"])) == [
        {"event": "pane.agent_status_changed", "data": {"pane_id": members[0],
         "workspace_id": "w1", "agent_status": "blocked", "agent": "claude"}},
        {"event": "pane_closed", "data": {"type": "pane_closed", "pane_id": members[1],
         "workspace_id": "w1"}},
    ]  # fmt: skip


def test_the_feeds_are_one_per_herdr_socket_and_none_for_tmux(
    fast_server: FakeHerdrServer,
) -> None:
    feeds = HerdrStateFeeds({"HERDR_SOCKET_PATH": fast_server.socket_path})
    try:
        assert feeds(Multiplexer.TMUX, None) is None
        one = feeds(Multiplexer.HERDR, None)
        assert one is feeds(Multiplexer.HERDR, fast_server.socket_path)
        assert one is not None and one.socket == fast_server.socket_path
        live(one, [fast_server.root_pane])
    finally:
        feeds.close()
    assert not one.running

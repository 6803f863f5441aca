"""Agent states pushed by the multiplexer (the AgentStateFeed port): a tick takes a live
feed's reading instead of listing the server, and lists it as before when the feed has no
reading (not subscribed yet, dropped, refused) or the server has no feed (tmux)."""

from __future__ import annotations

import json
import sys
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import Any

import pytest

_ROOT = str(Path(__file__).resolve().parents[4])
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

from tests.fakes.herdr_server import FakeHerdrServer, wait_until  # noqa: E402

from cafleet.adapters.fake.launch_pads import FakeLaunchPads  # noqa: E402
from cafleet.adapters.herdr.client import forget_pings  # noqa: E402
from cafleet.adapters.herdr.driver import HerdrPaneDriver  # noqa: E402
from cafleet.adapters.herdr.feed import HerdrStateFeed, HerdrStateFeeds  # noqa: E402
from cafleet.application.members.status import AgentStatusReader  # noqa: E402
from cafleet.application.members.titles import PaneTitles  # noqa: E402
from cafleet.application.monitoring.service import MonitorService  # noqa: E402
from cafleet.application.ports.panes import AgentStateFeed, AgentStateFeeds, FeedReading  # noqa: E402
from cafleet.domain.agents.registry import AgentProfiles  # noqa: E402
from cafleet.domain.panes import PaneInfo  # noqa: E402
from cafleet.domain.placement import Multiplexer  # noqa: E402

from .conftest import AGENT_COMMAND  # noqa: E402


class MemoryFeed(AgentStateFeed):
    """Answers what the test put in `answer`; records what it was asked to watch."""

    def __init__(self) -> None:
        self.answer: FeedReading | None = None
        self.asked: list[set[str]] = []
        self.closed = False

    def reading(self, watched: Collection[str]) -> FeedReading | None:
        self.asked.append(set(watched))
        return self.answer

    def close(self) -> None:
        self.closed = True


class MemoryFeeds(AgentStateFeeds):
    def __init__(self) -> None:
        self.feed = MemoryFeed()

    def __call__(self, backend: Multiplexer, socket: str | None) -> MemoryFeed | None:
        return self.feed if backend is Multiplexer.HERDR else None

    def close(self) -> None:
        self.feed.close()


def _service(
    fleet: Any, feeds: AgentStateFeeds, titles: PaneTitles | None = None
) -> MonitorService:
    return MonitorService(
        fleet.store, fleet.clock, fleet.drivers, fleet.keystrokes(), fleet.process, 0,
        feeds=feeds, titles=titles,
    )  # fmt: skip


def _watched(fleet: Any) -> set[str]:
    return {pane.pane_id for pane in fleet.panes.values()}


def _reasons(fleet: Any, report: Any) -> tuple[str, ...]:
    member = fleet.members["worker"]
    return next((d.reasons for d in report.due if d.agent_id == member), ())


# --------------------------------------------------------------------------- on a memory feed


@pytest.fixture
def on_memory(make_fleet: Any) -> tuple[Any, MemoryFeeds, MonitorService, str]:
    """A herdr fleet on the fake driver, a monitor with a memory feed, the member's pane."""
    fleet = make_fleet(backend=Multiplexer.HERDR)
    feeds = MemoryFeeds()
    svc = _service(fleet, feeds)
    svc.claim(fleet.fleet_id, 5)
    return fleet, feeds, svc, fleet.panes[fleet.members["worker"]].pane_id


def test_a_live_reading_replaces_the_listing_and_the_polled_states(on_memory: Any) -> None:
    fleet, feeds, svc, member = on_memory
    panes = {p: PaneInfo(p, False, "") for p in _watched(fleet)}
    feeds.feed.answer = FeedReading(panes, {member: "working"}, {})
    svc.tick(fleet.fleet_id)
    fleet.driver.states[member] = "working"  # what polling would say
    feeds.feed.answer = FeedReading(panes, {member: "blocked"}, {})
    listings, polled = fleet.driver.listings, fleet.driver.state_reads

    fleet.clock.advance(5)
    report = svc.tick(fleet.fleet_id)

    assert _reasons(fleet, report) == ("status:blocked",)
    assert (fleet.driver.listings, fleet.driver.state_reads) == (listings, polled)
    assert feeds.feed.asked[-1] == _watched(fleet)


def test_without_a_reading_the_tick_polls_the_server(on_memory: Any) -> None:
    fleet, feeds, svc, member = on_memory
    fleet.driver.states[member] = "working"
    svc.tick(fleet.fleet_id)
    fleet.driver.states[member] = "blocked"
    listings = fleet.driver.listings

    fleet.clock.advance(5)
    report = svc.tick(fleet.fleet_id)

    assert _reasons(fleet, report) == ("status:blocked",)
    assert fleet.driver.listings == listings + 1
    assert feeds.feed.asked  # it was asked, and had nothing


def test_tmux_has_no_feed_and_lists_as_before(make_fleet: Any) -> None:
    fleet = make_fleet()
    feeds = MemoryFeeds()
    svc = _service(fleet, feeds)
    svc.claim(fleet.fleet_id, 5)

    svc.tick(fleet.fleet_id)

    assert fleet.driver.listings == 1
    assert feeds.feed.asked == []


# --------------------------------------------------------------------------- blocked notices


def _push(fleet: Any, feeds: MemoryFeeds, states: dict[str, str]) -> Any:
    """The next tick, 5 s on, with the feed reporting `states`."""
    panes = {p: PaneInfo(p, False, "") for p in _watched(fleet)}
    feeds.feed.answer = FeedReading(panes, states, {})
    fleet.clock.advance(5)
    return fleet.svc.tick(fleet.fleet_id)


@pytest.fixture
def noticing(on_memory: Any) -> tuple[Any, MemoryFeeds, str]:
    fleet, feeds, svc, member = on_memory
    fleet.svc = svc
    _push(fleet, feeds, {member: "working"})
    return fleet, feeds, member


def test_a_member_turning_blocked_raises_one_notification_per_episode(noticing: Any) -> None:
    fleet, feeds, member = noticing
    worker = fleet.members["worker"]

    report = _push(fleet, feeds, {member: "blocked"})
    _push(fleet, feeds, {member: "blocked"})
    first_episode = list(fleet.driver.notices)
    _push(fleet, feeds, {member: "working"})
    _push(fleet, feeds, {member: "blocked"})

    assert _reasons(fleet, report) == ("status:blocked",)
    assert first_episode == [
        (
            f"worker #{worker} is blocked",
            f"fleet {fleet.fleet_id}: it waits for an approval or an answer",
        )
    ]
    assert fleet.driver.notices == first_episode * 2


def test_a_wake_that_is_not_delivered_does_not_notify_again(noticing: Any) -> None:
    fleet, feeds, member = noticing
    fleet.driver.typing_fails = "the watcher's pane is busy"

    first = _push(fleet, feeds, {member: "blocked"})
    again = _push(fleet, feeds, {member: "blocked"})

    assert (first.woke, again.woke) == (False, False)
    assert "status:blocked" in _reasons(fleet, again)  # still due: the wake is retried
    assert len(fleet.driver.notices) == 1


def test_a_refused_notification_does_not_stop_the_wake(noticing: Any) -> None:
    fleet, feeds, member = noticing
    fleet.driver.notify_fails = "herdr notification.show failed: invalid_request"

    report = _push(fleet, feeds, {member: "blocked"})

    assert report.woke
    assert _reasons(fleet, report) == ("status:blocked",)
    assert fleet.driver.notices == []


def test_a_blocked_director_raises_no_notification(noticing: Any) -> None:
    fleet, feeds, member = noticing
    director = fleet.panes[fleet.director_id].pane_id

    report = _push(fleet, feeds, {member: "working", director: "blocked"})

    assert any("status:blocked" in d.reasons for d in report.due if d.agent_id == fleet.director_id)
    assert fleet.driver.notices == []


# --------------------------------------------------------------------------- over fake herdr


@pytest.fixture
def herdr_server(tmp_path: Path) -> Iterator[FakeHerdrServer]:
    forget_pings()
    made = FakeHerdrServer(event_poll=0.01).start(cwd=str(tmp_path))
    try:
        yield made
    finally:
        made.stop()
        forget_pings()


@pytest.fixture
def served(make_fleet: Any, herdr_server: FakeHerdrServer) -> Iterator[tuple[Any, Any]]:
    """A herdr fleet whose panes live on the fake herdr server, and a monitor with feeds that
    keeps the pane titles as `monitor start` does."""
    fleet = make_fleet(backend=Multiplexer.HERDR)
    while not all(herdr_server.has_pane(p) for p in _watched(fleet) if p != "w1:p0"):
        request = {"id": "s", "method": "pane.split", "params": {
            "target_pane_id": herdr_server.root_pane, "direction": "down"}}  # fmt: skip
        herdr_server.handle_line(json.dumps(request).encode())
    fleet.drivers.servers[(Multiplexer.HERDR, fleet.socket)] = HerdrPaneDriver(
        herdr_server.socket_path
    )
    feeds = HerdrStateFeeds(
        make=lambda _path: HerdrStateFeed(
            herdr_server.socket_path, backoff=(0.02, 0.05), read_seconds=0.01
        )
    )
    fleet.member_pane = fleet.panes[fleet.members["worker"]].pane_id
    herdr_server.set_agent_status(fleet.member_pane, "working", agent="claude")
    statuses = AgentStatusReader(FakeLaunchPads(), AgentProfiles(), fleet.clock)
    svc = _service(fleet, feeds, PaneTitles(fleet.store, fleet.drivers, statuses))
    svc.claim(fleet.fleet_id, 5)
    svc.tick(fleet.fleet_id)  # the first tick polls while the feed subscribes
    feed = feeds(Multiplexer.HERDR, fleet.socket)
    assert feed is not None
    wait_until(lambda: feed.subscriptions >= 1, "the subscription", 5.0)
    fleet.feed = feed
    try:
        yield fleet, svc
    finally:
        feeds.close()


def _listings(server: FakeHerdrServer) -> int:
    return server.methods().count("pane.list")


def _label(server: FakeHerdrServer, pane_id: str) -> str | None:
    """The pane's label as herdr shows it (read without a request on the wire)."""
    with server.lock:
        return server.panes[pane_id].label


def _next_tick(fleet: Any, svc: MonitorService) -> Any:
    fleet.clock.advance(5)
    return svc.tick(fleet.fleet_id)


def _refuse_the_feed(fleet: Any, server: FakeHerdrServer) -> None:
    """The server drops the subscription and refuses it from now on (an older server)."""
    server.fail("events.subscribe", "invalid_request", "unknown method", times=1000)
    server.drop_subscriptions()
    wait_until(lambda: "unknown method" in (fleet.feed.failure or ""), "the refusal", 5.0)


def _pushed(fleet: Any, state: str) -> None:
    """Wait until the feed has the member's pushed state."""
    watched = _watched(fleet)
    wait_until(
        lambda: (
            (fleet.feed.reading(watched) or FeedReading({}, {}, {})).states.get(fleet.member_pane)
            == state
        ),
        f"the pushed state {state}",
        5.0,
    )


def test_a_member_turning_blocked_reaches_the_next_tick_without_a_listing(
    served: tuple[Any, MonitorService], herdr_server: FakeHerdrServer
) -> None:
    fleet, svc = served
    svc.tick(fleet.fleet_id)
    before = _listings(herdr_server)

    herdr_server.set_agent_status(fleet.member_pane, "blocked")
    _pushed(fleet, "blocked")
    report = _next_tick(fleet, svc)

    assert "status:blocked" in _reasons(fleet, report)  # the wake itself is refused: a shell
    assert _listings(herdr_server) == before
    worker = fleet.members["worker"]
    assert herdr_server.notifications == [
        {"title": f"worker #{worker} is blocked", "sound": "request",
         "body": f"fleet {fleet.fleet_id}: it waits for an approval or an answer"}
    ]  # fmt: skip


def test_idle_ticks_on_a_live_feed_make_no_request_at_all(
    served: tuple[Any, MonitorService], herdr_server: FakeHerdrServer
) -> None:
    fleet, svc = served
    watcher = fleet.panes[fleet.watcher_id].pane_id
    herdr_server.set_processes(watcher, [{"pid": 7, "name": AGENT_COMMAND, "argv0": AGENT_COMMAND}])
    assert svc.tick(fleet.fleet_id).woke  # the first wake (interval) is delivered
    before = len(herdr_server.methods())

    reports = []
    for _ in range(10):
        fleet.clock.advance(5)
        reports.append(svc.tick(fleet.fleet_id))

    assert [r.due for r in reports] == [()] * 10
    assert herdr_server.methods()[before:] == []  # so 0 pane.list per idle tick


def test_the_first_tick_on_the_subscription_lists_nothing_ahead(
    served: tuple[Any, MonitorService], herdr_server: FakeHerdrServer
) -> None:
    fleet, svc = served  # its first tick listed the server while the feed subscribed
    before = _listings(herdr_server)

    _next_tick(fleet, svc)

    assert _listings(herdr_server) == before


def test_idle_ticks_list_no_panes_and_a_pushed_state_retitles_the_pane(
    served: tuple[Any, MonitorService], herdr_server: FakeHerdrServer
) -> None:
    fleet, svc = served
    worker = fleet.members["worker"]
    svc.tick(fleet.fleet_id)
    before = _listings(herdr_server)

    for _ in range(5):
        _next_tick(fleet, svc)
    idle = _listings(herdr_server), _label(herdr_server, fleet.member_pane)
    herdr_server.set_agent_status(fleet.member_pane, "blocked")
    _pushed(fleet, "blocked")
    _next_tick(fleet, svc)
    waiting = _label(herdr_server, fleet.member_pane)
    herdr_server.set_agent_status(fleet.member_pane, "working")  # the title it had before
    _pushed(fleet, "working")
    _next_tick(fleet, svc)

    assert idle == (before, f"worker #{worker} · working · 0 unread")  # 0 pane.list in 5 ticks
    assert waiting == f"worker #{worker} · waiting · 0 unread"
    assert _label(herdr_server, fleet.member_pane) == f"worker #{worker} · working · 0 unread"
    assert _listings(herdr_server) == before


def test_without_the_feed_each_tick_lists_once_and_titles_follow(
    served: tuple[Any, MonitorService], herdr_server: FakeHerdrServer
) -> None:
    fleet, svc = served
    worker = fleet.members["worker"]
    _refuse_the_feed(fleet, herdr_server)
    herdr_server.set_agent_status(fleet.member_pane, "blocked")
    before = _listings(herdr_server)

    _next_tick(fleet, svc)
    _next_tick(fleet, svc)

    assert _listings(herdr_server) == before + 2  # one survey per tick, shared by the titles
    assert _label(herdr_server, fleet.member_pane) == f"worker #{worker} · waiting · 0 unread"


def test_a_dropped_and_refused_subscription_falls_back_to_polling(
    served: tuple[Any, MonitorService], herdr_server: FakeHerdrServer
) -> None:
    fleet, svc = served
    _refuse_the_feed(fleet, herdr_server)
    assert fleet.feed.reading(_watched(fleet)) is None
    herdr_server.set_agent_status(fleet.member_pane, "blocked")
    before = _listings(herdr_server)

    report = _next_tick(fleet, svc)

    assert "status:blocked" in _reasons(fleet, report)
    assert _listings(herdr_server) == before + 1


def test_a_member_finishing_its_turn_in_the_active_tab_wakes_as_done(
    served: tuple[Any, MonitorService], herdr_server: FakeHerdrServer
) -> None:
    fleet, svc = served
    svc.tick(fleet.fleet_id)

    herdr_server.set_agent_status(fleet.member_pane, "idle")  # herdr says idle: tab active
    _pushed(fleet, "done")
    report = _next_tick(fleet, svc)

    assert "status:done" in _reasons(fleet, report)

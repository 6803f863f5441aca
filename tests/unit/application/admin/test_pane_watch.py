"""PaneWatch: one capture per tick per watched pane, shared by every watcher, on fakes."""

from __future__ import annotations

import threading
import time
from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest

from cafleet.adapters.fake.clock import FakeClock
from cafleet.application.admin.pane_watch import TOO_MANY_PANES, PaneWatch, screens_of
from cafleet.composition.container import build_fake_container
from cafleet.domain.errors import NotFound, Unavailable
from cafleet.domain.panes import PaneGone
from cafleet.domain.placement import CodingAgent

FLEET = 1
START = datetime(2026, 1, 1, tzinfo=UTC)


class Screens:
    """A capture that counts its calls; each agent shows what the test wrote for it."""

    def __init__(self) -> None:
        self.shown: dict[int, str | Exception] = {}
        self.calls: Counter[int] = Counter()
        self.lock = threading.Lock()

    def __call__(self, fleet_id: int, agent_id: int) -> str:
        with self.lock:
            self.calls[agent_id] += 1
        shown = self.shown.get(agent_id, f"screen of {agent_id}")
        if isinstance(shown, Exception):
            raise shown
        return shown


@pytest.fixture
def screens() -> Screens:
    return Screens()


@pytest.fixture
def hub(screens: Screens) -> PaneWatch:
    clock = FakeClock(START, step=timedelta(seconds=1))
    return PaneWatch(screens, clock, loop=False)


def shown(frames) -> list[tuple[int, str, str | None]]:
    return [(f.agent_id, f.ansi, f.error) for f in frames]


def test_several_watchers_of_a_pane_cost_one_capture_per_tick(hub, screens) -> None:
    watchers = [hub.join(FLEET, [3]) for _ in range(16)]

    for _ in range(5):
        hub.tick()

    assert screens.calls == {3: 5}
    for watcher in watchers:
        assert shown(hub.fresh(watcher)) == [(3, "screen of 3", None)]


def test_a_frame_is_handed_once_then_only_when_the_screen_changed(hub, screens) -> None:
    watcher = hub.join(FLEET, [3, 5])
    assert hub.fresh(watcher) == []  # nothing captured yet

    hub.tick()
    first = hub.fresh(watcher)
    assert shown(first) == [(3, "screen of 3", None), (5, "screen of 5", None)]
    assert first[0].captured_at < first[1].captured_at  # each look has its own time

    hub.tick()
    assert hub.fresh(watcher) == []  # same screens: nothing to send

    screens.shown[5] = "\x1b[31mred\x1b[0m"
    hub.tick()
    hub.tick()
    assert shown(hub.fresh(watcher)) == [(5, "\x1b[31mred\x1b[0m", None)]
    assert hub.fresh(watcher) == []


def test_a_late_watcher_gets_the_current_frame_without_a_new_capture(hub, screens) -> None:
    early = hub.join(FLEET, [3])
    hub.tick()
    hub.fresh(early)

    late = hub.join(FLEET, [3])

    assert shown(hub.fresh(late)) == [(3, "screen of 3", None)]
    assert screens.calls == {3: 1}
    assert hub.fresh(early) == []


def test_an_unreadable_pane_is_a_one_line_error_frame(hub, screens) -> None:
    screens.shown[3] = PaneGone("%7")
    screens.shown[4] = NotFound("agent 4 has no placement row;\nit was not spawned")
    screens.shown[5] = RuntimeError("boom")
    watcher = hub.join(FLEET, [3, 4, 5])

    hub.tick()

    assert shown(hub.fresh(watcher)) == [
        (3, "", "pane %7 not found"),
        (4, "", "agent 4 has no placement row;"),
        (5, "", "internal error: RuntimeError"),
    ]
    screens.shown[3] = "back"
    hub.tick()
    assert shown(hub.fresh(watcher)) == [(3, "back", None)]


def test_the_pane_is_dropped_when_its_last_watcher_leaves(hub, screens) -> None:
    first, second = hub.join(FLEET, [3, 5]), hub.join(FLEET, [3])
    hub.tick()
    hub.leave(first)
    hub.leave(first)  # twice is harmless

    hub.tick()
    assert screens.calls == {3: 2, 5: 1}
    assert hub.watched() == 1

    hub.leave(second)
    hub.tick()
    assert screens.calls == {3: 2, 5: 1}
    assert hub.watched() == 0


def test_a_watch_names_each_agent_once(hub, screens) -> None:
    watcher = hub.join(FLEET, [3, 3, 5, 3])
    hub.tick()

    assert [f.agent_id for f in hub.fresh(watcher)] == [3, 5]
    hub.leave(watcher)
    assert hub.watched() == 0


def test_too_many_panes_are_refused_and_nothing_is_joined(screens) -> None:
    hub = PaneWatch(screens, FakeClock(START), loop=False, max_panes=2)
    hub.join(FLEET, [3])

    with pytest.raises(Unavailable) as refused:
        hub.join(FLEET, [4, 5])

    assert refused.value.message == TOO_MANY_PANES
    assert hub.watched() == 1
    hub.join(FLEET, [3, 4])  # a pane already watched costs nothing more
    assert hub.watched() == 2


# --- the lookers: real threads on a short tick ------------------------------------------


def wait_for(condition, seconds: float = 5.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.005)


def test_lookers_capture_at_the_tick_and_stop_when_nobody_watches(screens) -> None:
    tick = 0.05
    hub = PaneWatch(screens, FakeClock(START), tick_seconds=tick)
    watchers = [hub.join(FLEET, [3]) for _ in range(8)]
    wait_for(lambda: all(hub.fresh(w) for w in watchers))  # the first look is at once

    time.sleep(10 * tick)
    looks = screens.calls[3]
    assert 8 <= looks <= 13  # one per tick for the eight watchers, not eight per tick

    for watcher in watchers:
        hub.leave(watcher)
    time.sleep(2 * tick)  # a look under way may still end
    stopped = screens.calls[3]
    time.sleep(5 * tick)
    assert screens.calls[3] == stopped
    wait_for(lambda: not any(t.name.startswith("pane-watch-") for t in threading.enumerate()))


def test_a_slow_pane_does_not_hold_up_the_others(screens) -> None:
    release = threading.Event()

    def capture(fleet_id: int, agent_id: int) -> str:
        if agent_id == 9:
            release.wait(5)
        return screens(fleet_id, agent_id)

    hub = PaneWatch(capture, FakeClock(START), tick_seconds=0.02)
    watcher = hub.join(FLEET, [9, 3])
    try:
        wait_for(lambda: screens.calls[3] >= 5)
        assert [f.agent_id for f in hub.fresh(watcher)] == [3]
    finally:
        release.set()
        hub.leave(watcher)


# --- on the real services, over the fake multiplexer ----------------------------------------


def test_screens_of_captures_a_members_pane_with_its_colours() -> None:
    container = build_fake_container()
    made = container.fleets().create("alpha", CodingAgent.CLAUDE)
    fleet_id, director = made.fleet.fleet_id, made.director.agent_id
    driver = container.pane_drivers()(made.placement.backend, made.placement.socket)
    driver.panes[made.placement.pane_id].screen = ["\x1b[1mbold\x1b[0m prompt"]
    capture = screens_of(container.member_panes())

    assert capture(fleet_id, director) == "\x1b[1mbold\x1b[0m prompt"
    with pytest.raises(NotFound):
        capture(fleet_id, made.administrator.agent_id)  # no pane was ever recorded

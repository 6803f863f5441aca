"""Every adapter faked in memory: what the tests and offline demos compose services on.

`Fakes` holds the fake objects (a test keeps the ones it drives or reads back), and
`fake_adapters()` turns them into the Adapters bundle that Components and the container take.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cafleet.adapters.fake.agent_starts import FakeAgentStarts
from cafleet.adapters.fake.clock import FakeClock
from cafleet.adapters.fake.codex_threads import FakeCodexThreads
from cafleet.adapters.fake.launch_pads import FakeLaunchPads
from cafleet.adapters.fake.locator import FakePaneLocator
from cafleet.adapters.fake.loop_marks import FakeLoopMarks, MarkBoard
from cafleet.adapters.fake.pane_driver import FakePaneDrivers, ThreadLocks
from cafleet.adapters.fake.process import FakeProcess
from cafleet.adapters.fake.programs import FakePrograms
from cafleet.adapters.fake.queue_drains import RecordingDrains
from cafleet.adapters.fake.state_feeds import FakeStateFeeds
from cafleet.adapters.fake.store import MemoryStore
from cafleet.application.ports.delivery import Notifier
from cafleet.composition.components import Adapters


def _drivers_with_the_locators_pane() -> FakePaneDrivers:
    """Fake servers where the fake locator's pane exists, so a fleet can be created."""
    drivers = FakePaneDrivers()
    pane = FakePaneLocator().current_pane()
    drivers(pane.backend, pane.socket).add_pane("claude", pane.window_id, pane.pane_id)
    return drivers


@dataclass
class Fakes:
    """One fake per adapter. `notifier` None: the real channel ladder, on these fakes."""

    store: MemoryStore = field(default_factory=MemoryStore)
    clock: FakeClock = field(default_factory=FakeClock)
    locator: FakePaneLocator = field(default_factory=FakePaneLocator)
    pane_drivers: FakePaneDrivers = field(default_factory=_drivers_with_the_locators_pane)
    pane_locks: ThreadLocks = field(default_factory=ThreadLocks)
    launch_pads: FakeLaunchPads = field(default_factory=FakeLaunchPads)
    codex_threads: FakeCodexThreads = field(default_factory=FakeCodexThreads)
    process: FakeProcess = field(default_factory=FakeProcess)
    loop_marks: FakeLoopMarks | None = None  # None: marks of `process` on a board of their own
    state_feeds: FakeStateFeeds = field(default_factory=FakeStateFeeds)
    drains: RecordingDrains = field(default_factory=RecordingDrains)
    programs: FakePrograms = field(default_factory=FakePrograms)
    agent_starts: FakeAgentStarts = field(default_factory=lambda: FakeAgentStarts({}))
    notifier: Notifier | None = None


def fake_adapters(fakes: Fakes | None = None) -> Adapters:
    """The Adapters bundle of `fakes` (fresh ones by default): every adapter is faked."""
    f = fakes or Fakes()
    marks = f.loop_marks or FakeLoopMarks(MarkBoard(), f.process.pid())
    notifier = f.notifier
    return Adapters(
        uow=lambda: f.store,
        install_records=lambda: f.store,
        clock=lambda: f.clock,
        pane_drivers=lambda: f.pane_drivers,
        pane_locks=lambda: f.pane_locks,
        launch_pads=lambda: f.launch_pads,
        codex_threads=lambda: f.codex_threads,
        locator=lambda: f.locator,
        process=lambda: f.process,
        loop_marks=lambda: marks,
        state_feeds=lambda: f.state_feeds,
        drains=lambda: f.drains,
        programs=lambda: f.programs,
        agent_starts=lambda: f.agent_starts,
        notifier=None if notifier is None else (lambda: notifier),
    )

"""Shared builders for the unit tests: in-memory fakes, a small fleet world and a CLI harness.

Everything here runs on the fakes in cafleet.adapters.fake; no database, no multiplexer.
Helpers are exposed as fixtures so test modules never import this file.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pytest
from click.testing import CliRunner, Result

import cafleet.composition
from cafleet.adapters.fake.clock import FakeClock
from cafleet.adapters.fake.launch_pads import FakeLaunchPads
from cafleet.adapters.fake.locator import FakePaneLocator
from cafleet.adapters.fake.notifier import RecordingNotifier
from cafleet.adapters.fake.pane_driver import FakePaneDrivers, ThreadLocks
from cafleet.adapters.fake.store import MemoryStore
from cafleet.application.fleets import FleetCreated, FleetService
from cafleet.application.keystrokes import KeystrokeSender
from cafleet.application.members import MemberService
from cafleet.application.messaging import MessagingService
from cafleet.application.teardown import PaneTeardown
from cafleet.composition import Components
from cafleet.domain.agent import Agent, CardKind
from cafleet.domain.delivery import Delivery
from cafleet.domain.fleet import Fleet
from cafleet.domain.message import Message
from cafleet.domain.monitor import MonitorSchedule
from cafleet.domain.placement import CodingAgent, Multiplexer, PaneLocation, Placement
from cafleet.domain.skills import SkillInstall
from cafleet.entrypoints.cli.main import cli
from cafleet.settings import Settings

START = datetime(2026, 1, 1, 8, 0, tzinfo=UTC)
DIRECTOR_PANE = PaneLocation(Multiplexer.TMUX, "main", "@0", "%0", "tmux-test.sock")


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """No CAFLEET_* or multiplexer variable of the outer shell may leak into a test."""
    for name in list(os.environ):
        if name.startswith(("CAFLEET_", "HERDR_")) or name in ("TMUX", "TMUX_PANE"):
            monkeypatch.delenv(name, raising=False)


@pytest.fixture
def store() -> MemoryStore:
    return MemoryStore()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(START)


@pytest.fixture
def notifier() -> RecordingNotifier:
    return RecordingNotifier()


@pytest.fixture
def locator() -> FakePaneLocator:
    return FakePaneLocator(DIRECTOR_PANE)


@pytest.fixture
def pane_drivers() -> FakePaneDrivers:
    """Fake multiplexer servers; no pane exists until a test adds one."""
    return FakePaneDrivers()


def fake_keystrokes(drivers: FakePaneDrivers, clock: FakeClock) -> KeystrokeSender:
    defaults = Settings.from_environ({"CAFLEET_DATABASE_URL": "sqlite://", "HOME": "/nonexistent"})
    return KeystrokeSender(drivers, ThreadLocks(), clock, defaults.profiles)


@pytest.fixture
def teardown(pane_drivers: FakePaneDrivers, clock: FakeClock) -> PaneTeardown:
    return PaneTeardown(fake_keystrokes(pane_drivers, clock), pane_drivers, clock)


@pytest.fixture
def fleets(
    store: MemoryStore, clock: FakeClock, locator: FakePaneLocator, teardown: PaneTeardown
) -> FleetService:
    return FleetService(store, clock, locator, teardown)


@pytest.fixture
def messaging(
    store: MemoryStore, clock: FakeClock, notifier: RecordingNotifier
) -> MessagingService:
    return MessagingService(store, clock, notifier, ThreadLocks())


@pytest.fixture
def members(store: MemoryStore, clock: FakeClock) -> MemberService:
    return MemberService(store, clock)


@dataclass
class World:
    """Builds fleets, members and agents straight into the store and reads the end state."""

    store: MemoryStore
    clock: FakeClock
    fleets: FleetService
    drivers: FakePaneDrivers | None = None

    def fleet(self, name: str = "alpha") -> FleetCreated:
        return self.fleets.create(name, CodingAgent.CLAUDE)

    def agent(
        self,
        fleet_id: int,
        name: str = "loose",
        *,
        card_kind: CardKind | None = None,
        skills: tuple[str, ...] = (),
    ) -> int:
        """An active agent without any placement."""
        with self.store(write=True) as uow:
            agent_id = uow.agents.add(
                Agent(
                    0,
                    fleet_id,
                    name,
                    f"{name} description",
                    self.clock.now(),
                    card_kind=card_kind,
                    skills=skills,
                )
            )
            uow.commit()
        return agent_id

    def member(
        self,
        made: FleetCreated,
        name: str = "worker",
        *,
        pane_id: str | None = "%1",
        card_kind: CardKind | None = None,
        coding_agent: CodingAgent = CodingAgent.CLAUDE,
        description: str | None = None,
        skills: tuple[str, ...] = (),
        starting: bool = False,
        legacy: bool = False,
    ) -> int:
        """A pane-bound member beside the Director (pane_id None = pending placement), its
        agent seen ready by its hook unless `starting`. A pane that exists already is
        claimed as `member create` does, unless `legacy` (a row from before identities)."""
        fleet_id = made.fleet.fleet_id
        director = made.director.agent_id
        identity = None
        if self.drivers is not None and pane_id is not None and not legacy:
            server = self.drivers(made.placement.backend, made.placement.socket)
            identity = server.claim(pane_id) if pane_id in server.panes else None
        with self.store(write=True) as uow:
            now = self.clock.now()
            agent_id = uow.agents.add(
                Agent(
                    0,
                    fleet_id,
                    name,
                    description if description is not None else f"{name} description",
                    now,
                    card_kind=card_kind,
                    skills=skills,
                )
            )
            uow.placements.add(
                Placement(
                    agent_id=agent_id,
                    director_agent_id=director,
                    backend=made.placement.backend,
                    session=made.placement.session,
                    window_id=made.placement.window_id,
                    pane_id=pane_id,
                    coding_agent=coding_agent,
                    created_at=now,
                    socket=made.placement.socket,
                    ready_at=None if starting or pane_id is None else now,
                    ready_rule=None if starting or pane_id is None else "hook",
                    identity=identity,
                )
            )
            if card_kind is None:
                uow.monitor.enroll(MonitorSchedule(agent_id, 720))
            uow.commit()
        return agent_id

    def deregister(self, agent_id: int) -> None:
        with self.store(write=True) as uow:
            agent = uow.agents.get(agent_id)
            assert agent is not None
            uow.agents.save(agent.retired(self.clock.now()))
            uow.placements.remove(agent_id)
            uow.commit()

    # -- reading the end state through fresh read units of work ---------------------------

    def get_fleet(self, fleet_id: int) -> Fleet | None:
        with self.store() as uow:
            return uow.fleets.get(fleet_id)

    def get_agent(self, agent_id: int) -> Agent | None:
        with self.store() as uow:
            return uow.agents.get(agent_id)

    def get_placement(self, agent_id: int) -> Placement | None:
        with self.store() as uow:
            return uow.placements.get(agent_id)

    def get_schedule(self, agent_id: int) -> MonitorSchedule | None:
        with self.store() as uow:
            return uow.monitor.get(agent_id)

    def get_message(self, task_id: int) -> Message | None:
        with self.store() as uow:
            return uow.messages.get(task_id)

    def deliveries(self, task_id: int) -> list[Delivery]:
        with self.store() as uow:
            return uow.deliveries.for_task(task_id)

    def delivery(self, task_id: int, recipient_agent_id: int) -> Delivery | None:
        with self.store() as uow:
            return uow.deliveries.get(task_id, recipient_agent_id)

    def all_messages(self) -> list[Message]:
        return sorted(self.store.tables.messages.values(), key=lambda m: m.task_id)


def install_current_skills(store: MemoryStore, clock: FakeClock) -> None:
    """Team commands are gated on a skills install at this version."""
    with store(write=True) as uow:
        uow.installs.record(SkillInstall("claude", cafleet.__version__, clock.now()))
        uow.commit()


@pytest.fixture
def world(
    store: MemoryStore, clock: FakeClock, fleets: FleetService, pane_drivers: FakePaneDrivers
) -> World:
    return World(store, clock, fleets, pane_drivers)


class FakeComponents(Components):
    """The CLI's real composition with every adapter replaced by a fake of the harness."""

    def __init__(
        self, settings: Settings, env: Mapping[str, str] | None, harness: CliHarness
    ) -> None:
        super().__init__(settings, env)
        # instance attributes shadow the cached properties that would build real adapters
        self.__dict__.update(
            uow=harness.store,
            install_records=harness.store,
            clock=harness.clock,
            notifier=harness.notifier,
            locator=harness.locator,
            pane_drivers=harness.pane_drivers,
            keystrokes=fake_keystrokes(harness.pane_drivers, harness.clock),
            launch_pads=FakeLaunchPads(),
        )


@dataclass
class CliHarness:
    """Runs `cafleet ...` in-process; App.components resolves to FakeComponents."""

    store: MemoryStore
    clock: FakeClock
    notifier: RecordingNotifier
    locator: FakePaneLocator
    pane_drivers: FakePaneDrivers
    world: World
    runner: CliRunner = field(default_factory=CliRunner)

    def __call__(
        self, *args: str, input: str | bytes | None = None, env: dict[str, str] | None = None
    ) -> Result:
        return self.runner.invoke(cli, list(args), input=input, env=env, prog_name="cafleet")


@pytest.fixture
def run(
    monkeypatch: pytest.MonkeyPatch,
    store: MemoryStore,
    clock: FakeClock,
    notifier: RecordingNotifier,
    locator: FakePaneLocator,
    pane_drivers: FakePaneDrivers,
    world: World,
) -> CliHarness:
    """The root command replaces ctx.obj with a fresh App, so the seam is the class that
    App.components instantiates after validating the settings from the environment."""
    harness = CliHarness(store, clock, notifier, locator, pane_drivers, world)
    # the pane `fleet create` runs in exists, so it can be claimed as the Director's
    director = locator.current_pane()
    pane_drivers(director.backend, director.socket).add_pane(
        "claude", director.window_id, director.pane_id
    )
    install_current_skills(store, clock)

    def components(settings: Settings, env: Mapping[str, str] | None = None) -> Any:
        return FakeComponents(settings, env, harness)

    monkeypatch.setattr(cafleet.composition, "Components", components)
    return harness

"""Shared builders for the unit tests: in-memory fakes, a small fleet world and a CLI harness.

Everything here runs on the fakes in cafleet.adapters.fake; no database, no multiplexer.
Helpers are exposed as fixtures so test modules never import this file.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import UTC, datetime

import pytest
from click.testing import CliRunner, Result

import cafleet
from cafleet.adapters.fake.clock import FakeClock
from cafleet.adapters.fake.locator import FakePaneLocator
from cafleet.adapters.fake.notifier import RecordingNotifier
from cafleet.adapters.fake.pane_driver import FakePaneDrivers, ThreadLocks
from cafleet.adapters.fake.store import MemoryStore
from cafleet.application.fleets import FleetCreated, FleetService
from cafleet.application.members.registry import MemberService
from cafleet.application.messaging.service import MessagingService
from cafleet.application.panes.keystrokes import KeystrokeSender
from cafleet.application.panes.teardown import PaneTeardown
from cafleet.composition import Components
from cafleet.composition.fakes import Fakes, fake_adapters
from cafleet.domain.delivery import Delivery
from cafleet.domain.fleet import Agent, CardKind, Fleet
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


UNIT_SETTINGS = Settings.from_environ({"CAFLEET_DATABASE_URL": "sqlite://", "HOME": "/nonexistent"})


def fake_keystrokes(drivers: FakePaneDrivers, clock: FakeClock) -> KeystrokeSender:
    return KeystrokeSender(drivers, ThreadLocks(), clock, UNIT_SETTINGS.profiles)


@pytest.fixture
def teardown(pane_drivers: FakePaneDrivers, clock: FakeClock) -> PaneTeardown:
    return PaneTeardown(fake_keystrokes(pane_drivers, clock), pane_drivers, clock)


def fake_components(fakes: Fakes) -> Components:
    """The one composition on `fakes`."""
    return Components(UNIT_SETTINGS, {"HOME": "/nonexistent"}, fake_adapters(fakes))


@pytest.fixture
def components(fakes: Fakes) -> Components:
    return fake_components(fakes)


@pytest.fixture
def fleets(components: Components) -> FleetService:
    return components.fleets


@pytest.fixture
def messaging(components: Components) -> MessagingService:
    return components.messaging


@pytest.fixture
def members(components: Components) -> MemberService:
    return components.members


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


@dataclass
class CliHarness:
    """Runs `cafleet ...` in-process on the one composition, with every adapter faked."""

    fakes: Fakes
    world: World
    runner: CliRunner = field(default_factory=CliRunner)

    @property
    def store(self) -> MemoryStore:
        return self.fakes.store

    @property
    def clock(self) -> FakeClock:
        return self.fakes.clock

    @property
    def notifier(self) -> RecordingNotifier:
        assert isinstance(self.fakes.notifier, RecordingNotifier)
        return self.fakes.notifier

    @notifier.setter
    def notifier(self, notifier: RecordingNotifier) -> None:
        self.fakes.notifier = notifier

    @property
    def locator(self) -> FakePaneLocator:
        return self.fakes.locator

    @locator.setter
    def locator(self, locator: FakePaneLocator) -> None:
        self.fakes.locator = locator

    @property
    def pane_drivers(self) -> FakePaneDrivers:
        return self.fakes.pane_drivers

    def __call__(
        self, *args: str, input: str | bytes | None = None, env: dict[str, str] | None = None
    ) -> Result:
        return self.runner.invoke(
            cli,
            list(args),
            input=input,
            env=env,
            prog_name="cafleet",
            obj=fake_adapters(self.fakes),  # the root command composes on these
        )


@pytest.fixture
def fakes(
    store: MemoryStore,
    clock: FakeClock,
    notifier: RecordingNotifier,
    locator: FakePaneLocator,
    pane_drivers: FakePaneDrivers,
) -> Fakes:
    """The unit tests' fakes, as one bundle for the composition. The pane `fleet create`
    runs in exists, so it can be claimed as the Director's."""
    director = locator.current_pane()
    pane_drivers(director.backend, director.socket).add_pane(
        "claude", director.window_id, director.pane_id
    )
    return Fakes(
        store=store, clock=clock, notifier=notifier, locator=locator, pane_drivers=pane_drivers
    )


@pytest.fixture
def run(fakes: Fakes, world: World) -> CliHarness:
    harness = CliHarness(fakes, world)
    install_current_skills(fakes.store, fakes.clock)
    return harness

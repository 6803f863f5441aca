"""Builders for the pane-driving unit tests: a fleet on fake panes, and the services that
drive those panes, all wired over the in-memory fakes.

The fleet's Director sits in pane %0 of the fake tmux server at SOCKET. Members get fake
panes on the same server; a member can also point at a pane that does not exist (gone) or
have no pane yet (pending).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from cafleet.adapters.fake.clock import FakeClock
from cafleet.adapters.fake.codex_threads import FakeCodexThreads
from cafleet.adapters.fake.launch_pads import FakeLaunchPad, FakeLaunchPads
from cafleet.adapters.fake.locator import FakePaneLocator
from cafleet.adapters.fake.pane_driver import FakePane, FakePaneDriver, FakePaneDrivers, ThreadLocks
from cafleet.adapters.fake.programs import FakePrograms
from cafleet.adapters.fake.store import MemoryStore
from cafleet.application.fleets import FleetCreated, FleetService
from cafleet.application.members.panes import MemberPanes
from cafleet.application.members.removal import MemberRemoval
from cafleet.application.members.shell import AgentServerShell
from cafleet.application.members.spawning import MemberSpawner, SpawnContext
from cafleet.application.messaging.channels import channel_ladder
from cafleet.application.messaging.herdr_channel import HerdrPromptChannel
from cafleet.application.messaging.resumption import PaneResumption
from cafleet.application.messaging.service import START_WAIT_SECONDS, MessagingService
from cafleet.application.panes.gathering import Gatherings
from cafleet.application.panes.keystrokes import KeystrokeSender
from cafleet.application.panes.notifier import PaneNotifier
from cafleet.application.panes.teardown import PaneTeardown
from cafleet.application.ports.agents import AgentStarts
from cafleet.application.ports.delivery import Notifier, QueueDrains
from cafleet.application.ports.panes import PaneLocks
from cafleet.application.relay.service import RelayClient
from cafleet.domain.agents.profile import ReadyRule
from cafleet.domain.agents.registry import PROFILES, AgentProfiles, ProfileOverrides
from cafleet.domain.delivery import Channel, Delivery
from cafleet.domain.fleet import Agent, CardKind, Fleet
from cafleet.domain.monitor import MonitorSchedule
from cafleet.domain.panes import Key, PaneInfo
from cafleet.domain.placement import CodingAgent, Multiplexer, PaneLocation, Placement, PushTarget

START = datetime(2026, 1, 1, 8, 0, tzinfo=UTC)
SOCKET = "unit-tmux.sock"
DIRECTOR_PANE = "%0"
WINDOW = "@0"
# distinct per coding agent, so a test can tell which delay was used
SUBMIT_DELAYS = {"claude": 1.0, "codex": 2.0, "opencode": 3.0, "custom": 0.25}

ESC = ("key", Key.ESCAPE.value)
ENTER = ("key", Key.ENTER.value)


def text(value: str) -> tuple[str, str]:
    return ("text", value)


def paste(value: str) -> tuple[str, str]:
    return ("paste", value)


class TimelineClock(FakeClock):
    """A FakeClock that can run actions once fake time reaches a given moment."""

    def __init__(self, start: datetime = START) -> None:
        super().__init__(start)
        self._alarms: list[tuple[datetime, Callable[[], object]]] = []
        self._guard = threading.Lock()

    def after(self, seconds: float, action: Callable[[], object]) -> None:
        """Run `action` during the first sleep that reaches now + seconds."""
        with self._guard:
            self._alarms.append((self._now + timedelta(seconds=seconds), action))

    def sleep(self, seconds: float) -> None:
        with self._guard:
            super().sleep(seconds)
            due = [a for a in self._alarms if a[0] <= self._now]
            self._alarms = [a for a in self._alarms if a[0] > self._now]
        for _, action in due:
            action()


@dataclass(frozen=True)
class SpawnCall:
    beside: str
    argv: tuple[str, ...]
    env: dict[str, str]
    cwd: str
    pane_id: str


class ScriptedDriver(FakePaneDriver):
    """A FakePaneDriver that records spawns and layouts and can be told to fail.

    `failures` maps a method name (spawn, type_text, paste_text, send_keys, capture, pane,
    kill) to the exception it raises; `kill_failures` limits kill failures to some panes.
    """

    def __init__(self, backend: Multiplexer = Multiplexer.TMUX) -> None:
        super().__init__(backend)
        self.spawned: list[SpawnCall] = []
        self.relayouts: list[str] = []
        self.failures: dict[str, Exception] = {}
        self.kill_failures: dict[str, Exception] = {}
        self.before_paste: Callable[[str, str], None] | None = None
        self.after_spawn: Callable[[str], None] | None = None

    def _fail(self, method: str) -> None:
        failure = self.failures.get(method)
        if failure is not None:
            raise failure

    def spawn(self, beside: str, argv: Sequence[str], env: Mapping[str, str], cwd: str) -> str:
        self._fail("spawn")
        pane_id = super().spawn(beside, argv, env, cwd)
        self.spawned.append(SpawnCall(beside, tuple(argv), dict(env), cwd, pane_id))
        if self.after_spawn is not None:
            self.after_spawn(pane_id)
        return pane_id

    def type_text(self, pane_id: str, text: str) -> None:
        self._fail("type_text")
        super().type_text(pane_id, text)

    def paste_text(self, pane_id: str, text: str) -> None:
        self._fail("paste_text")
        if self.before_paste is not None:
            self.before_paste(pane_id, text)
        super().paste_text(pane_id, text)

    def send_keys(self, pane_id: str, *keys: Key) -> None:
        self._fail("send_keys")
        super().send_keys(pane_id, *keys)

    def capture(self, pane_id: str, lines: int, *, ansi: bool = False) -> str:
        self._fail("capture")
        return super().capture(pane_id, lines, ansi=ansi)

    def pane(self, pane_id: str) -> PaneInfo | None:
        self._fail("pane")
        return super().pane(pane_id)

    def kill(self, pane_id: str) -> bool:
        self._fail("kill")
        failure = self.kill_failures.get(pane_id)
        if failure is not None:
            raise failure
        return super().kill(pane_id)

    def relayout(self, window_id: str) -> None:
        self.relayouts.append(window_id)
        super().relayout(window_id)

    def obey_exit(self, *pane_ids: str) -> None:
        """These panes close when '/exit' is submitted, like a coding agent quitting."""
        obedient = set(pane_ids)

        def on_submit(pane: FakePane, submitted: str) -> None:
            if submitted == "/exit" and pane.pane_id in obedient:
                self.panes.pop(pane.pane_id, None)

        self.on_submit = on_submit


class RecordingLocks(PaneLocks):
    """ThreadLocks that also note each hold: key, timeout, and what the pane had been sent
    when the lock was taken and when it was released."""

    def __init__(self, driver: FakePaneDriver) -> None:
        self._inner = ThreadLocks()
        self._driver = driver
        self.holds: list[tuple[str, float]] = []
        self.typed_at_release: list[int] = []

    @contextmanager
    def _hold(self, key: str, timeout: float) -> Iterator[None]:
        with self._inner.hold(key, timeout):
            self.holds.append((key, timeout))
            try:
                yield
            finally:
                self.typed_at_release.append(sum(len(p.typed) for p in self._driver.panes.values()))

    def hold(self, key: str, timeout: float) -> AbstractContextManager[None]:
        return self._hold(key, timeout)


class TimedOutLocks(PaneLocks):
    """Locks that are always held by someone else."""

    def __init__(self) -> None:
        self.timeouts: list[float] = []

    def hold(self, key: str, timeout: float) -> AbstractContextManager[None]:
        self.timeouts.append(timeout)
        raise TimeoutError(key)


@dataclass
class Member:
    agent_id: int
    pane_id: str | None
    pane: FakePane | None


@dataclass
class PresetRecorder:
    """Stands in for ensure_opencode_preset: records the homes it was asked about."""

    homes: list[Path] = field(default_factory=list)

    def __call__(self, home: Path) -> Path:
        self.homes.append(home)
        return home / ".config" / "opencode" / "agents" / "cafleet.md"


def profiles_with(
    delays: Mapping[str, float],
    commands: Mapping[str, tuple[str, ...]] | None = None,
    ready_rules: Mapping[str, tuple[ReadyRule, ...]] | None = None,
    channels: Mapping[str, tuple[Channel, ...]] | None = None,
) -> AgentProfiles:
    """The built-in profiles with these submit delays, foreground names, ready rules and
    native channels."""
    commands = commands or {}
    ready_rules = ready_rules or {}
    channels = channels or {}
    return AgentProfiles.resolved(
        {
            agent: ProfileOverrides(
                submit_delay=delays.get(agent.value),
                foreground_names=commands.get(agent.value),
                ready_rules=ready_rules.get(agent.value),
                channels=channels.get(agent.value),
            )
            for agent in PROFILES
        }
    )


@dataclass
class PaneRig:
    """The store, clock, fake panes and pane services of one test."""

    store: MemoryStore = field(default_factory=MemoryStore)
    clock: TimelineClock = field(default_factory=TimelineClock)
    drivers: FakePaneDrivers = field(default_factory=FakePaneDrivers)
    submit_delays: dict[str, float] = field(default_factory=lambda: dict(SUBMIT_DELAYS))
    agent_commands: dict[str, tuple[str, ...]] = field(
        default_factory=lambda: {a.value: p.foreground_names for a, p in PROFILES.items()}
    )
    ready_rules: dict[str, tuple[ReadyRule, ...]] = field(default_factory=dict)
    channels: dict[str, tuple[Channel, ...]] = field(default_factory=dict)
    locks: PaneLocks = field(default_factory=ThreadLocks)
    pads: FakeLaunchPads = field(default_factory=FakeLaunchPads)
    backend: Multiplexer = Multiplexer.TMUX  # the Director's multiplexer, so the members'
    gatherings: Gatherings = field(default_factory=Gatherings)  # a broadcast's, for the sender
    queue_locks: PaneLocks = field(default_factory=ThreadLocks)  # the panes' delivery queues

    def __post_init__(self) -> None:
        self.driver = ScriptedDriver(self.backend)
        self.drivers.servers[(self.backend, SOCKET)] = self.driver

    # -- services

    def keystrokes(self, locks: PaneLocks | None = None) -> KeystrokeSender:
        return KeystrokeSender(
            self.drivers, locks or self.locks, self.clock, self.profiles(), self.gatherings
        )

    def profiles(self) -> AgentProfiles:
        return profiles_with(
            self.submit_delays, self.agent_commands, self.ready_rules, self.channels
        )

    def teardown(self) -> PaneTeardown:
        return PaneTeardown(self.keystrokes(), self.drivers, self.clock)

    def fleet_service(self) -> FleetService:
        locator = FakePaneLocator(PaneLocation(self.backend, "main", WINDOW, DIRECTOR_PANE, SOCKET))
        return FleetService(self.store, self.clock, locator, self.teardown())

    def removal(self) -> MemberRemoval:
        return MemberRemoval(self.store, self.clock, self.drivers, self.teardown())

    def member_panes(
        self, drivers: FakePaneDrivers | None = None, relay: RelayClient | None = None
    ) -> MemberPanes:
        """The pane verbs as a process on the drivers' host runs them (the rig's by default)."""
        shell = AgentServerShell(self.pads, self.profiles(), self.clock)
        drivers = drivers or self.drivers
        return MemberPanes(self.store, self.clock, drivers, self.keystrokes(), shell, relay)

    def on_host(self, host: str) -> FakePaneDrivers:
        """The rig's fake servers as seen from a process on another host."""
        drivers = FakePaneDrivers(here=host)
        drivers.servers = self.drivers.servers
        return drivers

    def messaging(
        self,
        max_text_len: int = 200,
        start_wait: float | None = None,
        drivers: FakePaneDrivers | None = None,
        drains: QueueDrains | None = None,
        notifier: Notifier | None = None,
    ) -> MessagingService:
        """Messaging as a process on the drivers' host runs it (the rig's by default); it
        types every preview unless given another notifier (see `ladder`)."""
        notifier = notifier or PaneNotifier(self.keystrokes(), max_text_len)
        wait = START_WAIT_SECONDS if start_wait is None else start_wait
        reaches = (drivers or self.drivers).reaches
        return MessagingService(
            self.store,
            self.clock,
            notifier,
            self.queue_locks,
            wait,
            drains=drains,
            gatherings=self.gatherings,
            reaches=reaches,
            resumption=PaneResumption(self.keystrokes(), self.drivers, max_text_len),
        )

    def ladder(self, max_text_len: int = 200) -> Notifier:
        """The whole delivery ladder: the agents' own channels, herdr's prompt, keys."""
        keys = PaneNotifier(self.keystrokes(), max_text_len)
        herdr = HerdrPromptChannel(self.drivers, self.locks)
        return channel_ladder(
            self.profiles(), self.pads, FakeCodexThreads(), self.clock, keys, max_text_len, herdr
        )

    def spawner(
        self,
        programs: FakePrograms,
        context: SpawnContext,
        preset: PresetRecorder | None = None,
        starts: AgentStarts | None = None,
    ) -> MemberSpawner:
        return MemberSpawner(
            self.store,
            self.clock,
            self.drivers,
            programs,
            context,
            preset or PresetRecorder(),
            self.pads,
            self.profiles(),
            starts=starts,
        )

    # -- building the world

    def fleet(
        self, coding_agent: CodingAgent = CodingAgent.CLAUDE, director_command: str = "claude"
    ) -> FleetCreated:
        """A fleet whose Director runs `director_command` in pane %0."""
        made = self.fleet_service().create("alpha", coding_agent)
        self.driver.add_pane(director_command, WINDOW, pane_id=DIRECTOR_PANE)
        return made

    def member(
        self,
        made: FleetCreated,
        name: str = "worker",
        *,
        command: str | None = "claude",
        coding_agent: CodingAgent = CodingAgent.CLAUDE,
        pending: bool = False,
        monitor: bool = False,
        agent_commands: tuple[str, ...] = (),
        pane_id: str | None = None,
        starting: bool = False,
        legacy: bool = False,
        launch_pad: str | None = None,
        host: str | None = None,
    ) -> Member:
        """A placed member. command=None records a pane that does not exist (gone);
        starting=True records a pane whose agent has not yet been seen ready. Its pane is
        claimed as `member create` does, unless `legacy` (a row from before identities)."""
        pane: FakePane | None = None
        if pending:
            pane_id = None
        elif command is not None:
            pane = self.driver.add_pane(command, WINDOW, pane_id=pane_id)
            pane_id = pane.pane_id
        else:
            pane_id = pane_id or "%404"
        with self.store(write=True) as uow:
            now = self.clock.now()
            agent_id = uow.agents.add(
                Agent(
                    0,
                    made.fleet.fleet_id,
                    name,
                    f"{name} description",
                    now,
                    card_kind=CardKind.MONITORING_MEMBER if monitor else None,
                )
            )
            uow.placements.add(
                Placement(
                    agent_id,
                    made.director.agent_id,
                    self.backend,
                    "main",
                    WINDOW,
                    pane_id,
                    coding_agent,
                    now,
                    SOCKET,
                    agent_commands,
                    ready_at=None if pane_id is None or starting else now,
                    ready_rule=None if pane_id is None or starting else "wait",
                    identity=None if pane is None or legacy else self.driver.claim(pane.pane_id),
                    launch_pad=launch_pad,
                    host=host,
                )
            )
            if not monitor:
                uow.monitor.enroll(MonitorSchedule(agent_id, 720))
            uow.commit()
        return Member(agent_id, pane_id, pane)

    def loose_agent(self, made: FleetCreated, name: str = "loose") -> int:
        """An active agent of the fleet without a placement."""
        with self.store(write=True) as uow:
            agent_id = uow.agents.add(
                Agent(0, made.fleet.fleet_id, name, f"{name} description", self.clock.now())
            )
            uow.commit()
        return agent_id

    def mark_ready(self, agent_id: int, rule: str = "hook") -> None:
        """Record that the member's agent was seen ready, as a finished spawn would."""
        with self.store(write=True) as uow:
            placement = uow.placements.get(agent_id)
            assert placement is not None
            uow.placements.save(placement.became_ready(rule, self.clock.now()))
            uow.commit()

    def pad(self, agent_id: int) -> FakeLaunchPad:
        return self.pads.for_agent(agent_id)

    def director_pane(self) -> FakePane:
        return self.driver.panes[DIRECTOR_PANE]

    # -- reading the end state

    def agent(self, agent_id: int) -> Agent | None:
        with self.store() as uow:
            return uow.agents.get(agent_id)

    def placement(self, agent_id: int) -> Placement | None:
        with self.store() as uow:
            return uow.placements.get(agent_id)

    def schedule(self, agent_id: int) -> MonitorSchedule | None:
        with self.store() as uow:
            return uow.monitor.get(agent_id)

    def fleet_row(self, fleet_id: int) -> Fleet | None:
        with self.store() as uow:
            return uow.fleets.get(fleet_id)

    def deliveries(self, task_id: int) -> list[Delivery]:
        with self.store() as uow:
            return uow.deliveries.for_task(task_id)


def target(
    pane_id: str = "%1",
    *,
    coding_agent: CodingAgent = CodingAgent.CLAUDE,
    agent_commands: tuple[str, ...] = (),
    agent_id: int = 3,
    socket: str | None = SOCKET,
    identity: str | None = None,
) -> PushTarget:
    """identity None: a placement recorded before pane identities were kept."""
    return PushTarget(
        agent_id=agent_id,
        backend=Multiplexer.TMUX,
        socket=socket,
        pane_id=pane_id,
        coding_agent=coding_agent,
        agent_commands=agent_commands,
        identity=identity,
    )

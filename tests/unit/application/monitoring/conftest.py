"""Builders for the monitor tests: a fleet in the in-memory store whose placements point at
panes of fake multiplexer servers, a MonitorService wired to them, and a runner that drives
`run_loop` for a fixed number of ticks on a clock that only moves when the loop sleeps.

Everything runs on the fakes in cafleet.adapters.fake: no database, no multiplexer, no
real time. Helpers are exposed as fixtures so test modules never import this file.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from types import TracebackType

import pytest

from cafleet.adapters.fake.clock import FakeClock
from cafleet.adapters.fake.locator import FakePaneLocator
from cafleet.adapters.fake.pane_driver import FakePane, FakePaneDriver, FakePaneDrivers, ThreadLocks
from cafleet.adapters.fake.store import MemoryStore, MemoryUnitOfWork
from cafleet.application.fleets import FleetService
from cafleet.application.members.status import AgentStatusReader
from cafleet.application.members.titles import PaneTitles
from cafleet.application.monitoring.service import MonitorService, TickReport
from cafleet.application.panes.keystrokes import KeystrokeSender
from cafleet.application.panes.teardown import PaneTeardown
from cafleet.application.ports.delivery import QueueDrains
from cafleet.application.ports.panes import PaneLocks, PanePresentation
from cafleet.application.ports.system import LoopMarks, ProcessIdentity
from cafleet.domain.agents.registry import AgentProfiles, ProfileOverrides
from cafleet.domain.errors import DatabaseBusy, Unavailable
from cafleet.domain.fleet import Agent, CardKind
from cafleet.domain.message import Message, unicast
from cafleet.domain.monitor import MonitorRuntime, MonitorSchedule
from cafleet.domain.panes import PaneInfo
from cafleet.domain.placement import CodingAgent, Multiplexer, PaneLocation, Placement
from cafleet.entrypoints.monitor.loop import run_loop

START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
HOST = "host-a"
MY_PID = 4242
SOCKET = "mon-test.sock"
AGENT_COMMAND = "demo-agent"  # the foreground command of every fake agent pane
NO_DELAY_PROFILES = AgentProfiles.resolved(
    {agent: ProfileOverrides(submit_delay=0.0) for agent in CodingAgent}
)
DEFAULT_STALL = 240

WAKE_LINE = re.compile(
    r"^(?P<at>\S+) due agent (?P<id>\d+) \((?P<name>.*)\) \[(?P<reasons>[^\]]*)\] -> wake monitor$"
)


# --------------------------------------------------------------------------- fake adapters


class FakeProcess(ProcessIdentity):
    """This process (pid, host) and a scripted answer to "does pid exist on this host"."""

    def __init__(self, pid: int = MY_PID, host: str = HOST, dead: tuple[int, ...] = ()) -> None:
        self._pid = pid
        self._host = host
        self.dead = set(dead)
        self.probed: list[int] = []

    def pid(self) -> int:
        return self._pid

    def host(self) -> str:
        return self._host

    def alive(self, pid: int) -> bool:
        self.probed.append(pid)
        return pid not in self.dead


class CountingDriver(FakePaneDriver):
    """A fake server that counts its pane listings (the sweep) apart from single-pane
    lookups, and can be told to fail typing."""

    def __init__(self, backend: Multiplexer = Multiplexer.TMUX) -> None:
        super().__init__(backend)
        self.listings = 0
        self.lookups = 0
        self.typing_fails: str | None = None  # a reason: type_text raises Unavailable

    def list_panes(self) -> dict[str, PaneInfo]:
        self.listings += 1
        return super().list_panes()

    def pane(self, pane_id: str) -> PaneInfo | None:
        self._reach()
        self.lookups += 1
        found = self.panes.get(pane_id)
        return None if found is None else PaneInfo(found.pane_id, found.dead, found.command)

    def type_text(self, pane_id: str, text: str) -> None:
        if self.typing_fails is not None:
            self._reach()
            raise Unavailable(self.typing_fails)
        super().type_text(pane_id, text)


class StatefulDriver(CountingDriver, PanePresentation):
    """A server that also reports the agent state it detects in each pane (the AgentStates
    capability herdr has; panes without an entry report no state) and shows labels and
    notifications as herdr does (`notify_fails`: a reason, notify raises Unavailable)."""

    def __init__(self, backend: Multiplexer = Multiplexer.HERDR) -> None:
        super().__init__(backend)
        self.states: dict[str, str] = {}
        self.state_reads = 0
        self.labels: dict[str, str] = {}
        self.notices: list[tuple[str, str]] = []
        self.notify_fails: str | None = None

    def agent_states(self) -> dict[str, str]:
        self.state_reads += 1
        return dict(self.states)

    def label(self, pane_id: str, label: str) -> None:
        super().label(pane_id, label)
        self.labels[pane_id] = label

    def notify(self, title: str, body: str) -> None:
        if self.notify_fails is not None:
            raise Unavailable(self.notify_fails)
        self.notices.append((title, body))


class _BusyUnitOfWork(MemoryUnitOfWork):
    def __enter__(self) -> MemoryUnitOfWork:
        raise DatabaseBusy()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        return None


class FlakyStore(MemoryStore):
    """The in-memory store; while `busy` is set every write unit of work fails to take the
    write lock, the way SQLite does after its busy timeout."""

    def __init__(self) -> None:
        super().__init__()
        self.busy = False

    def __call__(self, *, write: bool = False) -> MemoryUnitOfWork:
        if write and self.busy:
            return _BusyUnitOfWork(self, write=write)
        return super().__call__(write=write)


# --------------------------------------------------------------------------- the fleet


@dataclass
class LoopRun:
    code: int
    out: list[str]
    err: list[str]
    ticks: int
    reports: list[TickReport]

    def wakes(self) -> list[tuple[datetime, int, str, tuple[str, ...]]]:
        """(time, agent id, name, reasons) of every `due agent ... -> wake monitor` line."""
        found = []
        for line in self.out:
            match = WAKE_LINE.match(line)
            if match:
                reasons = tuple(match["reasons"].split(","))
                found.append(
                    (datetime.fromisoformat(match["at"]), int(match["id"]), match["name"], reasons)
                )
        return found

    def wake_times(self, agent_id: int) -> list[float]:
        """Seconds after START at which the agent was named in a delivered wake."""
        return [(at - START).total_seconds() for at, a, _, _ in self.wakes() if a == agent_id]

    def reasons_at(self, agent_id: int, seconds: float) -> tuple[str, ...] | None:
        for at, a, _, reasons in self.wakes():
            if a == agent_id and (at - START).total_seconds() == seconds:
                return reasons
        return None


@dataclass
class MonitorFleet:
    """One fleet whose panes live on `driver`; the builders write straight into the store."""

    store: MemoryStore
    clock: FakeClock
    drivers: FakePaneDrivers
    driver: CountingDriver
    process: FakeProcess
    fleet_id: int
    director_id: int
    admin_id: int
    director_placement: Placement
    director_pane: FakePane
    watcher_id: int | None = None
    watcher_pane: FakePane | None = None
    members: dict[str, int] = field(default_factory=dict)
    panes: dict[int, FakePane] = field(default_factory=dict)

    @property
    def backend(self) -> Multiplexer:
        return self.director_placement.backend

    @property
    def socket(self) -> str | None:
        return self.director_placement.socket

    # -- building ------------------------------------------------------------------------

    def _pane_id(self, n: int) -> str:
        return f"w1:p{n}" if self.backend is Multiplexer.HERDR else f"%{n}"

    def _place(
        self,
        name: str,
        *,
        card_kind: CardKind | None,
        enroll: int | None,
        pending: bool,
        command: str,
        driver: CountingDriver | None,
        socket: str | None,
    ) -> tuple[int, FakePane | None]:
        server = driver or self.driver
        with self.store(write=True) as uow:
            now = self.clock.now()
            agent_id = uow.agents.add(
                Agent(0, self.fleet_id, name, f"{name} description", now, card_kind=card_kind)
            )
            pane = None if pending else server.add_pane(command, pane_id=self._pane_id(agent_id))
            uow.placements.add(
                Placement(
                    agent_id=agent_id,
                    director_agent_id=self.director_id,
                    backend=self.backend,
                    session=self.director_placement.session,
                    window_id=self.director_placement.window_id,
                    pane_id=None if pane is None else pane.pane_id,
                    coding_agent=CodingAgent.CUSTOM,
                    created_at=now,
                    socket=socket if socket is not None else self.socket,
                    agent_commands=(AGENT_COMMAND,),
                    ready_at=now,
                )
            )
            if enroll is not None:
                uow.monitor.enroll(MonitorSchedule(agent_id, enroll))
            uow.commit()
        if pane is not None:
            self.panes[agent_id] = pane
        return agent_id, pane

    def member(
        self,
        name: str = "worker",
        *,
        pending: bool = False,
        command: str = AGENT_COMMAND,
        driver: CountingDriver | None = None,
        socket: str | None = None,
    ) -> int:
        """An ordinary member enrolled at 720 s, its pane running the agent."""
        agent_id, _ = self._place(
            name,
            card_kind=None,
            enroll=720,
            pending=pending,
            command=command,
            driver=driver,
            socket=socket,
        )
        self.members[name] = agent_id
        return agent_id

    def watcher(
        self,
        name: str = "watcher",
        *,
        pending: bool = False,
        command: str = AGENT_COMMAND,
        driver: CountingDriver | None = None,
        socket: str | None = None,
    ) -> int:
        """The monitoring member: pane-bound, never enrolled."""
        agent_id, pane = self._place(
            name,
            card_kind=CardKind.MONITORING_MEMBER,
            enroll=None,
            pending=pending,
            command=command,
            driver=driver,
            socket=socket,
        )
        self.watcher_id, self.watcher_pane = agent_id, pane
        return agent_id

    def message(self, to: int, sender: int, text: str = "hello") -> int:
        with self.store(write=True) as uow:
            task_id = uow.messages.add(unicast(sender, to, text, self.clock.now()))
            uow.commit()
        return task_id

    def save_message(self, message: Message) -> None:
        with self.store(write=True) as uow:
            uow.messages.save(message)
            uow.commit()

    def deregister(self, agent_id: int) -> None:
        """What `member delete` leaves in the store: a retired agent, no placement, no schedule."""
        with self.store(write=True) as uow:
            agent = uow.agents.get(agent_id)
            assert agent is not None
            uow.agents.save(agent.retired(self.clock.now()))
            uow.placements.remove(agent_id)
            uow.monitor.unenroll(agent_id)
            uow.commit()

    def set_runtime(self, runtime: MonitorRuntime) -> None:
        with self.store(write=True) as uow:
            uow.monitor.save_runtime(runtime)
            uow.commit()

    def edit_schedule(self, agent_id: int, **changes: object) -> None:
        with self.store(write=True) as uow:
            current = uow.monitor.get(agent_id)
            assert current is not None
            uow.monitor.save(replace(current, **changes))  # type: ignore[arg-type]
            uow.commit()

    def add_server(self, socket: str) -> CountingDriver:
        """Another server of the fleet's multiplexer, for placements recorded elsewhere."""
        server = type(self.driver)(self.backend)
        self.drivers.servers[(self.backend, socket)] = server
        return server

    # -- services ------------------------------------------------------------------------

    def keystrokes(self) -> KeystrokeSender:
        return KeystrokeSender(self.drivers, ThreadLocks(), self.clock, NO_DELAY_PROFILES)

    def service(
        self,
        *,
        stall_interval: int = DEFAULT_STALL,
        process: FakeProcess | None = None,
        statuses: AgentStatusReader | None = None,
        drains: QueueDrains | None = None,
        titles: PaneTitles | None = None,
        locks: PaneLocks | None = None,
        marks: LoopMarks | None = None,
    ) -> MonitorService:
        return MonitorService(
            self.store,
            self.clock,
            self.drivers,
            self.keystrokes(),
            process or self.process,
            stall_interval,
            statuses,
            drains=drains,
            titles=titles,
            locks=locks,
            marks=marks,
        )

    def fleets(self) -> FleetService:
        teardown = PaneTeardown(self.keystrokes(), self.drivers, self.clock)
        return FleetService(self.store, self.clock, FakePaneLocator(), teardown)

    def run(
        self,
        service: MonitorService,
        ticks: int,
        tick_seconds: int = 5,
        *,
        before_tick: Mapping[int, Callable[[], object]] | None = None,
        pid: int = MY_PID,
    ) -> LoopRun:
        """`run_loop` until `ticks` ticks have run (or it stops by itself); `before_tick[n]`
        runs just before the n-th tick (1-based)."""
        hooks = dict(before_tick or {})
        reports: list[TickReport] = []
        count = 0
        real_tick = service.tick

        def counted(fleet_id: int) -> TickReport:
            nonlocal count
            count += 1
            if count in hooks:
                hooks[count]()
            report = real_tick(fleet_id)
            reports.append(report)
            return report

        service.tick = counted  # type: ignore[method-assign]
        out: list[str] = []
        err: list[str] = []
        try:
            code = run_loop(
                service,
                self.clock,
                self.fleet_id,
                tick_seconds,
                pid=pid,
                should_stop=lambda: count >= ticks,
                out=out.append,
                err=err.append,
            )
        finally:
            service.tick = real_tick  # type: ignore[method-assign]
        return LoopRun(code, out, err, count, reports)

    # -- reading the end state -------------------------------------------------------------

    def schedule(self, agent_id: int) -> MonitorSchedule:
        with self.store() as uow:
            found = uow.monitor.get(agent_id)
        assert found is not None
        return found

    def runtime(self) -> MonitorRuntime | None:
        with self.store() as uow:
            return uow.monitor.runtime(self.fleet_id)

    def wakes_typed(self) -> list[str]:
        """What the watcher's pane received as submitted turns."""
        assert self.watcher_pane is not None
        return self.watcher_pane.submitted()

    def at(self, seconds: float) -> datetime:
        return START + timedelta(seconds=seconds)


@dataclass
class FleetFactory:
    """Makes a fleet (Director pane %0 / w1:p0 on the given server) and its services."""

    store: MemoryStore
    clock: FakeClock
    drivers: FakePaneDrivers
    process: FakeProcess
    made: int = 0

    def __call__(
        self,
        *,
        backend: Multiplexer = Multiplexer.TMUX,
        driver: CountingDriver | None = None,
        watcher: bool = True,
        members: int = 1,
    ) -> MonitorFleet:
        server = driver or (
            StatefulDriver(backend) if backend is Multiplexer.HERDR else CountingDriver(backend)
        )
        self.made += 1
        socket = SOCKET if self.made == 1 else f"mon-test-{self.made}.sock"  # a server per fleet
        self.drivers.servers[(backend, socket)] = server
        director_pane_id = "w1:p0" if backend is Multiplexer.HERDR else "%0"
        director_pane = server.add_pane(AGENT_COMMAND, pane_id=director_pane_id)
        location = PaneLocation(backend, "main", "@0", director_pane_id, socket)
        teardown = PaneTeardown(
            KeystrokeSender(self.drivers, ThreadLocks(), self.clock, NO_DELAY_PROFILES),
            self.drivers,
            self.clock,
        )
        made = FleetService(self.store, self.clock, FakePaneLocator(location), teardown).create(
            "mon", CodingAgent.CUSTOM
        )
        fleet = MonitorFleet(
            store=self.store,
            clock=self.clock,
            drivers=self.drivers,
            driver=server,
            process=self.process,
            fleet_id=made.fleet.fleet_id,
            director_id=made.director.agent_id,
            admin_id=made.administrator.agent_id,
            director_placement=made.placement,
            director_pane=director_pane,
        )
        fleet.panes[made.director.agent_id] = director_pane
        if watcher:
            fleet.watcher()
        for n in range(members):
            fleet.member("worker" if members == 1 else f"worker-{n + 1}")
        return fleet


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(START)


@pytest.fixture
def store() -> FlakyStore:
    return FlakyStore()


@pytest.fixture
def process() -> FakeProcess:
    return FakeProcess()


@pytest.fixture
def make_fleet(store: FlakyStore, clock: FakeClock, process: FakeProcess) -> FleetFactory:
    return FleetFactory(store, clock, FakePaneDrivers(), process)


@pytest.fixture
def fleet(make_fleet: FleetFactory) -> MonitorFleet:
    """Director + one member `worker` + the monitoring member, all on one tmux server."""
    return make_fleet()


@pytest.fixture
def new_process() -> type[FakeProcess]:
    """Make another process identity: new_process(pid=..., host=..., dead=(...))."""
    return FakeProcess


@pytest.fixture
def creeping_fleet(process: FakeProcess) -> MonitorFleet:
    """The default fleet on a clock whose every reading advances 1 ms."""
    clock = FakeClock(START, step=timedelta(milliseconds=1))
    return FleetFactory(FlakyStore(), clock, FakePaneDrivers(), process)()

"""The one composition: every service of CAFleet, built exactly once and on first use.

A CLI call must not pay for machinery it does not use, so this module imports only the
standard library at load time and builds each adapter and service lazily. The adapters are
this host's unless an `Adapters` bundle names other builders: the dependency-injector
container (container.py) passes its overridable providers, the tests `fake_adapters()`
(fakes.py). Every entrypoint therefore gets the same services with the same collaborators.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from cafleet.settings import Settings

if TYPE_CHECKING:
    from cafleet.application.admin.pane_watch import PaneWatch
    from cafleet.application.admin.service import AdminService
    from cafleet.application.fleets import FleetService
    from cafleet.application.members.panes import MemberPanes
    from cafleet.application.members.registry import MemberService
    from cafleet.application.members.removal import MemberRemoval
    from cafleet.application.members.shell import AgentServerShell
    from cafleet.application.members.spawning import MemberSpawner
    from cafleet.application.members.status import AgentStatusReader
    from cafleet.application.members.titles import PaneTitles
    from cafleet.application.messaging.receipts import ReceiptReader
    from cafleet.application.messaging.search import SearchService
    from cafleet.application.messaging.service import MessagingService
    from cafleet.application.monitoring.service import MonitorService
    from cafleet.application.panes.gathering import Gatherings
    from cafleet.application.panes.keystrokes import KeystrokeSender
    from cafleet.application.panes.teardown import PaneTeardown
    from cafleet.application.ports.agents import AgentStarts, CodexThreads, LaunchPads, Programs
    from cafleet.application.ports.delivery import Notifier, QueueDrains, Resumption
    from cafleet.application.ports.panes import AgentStateFeeds, PaneDrivers, PaneLocator, PaneLocks
    from cafleet.application.ports.store import UnitOfWorkFactory
    from cafleet.application.ports.system import Clock, LoopMarks, ProcessIdentity
    from cafleet.application.relay.service import RelayClient, RelayService
    from cafleet.application.setup import SkillsService
    from cafleet.domain.agents.grants import DirectorGrant
    from cafleet.domain.agents.homes import AgentHomes

T = TypeVar("T")

RELAY_WORKERS = 4  # pane requests a relay runs at once (a spawn waits for its agent)
START_WAIT_MARGIN = 30  # seconds a send waits for a starting member beyond its start timeout


class _Deferred:
    """Stands in for an object that is built on first use; never for one that is checked
    with isinstance."""

    def __init__(self, make: Callable[[], Any]) -> None:
        self._make = make

    def __getattr__(self, name: str) -> Any:
        return getattr(self._make(), name)


def deferred(make: Callable[[], T]) -> T:
    """`make()`'s object, built when it is first used: a service takes all its collaborators,
    but a command that reads the store must not import what only a pane would need."""
    return cast(T, _Deferred(make))


def resolved(value: object) -> object:
    """The object a deferred stand-in builds (the object itself when it is not one)."""
    return value._make() if isinstance(value, _Deferred) else value


@dataclass(frozen=True, kw_only=True)
class Adapters:
    """Builders of the adapters to use instead of this host's: the container's providers, or
    fake_adapters(). An adapter without a builder here is built the production way, on first
    use. `notifier` replaces the channel ladder (a test that records what would be typed)."""

    uow: Callable[[], UnitOfWorkFactory] | None = None
    install_records: Callable[[], UnitOfWorkFactory] | None = None
    clock: Callable[[], Clock] | None = None
    pane_drivers: Callable[[], PaneDrivers] | None = None
    pane_locks: Callable[[], PaneLocks] | None = None
    launch_pads: Callable[[], LaunchPads] | None = None
    codex_threads: Callable[[], CodexThreads] | None = None
    locator: Callable[[], PaneLocator] | None = None
    process: Callable[[], ProcessIdentity] | None = None
    loop_marks: Callable[[], LoopMarks] | None = None
    state_feeds: Callable[[], AgentStateFeeds] | None = None
    drains: Callable[[], QueueDrains] | None = None
    programs: Callable[[], Programs] | None = None
    agent_starts: Callable[[], AgentStarts] | None = None
    notifier: Callable[[], Notifier] | None = None

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls))


class Components:
    """Every service, each built once on first use (a cached property), with its collaborators
    passed by keyword so mypy checks each one. A feature a root does without is switched
    off by an explicit null object (adapters/disabled.py), never by a missing argument."""

    def __init__(
        self,
        settings: Settings,
        env: Mapping[str, str] | None = None,
        adapters: Adapters | None = None,
    ) -> None:
        self.settings = settings
        self.env = os.environ if env is None else env
        self.adapters = adapters or Adapters()

    # -- the adapters: this host's unless the bundle gives a builder ------------------------

    @cached_property
    def uow(self) -> UnitOfWorkFactory:
        """Units of work on a database at this version's schema revision (on SQLite, on the
        standard sqlite3 module: a CLI call must not pay for importing SQLAlchemy)."""
        if self.adapters.uow is not None:
            return self.adapters.uow()
        from cafleet.adapters.store.select import open_units_of_work

        return open_units_of_work(self.settings)

    @cached_property
    def install_records(self) -> UnitOfWorkFactory:
        """Units of work for skill-install records, on any revision that has their table:
        the gate and `setup skill` come before a migration is demanded."""
        if self.adapters.install_records is not None:
            return self.adapters.install_records()
        from cafleet.adapters.store.select import open_units_of_work

        return open_units_of_work(self.settings, check_revision=False)

    @cached_property
    def clock(self) -> Clock:
        if self.adapters.clock is not None:
            return self.adapters.clock()
        from cafleet.adapters.system.clock import SystemClock

        return SystemClock()

    @cached_property
    def pane_drivers(self) -> PaneDrivers:
        if self.adapters.pane_drivers is not None:
            return self.adapters.pane_drivers()
        from cafleet.adapters.multiplexers import SystemPaneDrivers

        return SystemPaneDrivers()

    @cached_property
    def pane_locks(self) -> PaneLocks:
        if self.adapters.pane_locks is not None:
            return self.adapters.pane_locks()
        from cafleet.adapters.runtime.locks import FileLocks, runtime_directory

        return FileLocks(runtime_directory(self.env))

    @cached_property
    def launch_pads(self) -> LaunchPads:
        if self.adapters.launch_pads is not None:
            return self.adapters.launch_pads()
        from cafleet.adapters.runtime.launch_pads import RuntimeLaunchPads
        from cafleet.adapters.runtime.locks import runtime_directory

        return RuntimeLaunchPads(runtime_directory(self.env))

    @cached_property
    def codex_threads(self) -> CodexThreads:
        if self.adapters.codex_threads is not None:
            return self.adapters.codex_threads()
        from cafleet.adapters.agents.codex import CodexRollouts

        return CodexRollouts()

    @cached_property
    def locator(self) -> PaneLocator:
        if self.adapters.locator is not None:
            return self.adapters.locator()
        from cafleet.adapters.multiplexers import EnvironmentPaneLocator

        return EnvironmentPaneLocator(self.env)

    @cached_property
    def process(self) -> ProcessIdentity:
        if self.adapters.process is not None:
            return self.adapters.process()
        from cafleet.adapters.system.process import SystemProcess

        return SystemProcess(self.env)

    @cached_property
    def loop_marks(self) -> LoopMarks:
        if self.adapters.loop_marks is not None:
            return self.adapters.loop_marks()
        from cafleet.adapters.runtime.loop_marks import store_loop_marks

        return store_loop_marks(self.env, self.settings.store_name)

    @cached_property
    def state_feeds(self) -> AgentStateFeeds:
        """herdr's pushed agent states: a feed is opened only when a loop reads a herdr pane."""
        if self.adapters.state_feeds is not None:
            return self.adapters.state_feeds()
        from cafleet.adapters.herdr.feed import HerdrStateFeeds

        return HerdrStateFeeds(self.env)

    @cached_property
    def drains(self) -> QueueDrains:
        """Whoever delivers the rows a send leaves queued, so the send returns at once."""
        if self.adapters.drains is not None:
            return self.adapters.drains()
        from cafleet.adapters.runtime.locks import runtime_directory
        from cafleet.adapters.system.drains import DrainProcess

        env = self.env
        return DrainProcess(env, lambda: runtime_directory(env))

    @cached_property
    def programs(self) -> Programs:
        if self.adapters.programs is not None:
            return self.adapters.programs()
        from cafleet.adapters.agents.programs import SystemPrograms

        return SystemPrograms(self.env)

    @cached_property
    def agent_starts(self) -> AgentStarts:
        if self.adapters.agent_starts is not None:
            return self.adapters.agent_starts()
        from cafleet.adapters.agents.starts import ProcAgentStarts

        return ProcAgentStarts()

    @cached_property
    def user_home(self) -> Path:
        return Path(self.env.get("HOME") or Path.home())

    @cached_property
    def agent_homes(self) -> AgentHomes:
        """The coding agents' config homes, as CLAUDE_CONFIG_DIR, CODEX_HOME and
        XDG_CONFIG_HOME resolve them."""
        from cafleet.domain.agents.homes import AgentHomes

        return AgentHomes.from_environ(self.env, self.user_home)

    # -- the way to a pane -------------------------------------------------------------------

    @cached_property
    def gatherings(self) -> Gatherings:
        """Shared by the sender and messaging: a broadcast's threads type as one batch."""
        from cafleet.application.panes.gathering import Gatherings

        return Gatherings()

    @cached_property
    def keystrokes(self) -> KeystrokeSender:
        from cafleet.application.panes.keystrokes import KeystrokeSender

        return KeystrokeSender(
            drivers=self.pane_drivers,
            locks=self.pane_locks,
            clock=self.clock,
            profiles=self.settings.profiles,
            gatherings=self.gatherings,
        )

    @cached_property
    def agent_statuses(self) -> AgentStatusReader:
        from cafleet.application.members.status import AgentStatusReader

        return AgentStatusReader(
            pads=self.launch_pads,
            profiles=self.settings.profiles,
            clock=self.clock,
            threads=self.codex_threads,
            drivers=self.pane_drivers,
        )

    @cached_property
    def receipt_reader(self) -> ReceiptReader:
        from cafleet.application.messaging.receipts import ReceiptReader

        return ReceiptReader(
            pads=self.launch_pads, profiles=self.settings.profiles, threads=self.codex_threads
        )

    @cached_property
    def notifier(self) -> Notifier:
        if self.adapters.notifier is not None:
            return self.adapters.notifier()
        from cafleet.application.messaging.channels import channel_ladder
        from cafleet.application.messaging.herdr_channel import HerdrPromptChannel
        from cafleet.application.panes.notifier import PaneNotifier

        return channel_ladder(
            profiles=self.settings.profiles,
            pads=self.launch_pads,
            threads=self.codex_threads,
            clock=self.clock,
            keys=PaneNotifier(self.keystrokes, self.settings.max_text_len),
            max_text_len=self.settings.max_text_len,
            herdr_prompt=HerdrPromptChannel(self.pane_drivers, self.pane_locks),
        )

    @cached_property
    def resumption(self) -> Resumption:
        from cafleet.application.messaging.resumption import PaneResumption

        return PaneResumption(
            keys=self.keystrokes, drivers=self.pane_drivers, max_text_len=self.settings.max_text_len
        )

    @cached_property
    def teardown(self) -> PaneTeardown:
        from cafleet.application.panes.teardown import PaneTeardown

        return PaneTeardown(keystrokes=self.keystrokes, drivers=self.pane_drivers, clock=self.clock)

    @cached_property
    def relay_client(self) -> RelayClient:
        """Pane work for another host's panes, asked of that host's relay."""
        from cafleet.application.relay.service import RelayClient

        return RelayClient(uow=self.uow, clock=self.clock)

    @cached_property
    def pane_titles(self) -> PaneTitles:
        from cafleet.application.members.titles import PaneTitles

        return PaneTitles(uow=self.uow, drivers=self.pane_drivers, statuses=self.agent_statuses)

    @cached_property
    def agent_shell(self) -> AgentServerShell:
        from cafleet.application.members.shell import AgentServerShell

        return AgentServerShell(
            pads=self.launch_pads, profiles=self.settings.profiles, clock=self.clock
        )

    # -- the services ------------------------------------------------------------------------

    @cached_property
    def fleets(self) -> FleetService:
        from cafleet.application.fleets import FleetService

        return FleetService(
            uow=self.uow,
            clock=self.clock,
            locator=self.locator,
            teardown=deferred(lambda: self.teardown),  # only `fleet delete` closes panes
            drivers=self.pane_drivers,
            relay=self.relay_client,
        )

    @cached_property
    def member_panes(self) -> MemberPanes:
        from cafleet.application.members.panes import MemberPanes

        return MemberPanes(
            uow=self.uow,
            clock=self.clock,
            drivers=self.pane_drivers,
            keystrokes=self.keystrokes,
            shell=self.agent_shell,
            relay=self.relay_client,
        )

    @cached_property
    def member_removal(self) -> MemberRemoval:
        from cafleet.application.members.removal import MemberRemoval

        return MemberRemoval(
            uow=self.uow,
            clock=self.clock,
            drivers=self.pane_drivers,
            teardown=self.teardown,
            relay=self.relay_client,
        )

    @cached_property
    def member_spawner(self) -> MemberSpawner:
        from cafleet.adapters.agents.opencode import ensure_opencode_preset
        from cafleet.adapters.system.git_dirs import git_directories
        from cafleet.application.members.spawning import MemberSpawner, SpawnContext

        # a member reaches the same store: the file by its absolute path (its sandbox must
        # write beside it), or the PostgreSQL URL as given
        path = None if self.settings.on_postgres else self.settings.require_database_path()
        cwd = os.getcwd()
        context = SpawnContext(
            caller_env=self.env,
            cwd=cwd,
            database_url=f"sqlite:///{path.absolute()}" if path else self.settings.database_url,
            default_agent_command=self.settings.custom_agent_command,
            home=self.user_home,
            start_timeout=self.settings.start_timeout,
            database_dir=str(path.absolute().parent) if path else None,
            git_dirs=git_directories(cwd, self.env),
        )
        preset = self.agent_homes.opencode_preset
        return MemberSpawner(
            uow=self.uow,
            clock=self.clock,
            drivers=self.pane_drivers,
            programs=self.programs,
            context=context,
            ensure_opencode_preset=lambda _home: ensure_opencode_preset(preset),  # not under HOME
            pads=self.launch_pads,
            profiles=self.settings.profiles,
            relay=self.relay_client,
            titles=self.pane_titles,
            starts=self.agent_starts,
        )

    @cached_property
    def messaging(self) -> MessagingService:
        from cafleet.application.messaging.service import MessagingService

        return MessagingService(
            uow=self.uow,
            clock=self.clock,
            notifier=deferred(lambda: self.notifier),  # only a delivery builds the channels
            locks=deferred(lambda: self.pane_locks),  # a send to no pane needs no runtime dir
            start_wait=self.settings.start_timeout + START_WAIT_MARGIN,
            max_body_bytes=self.settings.max_body_bytes,
            drains=deferred(lambda: self.drains),
            gatherings=self.gatherings,
            reaches=lambda host: self.pane_drivers.reaches(host),  # noqa: PLW0108 (drivers: on first ask)
            titles=deferred(lambda: self.pane_titles),  # built on the first change of mail
            resumption=deferred(lambda: self.resumption),  # only a held delivery looks again
        )

    @cached_property
    def monitoring(self) -> MonitorService:
        """One monitor for `monitor start`, `status` and `config` and the admin server."""
        from cafleet.application.monitoring.service import MonitorService

        return MonitorService(
            uow=self.uow,
            clock=self.clock,
            drivers=self.pane_drivers,
            keystrokes=self.keystrokes,
            process=self.process,
            stall_interval=self.settings.monitor_stall_interval,
            statuses=self.agent_statuses,
            receipts=self.receipt_reader,
            feeds=self.state_feeds,
            drains=self.drains,
            relay=self.relay_client,
            titles=self.pane_titles,
            locks=self.pane_locks,
            marks=self.loop_marks,
        )

    @cached_property
    def relay(self) -> RelayService:
        """This host's relay: the verbs other hosts ask of it run as this host's commands
        would (the same composition), its deliveries as a drainer's."""
        from cafleet.adapters.system.hosts import this_host
        from cafleet.adapters.tmux.relay_session import relay_session
        from cafleet.application.members.registry import PaneSurvey
        from cafleet.application.messaging.receipts import ReceiptRecorder
        from cafleet.application.relay.service import RelayDuties, RelayService
        from cafleet.composition.relay_verbs import RelayedVerbs, pane_of_process

        host = this_host(self.env)
        verbs = RelayedVerbs(
            panes=lambda: self.member_panes,
            spawner=lambda: self.member_spawner,
            removal=lambda: self.member_removal,
            fleets=lambda: self.fleets,
        )
        duties = RelayDuties(
            drain=self.messaging.drain_queued,
            run_verb=verbs,
            read_panes=lambda placements: PaneSurvey(
                self.pane_drivers, self.agent_statuses
            ).reports(placements, host),
            record_receipts=ReceiptRecorder(self.uow, self.receipt_reader).record,
            own_pane=lambda: pane_of_process(self.locator, self.pane_drivers),
            own_session=lambda: relay_session(host),
            retitle=self.pane_titles.refresh,
        )
        return RelayService(
            uow=self.uow,
            clock=self.clock,
            process=self.process,
            host=host,
            duties=duties,
            workers=RELAY_WORKERS,
        )

    @cached_property
    def skills(self) -> SkillsService:
        from cafleet import __version__
        from cafleet.adapters.agents.skills import FilesystemSkillInstaller
        from cafleet.application.setup import SkillsService

        return SkillsService(
            uow=self.install_records,
            clock=self.clock,
            installer=FilesystemSkillInstaller(self.agent_homes),
            version=__version__,
            user_home=self.user_home,
        )

    @cached_property
    def search(self) -> SearchService:
        from cafleet.application.messaging.search import SearchService

        return SearchService(self.uow)

    @cached_property
    def members(self) -> MemberService:
        from cafleet.application.members.registry import MemberService

        return MemberService(
            uow=self.uow,
            clock=self.clock,
            drivers=self.pane_drivers,
            statuses=self.agent_statuses,
        )

    @cached_property
    def admin(self) -> AdminService:
        from cafleet.application.admin.service import AdminService

        return AdminService(
            uow=self.uow,
            clock=self.clock,
            fleets=self.fleets,
            messaging=self.messaging,
            monitoring=self.monitoring,
            members=self.members,
            search=self.search,
        )

    @cached_property
    def pane_watch(self) -> PaneWatch:
        """The admin server's live panes: one capture per tick per watched pane, for every
        page."""
        from cafleet.application.admin.pane_watch import PaneWatch, screens_of

        return PaneWatch(screens_of(self.member_panes), self.clock)

    # -- the gate and the Director's grants --------------------------------------------------

    def require_current_skills(self) -> None:
        """The gate in front of team commands. A missing database or schema is said as such
        (the fix is the same `cafleet setup`, but the user should know what is missing).

        It reads the install records directly: building the installer would import file
        copying machinery that a hot command never uses."""
        from cafleet import __version__
        from cafleet.domain.skills import require_current

        with self.install_records() as uow:
            installs = uow.installs.list()
        require_current(installs, __version__)

    def director_grants(self) -> list[DirectorGrant]:
        """What Claude Code and Codex need in their own settings to be the Director."""
        from cafleet.adapters.agents.director_grants import director_grants

        path = None if self.settings.on_postgres else self.settings.database_path
        folder = path.absolute().parent if path else None
        return director_grants(self.env, self.user_home, Path(os.getcwd()), folder)

"""The CLI's composition: builds each adapter on first use and nothing else.

A CLI call must not pay for machinery it does not use, so this module imports
only the standard library at load time and constructs adapters lazily. The
long-running entrypoints and tests use the dependency-injector container in
container.py, which wires the same constructors (docs/architecture.md#decisions).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from cafleet.settings import Settings

if TYPE_CHECKING:
    from cafleet.application.agent_status import AgentStatusReader
    from cafleet.application.fleets import FleetService
    from cafleet.application.gathering import Gatherings
    from cafleet.application.keystrokes import KeystrokeSender
    from cafleet.application.lifecycle import MemberRemoval
    from cafleet.application.member_panes import MemberPanes
    from cafleet.application.members import MemberService
    from cafleet.application.messaging import MessagingService
    from cafleet.application.monitoring import MonitorService
    from cafleet.application.pane_titles import PaneTitles
    from cafleet.application.ports import (
        Clock,
        CodexThreads,
        LaunchPads,
        Notifier,
        PaneDrivers,
        PaneLocator,
        PaneLocks,
        Resumption,
        UnitOfWorkFactory,
    )
    from cafleet.application.relay import RelayClient, RelayService
    from cafleet.application.search import SearchService
    from cafleet.application.setup import SkillsService
    from cafleet.application.spawning import MemberSpawner
    from cafleet.application.teardown import PaneTeardown
    from cafleet.domain.agents.grants import DirectorGrant
    from cafleet.domain.agents.homes import AgentHomes

T = TypeVar("T")

RELAY_WORKERS = 4  # pane requests a relay runs at once (a spawn waits for its agent)


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


class Components:
    def __init__(self, settings: Settings, env: Mapping[str, str] | None = None) -> None:
        self.settings = settings
        self.env = os.environ if env is None else env

    @cached_property
    def uow(self) -> UnitOfWorkFactory:
        """Units of work on a database at this version's schema revision (on SQLite, on the
        standard sqlite3 module: a CLI call must not pay for importing SQLAlchemy)."""
        from cafleet.adapters.stores import open_units_of_work

        return open_units_of_work(self.settings)

    @cached_property
    def install_records(self) -> UnitOfWorkFactory:
        """Units of work for skill-install records, on any revision that has their table:
        the gate and `setup skill` come before a migration is demanded."""
        from cafleet.adapters.stores import open_units_of_work

        return open_units_of_work(self.settings, check_revision=False)

    @cached_property
    def user_home(self) -> Path:
        return Path(self.env.get("HOME") or Path.home())

    @cached_property
    def agent_homes(self) -> AgentHomes:
        """The coding agents' config homes, as CLAUDE_CONFIG_DIR, CODEX_HOME and
        XDG_CONFIG_HOME resolve them."""
        from cafleet.domain.agents.homes import AgentHomes

        return AgentHomes.from_environ(self.env, self.user_home)

    @cached_property
    def clock(self) -> Clock:
        from cafleet.adapters.clock import SystemClock

        return SystemClock()

    @cached_property
    def pane_drivers(self) -> PaneDrivers:
        from cafleet.adapters.drivers import SystemPaneDrivers

        return SystemPaneDrivers()

    @cached_property
    def pane_locks(self) -> PaneLocks:
        from cafleet.adapters.pane_locks import FileLocks, runtime_directory

        return FileLocks(runtime_directory(self.env))

    @cached_property
    def keystrokes(self) -> KeystrokeSender:
        from cafleet.application.keystrokes import KeystrokeSender

        return KeystrokeSender(
            self.pane_drivers,
            self.pane_locks,
            self.clock,
            self.settings.profiles,
            self.gatherings,
        )

    @cached_property
    def gatherings(self) -> Gatherings:
        """Shared by the sender and messaging: a broadcast's threads type as one batch."""
        from cafleet.application.gathering import Gatherings

        return Gatherings()

    @cached_property
    def launch_pads(self) -> LaunchPads:
        from cafleet.adapters.launch_pads import RuntimeLaunchPads
        from cafleet.adapters.pane_locks import runtime_directory

        return RuntimeLaunchPads(runtime_directory(self.env))

    @cached_property
    def codex_threads(self) -> CodexThreads:
        from cafleet.adapters.codex_threads import CodexRollouts

        return CodexRollouts()

    @cached_property
    def agent_statuses(self) -> AgentStatusReader:
        from cafleet.application.agent_status import AgentStatusReader

        return AgentStatusReader(
            self.launch_pads,
            self.settings.profiles,
            self.clock,
            self.codex_threads,
            self.pane_drivers,
        )

    @cached_property
    def notifier(self) -> Notifier:
        from cafleet.adapters.notify.pane import PaneNotifier
        from cafleet.application.channels import channel_ladder
        from cafleet.application.herdr_channel import HerdrPromptChannel

        return channel_ladder(
            self.settings.profiles,
            self.launch_pads,
            self.codex_threads,
            self.clock,
            PaneNotifier(self.keystrokes, self.settings.max_text_len),
            self.settings.max_text_len,
            HerdrPromptChannel(self.pane_drivers, self.pane_locks),
        )

    @cached_property
    def resumption(self) -> Resumption:
        from cafleet.application.resumption import PaneResumption

        return PaneResumption(self.keystrokes, self.pane_drivers, self.settings.max_text_len)

    @cached_property
    def locator(self) -> PaneLocator:
        from cafleet.adapters.locator import EnvironmentPaneLocator

        return EnvironmentPaneLocator(self.env)

    @cached_property
    def teardown(self) -> PaneTeardown:
        from cafleet.application.teardown import PaneTeardown

        return PaneTeardown(self.keystrokes, self.pane_drivers, self.clock)

    def fleets(self) -> FleetService:
        from cafleet.application.fleets import FleetService

        teardown = deferred(lambda: self.teardown)  # only `fleet delete` closes panes
        return FleetService(
            self.uow, self.clock, self.locator, teardown, self.pane_drivers, self.relay_client
        )

    @cached_property
    def relay_client(self) -> RelayClient:
        """Pane work for another host's panes, asked of that host's relay."""
        from cafleet.application.relay import RelayClient

        return RelayClient(self.uow, self.clock)

    def member_panes(self) -> MemberPanes:
        from cafleet.application.agent_shell import AgentServerShell
        from cafleet.application.member_panes import MemberPanes

        shell = AgentServerShell(self.launch_pads, self.settings.profiles, self.clock)
        return MemberPanes(
            self.uow, self.clock, self.pane_drivers, self.keystrokes, shell, self.relay_client
        )

    def relay(self) -> RelayService:
        """This host's relay: the verbs other hosts ask of it run as this host's commands
        would (the same composition), its deliveries as a drainer's."""
        from cafleet.adapters.hosts import this_host
        from cafleet.adapters.process import SystemProcess
        from cafleet.adapters.tmux.relay_session import relay_session
        from cafleet.application.members import PaneSurvey
        from cafleet.application.receipts import ReceiptReader, ReceiptRecorder
        from cafleet.application.relay import RelayDuties, RelayService
        from cafleet.application.relay_verbs import RelayedVerbs, pane_of_process

        host = this_host(self.env)
        verbs = RelayedVerbs(
            self.member_panes, self.member_spawner, self.member_removal, self.fleets
        )
        reader = ReceiptReader(self.launch_pads, self.settings.profiles, self.codex_threads)
        duties = RelayDuties(
            drain=self.messaging().drain_queued,
            run_verb=verbs,
            read_panes=lambda placements: PaneSurvey(
                self.pane_drivers, self.agent_statuses
            ).reports(placements, host),
            record_receipts=ReceiptRecorder(self.uow, reader).record,
            own_pane=lambda: pane_of_process(self.locator, self.pane_drivers),
            own_session=lambda: relay_session(host),
            retitle=self.pane_titles().refresh,
        )
        return RelayService(
            self.uow, self.clock, SystemProcess(self.env), host, duties, RELAY_WORKERS
        )

    def monitoring(self) -> MonitorService:
        from cafleet.adapters.loop_marks import store_loop_marks
        from cafleet.adapters.process import SystemProcess
        from cafleet.application.monitoring import MonitorService
        from cafleet.application.receipts import ReceiptReader

        return MonitorService(
            self.uow,
            self.clock,
            self.pane_drivers,
            self.keystrokes,
            SystemProcess(self.env),
            self.settings.monitor_stall_interval,
            self.agent_statuses,
            ReceiptReader(self.launch_pads, self.settings.profiles, self.codex_threads),
            marks=store_loop_marks(self.env, self.settings.store_name),
        )

    def skills(self) -> SkillsService:
        from cafleet import __version__
        from cafleet.adapters.skills.installer import FilesystemSkillInstaller
        from cafleet.application.setup import SkillsService

        return SkillsService(
            self.install_records,
            self.clock,
            FilesystemSkillInstaller(self.agent_homes),
            __version__,
            user_home=self.user_home,
        )

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
        from cafleet.adapters.director_grants import director_grants

        path = None if self.settings.on_postgres else self.settings.database_path
        folder = path.absolute().parent if path else None
        return director_grants(self.env, self.user_home, Path(os.getcwd()), folder)

    def member_spawner(self) -> MemberSpawner:
        from cafleet.adapters.agent_starts import ProcAgentStarts
        from cafleet.adapters.git_dirs import git_directories
        from cafleet.adapters.opencode_preset import ensure_opencode_preset
        from cafleet.adapters.programs import SystemPrograms
        from cafleet.application.spawning import MemberSpawner, SpawnContext

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
            self.uow,
            self.clock,
            self.pane_drivers,
            SystemPrograms(self.env),
            context,
            lambda _home: ensure_opencode_preset(preset),  # where opencode looks, not under HOME
            self.launch_pads,
            self.settings.profiles,
            self.relay_client,
            titles=self.pane_titles(),
            starts=ProcAgentStarts(),
        )

    def member_removal(self) -> MemberRemoval:
        from cafleet.application.lifecycle import MemberRemoval

        return MemberRemoval(
            self.uow, self.clock, self.pane_drivers, self.teardown, self.relay_client
        )

    def messaging(self) -> MessagingService:
        from cafleet.adapters.hosts import reach_of
        from cafleet.adapters.pane_locks import runtime_directory
        from cafleet.adapters.queue_drains import DrainProcess
        from cafleet.application.messaging import MessagingService

        return MessagingService(
            self.uow,
            self.clock,
            deferred(lambda: self.notifier),  # only a delivery builds the channels
            deferred(lambda: self.pane_locks),  # a send to no pane needs no runtime directory
            self.settings.start_timeout + 30,
            max_body_bytes=self.settings.max_body_bytes,
            drains=DrainProcess(self.env, lambda: runtime_directory(self.env)),
            gatherings=self.gatherings,
            reaches=reach_of(self.env),
            titles=deferred(self.pane_titles),  # built on the first change of someone's mail
            resumption=deferred(lambda: self.resumption),  # only a held delivery looks again
        )

    def pane_titles(self) -> PaneTitles:
        from cafleet.application.pane_titles import PaneTitles

        return PaneTitles(self.uow, self.pane_drivers, self.agent_statuses)

    def search(self) -> SearchService:
        from cafleet.application.search import SearchService

        return SearchService(self.uow)

    def members(self) -> MemberService:
        from cafleet.application.members import MemberService

        return MemberService(self.uow, self.clock, self.pane_drivers, self.agent_statuses)

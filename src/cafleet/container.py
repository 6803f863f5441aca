"""The dependency-injection container: the composition root of long-running entrypoints.

build_container() wires the production adapters; build_fake_container() the
in-memory ones, for tests and offline demos. Services never see the container.
"""

from __future__ import annotations

import os

from dependency_injector import containers, providers

from cafleet.adapters.clock import SystemClock
from cafleet.adapters.codex_threads import CodexRollouts
from cafleet.adapters.drivers import SystemPaneDrivers
from cafleet.adapters.fake.clock import FakeClock
from cafleet.adapters.fake.locator import FakePaneLocator
from cafleet.adapters.fake.pane_driver import FakePaneDrivers, ThreadLocks
from cafleet.adapters.fake.queue_drains import RecordingDrains
from cafleet.adapters.fake.store import MemoryStore
from cafleet.adapters.herdr.feed import HerdrStateFeeds
from cafleet.adapters.launch_pads import RuntimeLaunchPads
from cafleet.adapters.locator import EnvironmentPaneLocator
from cafleet.adapters.loop_marks import store_loop_marks
from cafleet.adapters.notify.pane import PaneNotifier
from cafleet.adapters.pane_locks import FileLocks, runtime_directory
from cafleet.adapters.process import SystemProcess
from cafleet.adapters.queue_drains import DrainProcess
from cafleet.adapters.stores import open_units_of_work
from cafleet.application.admin import AdminService
from cafleet.application.agent_shell import AgentServerShell
from cafleet.application.agent_status import AgentStatusReader
from cafleet.application.channels import channel_ladder
from cafleet.application.fleets import FleetService
from cafleet.application.gathering import Gatherings
from cafleet.application.herdr_channel import HerdrPromptChannel
from cafleet.application.keystrokes import KeystrokeSender
from cafleet.application.lifecycle import MemberRemoval
from cafleet.application.member_panes import MemberPanes
from cafleet.application.members import MemberService
from cafleet.application.messaging import MessagingService
from cafleet.application.monitoring import MonitorService
from cafleet.application.pane_titles import PaneTitles
from cafleet.application.pane_watch import PaneWatch, screens_of
from cafleet.application.receipts import ReceiptReader
from cafleet.application.relay import RelayClient
from cafleet.application.resumption import PaneResumption
from cafleet.application.teardown import PaneTeardown
from cafleet.settings import Settings


class Container(containers.DeclarativeContainer):
    settings = providers.Dependency(instance_of=Settings)
    environ = providers.Object(os.environ)

    uow = providers.Singleton(open_units_of_work, settings)
    clock = providers.Singleton(SystemClock)
    pane_drivers = providers.Singleton(SystemPaneDrivers)
    pane_locks = providers.Singleton(lambda env: FileLocks(runtime_directory(env)), environ)
    gatherings = providers.Singleton(Gatherings)  # a broadcast's threads, met by the sender
    keystrokes = providers.Singleton(
        KeystrokeSender,
        pane_drivers,
        pane_locks,
        clock,
        settings.provided.profiles,
        gatherings,
    )
    launch_pads = providers.Singleton(
        lambda env: RuntimeLaunchPads(runtime_directory(env)), environ
    )
    codex_threads = providers.Singleton(CodexRollouts)
    agent_statuses = providers.Singleton(
        AgentStatusReader,
        launch_pads,
        settings.provided.profiles,
        clock,
        codex_threads,
        pane_drivers,
    )
    notifier = providers.Singleton(
        channel_ladder,
        settings.provided.profiles,
        launch_pads,
        codex_threads,
        clock,
        providers.Singleton(PaneNotifier, keystrokes, settings.provided.max_text_len),
        settings.provided.max_text_len,
        providers.Singleton(HerdrPromptChannel, pane_drivers, pane_locks),
    )
    resumption = providers.Singleton(
        PaneResumption, keystrokes, pane_drivers, settings.provided.max_text_len
    )
    locator = providers.Singleton(EnvironmentPaneLocator, environ)

    teardown = providers.Singleton(PaneTeardown, keystrokes, pane_drivers, clock)
    relay_client = providers.Singleton(RelayClient, uow, clock)  # another host's pane work

    fleets = providers.Factory(
        FleetService, uow, clock, locator, teardown, pane_drivers, relay_client
    )
    member_panes = providers.Factory(
        MemberPanes,
        uow,
        clock,
        pane_drivers,
        keystrokes,
        providers.Singleton(AgentServerShell, launch_pads, settings.provided.profiles, clock),
        relay_client,
    )
    member_removal = providers.Factory(
        MemberRemoval, uow, clock, pane_drivers, teardown, relay_client
    )
    process = providers.Singleton(SystemProcess, environ)
    loop_marks = providers.Singleton(store_loop_marks, environ, settings.provided.store_name)
    # herdr's pushed agent states: only the monitor loop asks for them (`monitor(feeds=...)`)
    state_feeds = providers.Singleton(HerdrStateFeeds, environ)
    drains = providers.Singleton(  # the monitor's, for stranded queues
        lambda env: DrainProcess(env, lambda: runtime_directory(env)), environ
    )
    pane_titles = providers.Singleton(PaneTitles, uow, pane_drivers, agent_statuses)
    monitor = providers.Factory(
        MonitorService,
        uow,
        clock,
        pane_drivers,
        keystrokes,
        process,
        settings.provided.monitor_stall_interval,
        agent_statuses,
        providers.Singleton(ReceiptReader, launch_pads, settings.provided.profiles, codex_threads),
        drains=drains,
        relay=relay_client,
        titles=pane_titles,
        locks=pane_locks,
        marks=loop_marks,
    )
    messaging = providers.Factory(
        MessagingService,
        uow,
        clock,
        notifier,
        pane_locks,
        max_body_bytes=settings.provided.max_body_bytes,
        gatherings=gatherings,
        reaches=pane_drivers.provided.reaches,
        titles=pane_titles,
        resumption=resumption,
    )
    members = providers.Factory(
        MemberService,
        uow,
        clock,
        pane_drivers,
        agent_statuses,
    )
    admin = providers.Factory(AdminService, uow, clock, fleets, messaging, monitor, members)
    # the admin server's live panes: one capture per tick per watched pane, for every page
    pane_watch = providers.Singleton(PaneWatch, providers.Callable(screens_of, member_panes), clock)


def build_container(settings: Settings) -> Container:
    return Container(settings=settings)


def _fake_drivers() -> FakePaneDrivers:
    """Fake servers where the fake locator's pane exists, so a fleet can be created."""
    drivers = FakePaneDrivers()
    pane = FakePaneLocator().current_pane()
    drivers(pane.backend, pane.socket).add_pane("claude", pane.window_id, pane.pane_id)
    return drivers


def build_fake_container(settings: Settings | None = None) -> Container:
    """Every adapter replaced by its in-memory fake; settings default to an in-memory URL."""
    container = Container(
        settings=settings
        or Settings.from_environ({"CAFLEET_DATABASE_URL": "sqlite://", "HOME": "/nonexistent"})
    )
    container.uow.override(providers.Singleton(MemoryStore))
    container.clock.override(providers.Singleton(FakeClock))
    container.pane_drivers.override(providers.Singleton(_fake_drivers))
    container.pane_locks.override(providers.Singleton(ThreadLocks))
    container.locator.override(providers.Singleton(FakePaneLocator))
    container.drains.override(providers.Singleton(RecordingDrains))
    container.loop_marks.override(providers.Object(None))  # pids are probed (FakeProcess)
    return container

"""The dependency-injection container of the long-running entrypoints (`cafleet server`,
`monitor start`) and the tests.

It declares the ADAPTERS, each an overridable Singleton, and hands out the services that
Components builds on them: one graph for every entrypoint. Overriding an adapter (a fake
for a test) reaches every service, provided it is done before the first service is asked
for. build_container() wires this host's adapters, build_fake_container() the in-memory
ones (fakes.py). Services never see the container.
"""

from __future__ import annotations

import os

from dependency_injector import containers, providers

from cafleet.adapters.agents.codex import CodexRollouts
from cafleet.adapters.agents.programs import SystemPrograms
from cafleet.adapters.agents.starts import ProcAgentStarts
from cafleet.adapters.herdr.feed import HerdrStateFeeds
from cafleet.adapters.multiplexers import EnvironmentPaneLocator, SystemPaneDrivers
from cafleet.adapters.runtime.launch_pads import RuntimeLaunchPads
from cafleet.adapters.runtime.locks import FileLocks, runtime_directory
from cafleet.adapters.runtime.loop_marks import store_loop_marks
from cafleet.adapters.store.select import open_units_of_work
from cafleet.adapters.system.clock import SystemClock
from cafleet.adapters.system.drains import DrainProcess
from cafleet.adapters.system.process import SystemProcess
from cafleet.composition.components import Adapters, Components
from cafleet.composition.fakes import fake_adapters
from cafleet.settings import Settings


class Container(containers.DeclarativeContainer):
    settings = providers.Dependency(instance_of=Settings)
    environ = providers.Object(os.environ)

    # -- the adapters (the names are Adapters' fields) ---------------------------------------
    uow = providers.Singleton(open_units_of_work, settings)
    install_records = providers.Singleton(open_units_of_work, settings, check_revision=False)
    clock = providers.Singleton(SystemClock)
    pane_drivers = providers.Singleton(SystemPaneDrivers)
    pane_locks = providers.Singleton(lambda env: FileLocks(runtime_directory(env)), environ)
    launch_pads = providers.Singleton(
        lambda env: RuntimeLaunchPads(runtime_directory(env)), environ
    )
    codex_threads = providers.Singleton(CodexRollouts)
    locator = providers.Singleton(EnvironmentPaneLocator, environ)
    process = providers.Singleton(SystemProcess, environ)
    loop_marks = providers.Singleton(store_loop_marks, environ, settings.provided.store_name)
    state_feeds = providers.Singleton(HerdrStateFeeds, environ)  # herdr's pushed agent states
    drains = providers.Singleton(
        lambda env: DrainProcess(env, lambda: runtime_directory(env)), environ
    )
    programs = providers.Singleton(SystemPrograms, environ)
    agent_starts = providers.Singleton(ProcAgentStarts)

    # -- the one composition, on these adapters ----------------------------------------------
    components = providers.Singleton(
        Components,
        settings,
        environ,
        providers.Factory(
            Adapters,
            uow=uow.provider,
            install_records=install_records.provider,
            clock=clock.provider,
            pane_drivers=pane_drivers.provider,
            pane_locks=pane_locks.provider,
            launch_pads=launch_pads.provider,
            codex_threads=codex_threads.provider,
            locator=locator.provider,
            process=process.provider,
            loop_marks=loop_marks.provider,
            state_feeds=state_feeds.provider,
            drains=drains.provider,
            programs=programs.provider,
            agent_starts=agent_starts.provider,
        ),
    )

    # -- the services, as Components builds them ---------------------------------------------
    keystrokes = components.provided.keystrokes
    fleets = components.provided.fleets
    member_panes = components.provided.member_panes
    member_removal = components.provided.member_removal
    member_spawner = components.provided.member_spawner
    members = components.provided.members
    messaging = components.provided.messaging
    monitor = components.provided.monitoring
    pane_titles = components.provided.pane_titles
    relay = components.provided.relay
    search = components.provided.search
    skills = components.provided.skills
    admin = components.provided.admin
    pane_watch = components.provided.pane_watch


def build_container(settings: Settings) -> Container:
    return Container(settings=settings)


def build_fake_container(settings: Settings | None = None) -> Container:
    """Every adapter replaced by its in-memory fake; settings default to an in-memory URL."""
    container = Container(
        settings=settings
        or Settings.from_environ({"CAFLEET_DATABASE_URL": "sqlite://", "HOME": "/nonexistent"})
    )
    fakes = fake_adapters()
    for name in Adapters.names():
        builder = getattr(fakes, name)
        if builder is not None:
            getattr(container, name).override(providers.Singleton(builder))
    return container

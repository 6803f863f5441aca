"""The dependency-injection container: the composition root of long-running entrypoints.

build_container() wires the production adapters; build_fake_container() the
in-memory ones, for tests and offline demos. Services never see the container.
"""

from __future__ import annotations

import os
from pathlib import Path

from dependency_injector import containers, providers

from cafleet.adapters.clock import SystemClock
from cafleet.adapters.fake.clock import FakeClock
from cafleet.adapters.fake.locator import FakePaneLocator
from cafleet.adapters.fake.notifier import RecordingNotifier
from cafleet.adapters.fake.store import MemoryStore
from cafleet.adapters.locator import EnvironmentPaneLocator
from cafleet.adapters.notify.unwired import UnwiredNotifier
from cafleet.adapters.sqlite.engine import open_engine
from cafleet.adapters.sqlite.unit_of_work import SqlUnitOfWorkFactory
from cafleet.application.fleets import FleetService
from cafleet.application.members import MemberService
from cafleet.application.messaging import MessagingService
from cafleet.settings import Settings


def _database_path(settings: Settings) -> Path:
    return settings.require_database_path()


class Container(containers.DeclarativeContainer):
    settings = providers.Dependency(instance_of=Settings)
    environ = providers.Object(os.environ)

    database_path = providers.Singleton(_database_path, settings)
    engine = providers.Singleton(open_engine, database_path)
    uow = providers.Singleton(SqlUnitOfWorkFactory, engine, database_path)
    clock = providers.Singleton(SystemClock)
    notifier = providers.Singleton(UnwiredNotifier)
    locator = providers.Singleton(EnvironmentPaneLocator, environ)

    fleets = providers.Factory(FleetService, uow, clock, locator)
    messaging = providers.Factory(MessagingService, uow, clock, notifier)
    members = providers.Factory(MemberService, uow, clock)


def build_container(settings: Settings) -> Container:
    return Container(settings=settings)


def build_fake_container(settings: Settings | None = None) -> Container:
    """Every adapter replaced by its in-memory fake; settings default to an in-memory URL."""
    container = Container(
        settings=settings
        or Settings.from_environ({"CAFLEET_DATABASE_URL": "sqlite://", "HOME": "/nonexistent"})
    )
    container.uow.override(providers.Singleton(MemoryStore))
    container.clock.override(providers.Singleton(FakeClock))
    container.notifier.override(providers.Singleton(RecordingNotifier))
    container.locator.override(providers.Singleton(FakePaneLocator))
    return container

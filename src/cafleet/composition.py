"""The CLI's composition: builds each adapter on first use and nothing else.

A CLI call must not pay for machinery it does not use, so this module imports
only the standard library at load time and constructs adapters lazily. The
long-running entrypoints and tests use the dependency-injector container in
container.py, which wires the same constructors (docs/architecture.md).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from functools import cached_property
from typing import TYPE_CHECKING

from cafleet.settings import Settings

if TYPE_CHECKING:
    from cafleet.application.fleets import FleetService
    from cafleet.application.members import MemberService
    from cafleet.application.messaging import MessagingService
    from cafleet.application.ports import Clock, Notifier, PaneLocator, UnitOfWorkFactory


class Components:
    def __init__(self, settings: Settings, env: Mapping[str, str] | None = None) -> None:
        self.settings = settings
        self.env = os.environ if env is None else env

    @cached_property
    def uow(self) -> UnitOfWorkFactory:
        from cafleet.adapters.sqlite.engine import open_engine
        from cafleet.adapters.sqlite.unit_of_work import SqlUnitOfWorkFactory

        path = self.settings.require_database_path()
        return SqlUnitOfWorkFactory(open_engine(path), path)

    @cached_property
    def clock(self) -> Clock:
        from cafleet.adapters.clock import SystemClock

        return SystemClock()

    @cached_property
    def notifier(self) -> Notifier:
        from cafleet.adapters.notify.unwired import UnwiredNotifier

        return UnwiredNotifier()

    @cached_property
    def locator(self) -> PaneLocator:
        from cafleet.adapters.locator import EnvironmentPaneLocator

        return EnvironmentPaneLocator(self.env)

    def fleets(self) -> FleetService:
        from cafleet.application.fleets import FleetService

        return FleetService(self.uow, self.clock, self.locator)

    def messaging(self) -> MessagingService:
        from cafleet.application.messaging import MessagingService

        return MessagingService(self.uow, self.clock, self.notifier)

    def members(self) -> MemberService:
        from cafleet.application.members import MemberService

        return MemberService(self.uow, self.clock)

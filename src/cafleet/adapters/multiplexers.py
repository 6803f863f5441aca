"""The multiplexers, chosen: the pane driver for the server a placement recorded, and the
calling pane found through whichever multiplexer the environment names."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from cafleet.adapters.runtime.locks import runtime_directory
from cafleet.adapters.system.hosts import this_host
from cafleet.application.ports.panes import PaneDriver, PaneDrivers, PaneLocator
from cafleet.domain.multiplexer import resolve_multiplexer
from cafleet.domain.panes import PaneElsewhere
from cafleet.domain.placement import Multiplexer, PaneLocation

if TYPE_CHECKING:
    from cafleet.adapters.herdr.driver import HerdrPaneDriver
    from cafleet.adapters.tmux.driver import TmuxPaneDriver


class SystemPaneDrivers(PaneDrivers):
    """One driver per server. A placement without a recorded socket (an upstream row) uses
    the multiplexer's default server: tmux without -S, herdr by its own socket rules. A pane
    recorded on another host is refused (PaneElsewhere) before any server is asked."""

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        self._env = os.environ if env is None else env
        self._tmux: dict[str | None, TmuxPaneDriver] = {}
        self._herdr: dict[str, HerdrPaneDriver] = {}
        self._here: str | None = None

    def __call__(
        self, backend: Multiplexer, socket: str | None, host: str | None = None
    ) -> PaneDriver:
        if not self.reaches(host):
            raise PaneElsewhere(str(host), self.here)
        if backend is Multiplexer.TMUX:  # imported on first use: it brings subprocess
            from cafleet.adapters.tmux.driver import TmuxPaneDriver

            tmux = self._tmux.get(socket)
            return tmux or self._tmux.setdefault(socket, TmuxPaneDriver(socket))
        from cafleet.adapters.herdr.client import socket_path  # only a herdr fleet pays for it
        from cafleet.adapters.herdr.driver import HerdrPaneDriver

        path = socket or socket_path(self._env)
        driver = self._herdr.get(path)
        if driver is None:
            driver = self._herdr.setdefault(
                path, HerdrPaneDriver(path, launch_dir=self._launch_dir)
            )
        return driver

    @property
    def here(self) -> str:
        self._here = self._here or this_host(self._env)
        return self._here

    def reaches(self, host: str | None) -> bool:
        return host is None or host == self.here

    def _launch_dir(self) -> Path:
        return runtime_directory(self._env)


class EnvironmentPaneLocator(PaneLocator):
    def __init__(self, env: Mapping[str, str]) -> None:
        self._env = env

    def current_pane(self) -> PaneLocation:
        """The calling pane, on this host. Only the named multiplexer's adapter is
        imported: a CLI call pays for one."""
        if resolve_multiplexer(self._env) is Multiplexer.TMUX:
            from cafleet.adapters.tmux.locator import TmuxPaneLocator

            found = TmuxPaneLocator(self._env).current_pane()
        else:
            from cafleet.adapters.herdr.locator import HerdrPaneLocator

            found = HerdrPaneLocator(self._env).current_pane()
        return replace(found, host=this_host(self._env))

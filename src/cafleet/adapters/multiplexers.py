"""Picks the pane driver for the multiplexer server a placement recorded."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from cafleet.adapters.runtime.locks import runtime_directory
from cafleet.adapters.system.hosts import this_host
from cafleet.application.ports.panes import PaneDriver, PaneDrivers
from cafleet.domain.panes import PaneElsewhere
from cafleet.domain.placement import Multiplexer

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

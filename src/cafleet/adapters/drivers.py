"""Picks the pane driver for the multiplexer server a placement recorded."""

from __future__ import annotations

from cafleet.adapters.tmux.driver import TmuxPaneDriver
from cafleet.application.ports import PaneDriver, PaneDrivers
from cafleet.domain.errors import Unavailable
from cafleet.domain.placement import Multiplexer


class SystemPaneDrivers(PaneDrivers):
    def __init__(self) -> None:
        self._tmux: dict[str | None, TmuxPaneDriver] = {}

    def __call__(self, backend: Multiplexer, socket: str | None) -> PaneDriver:
        if backend is Multiplexer.TMUX:
            return self._tmux.setdefault(socket, TmuxPaneDriver(socket))
        raise Unavailable("herdr is not supported by this version of cafleet yet")

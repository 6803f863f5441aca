"""Finding the calling pane through tmux, from TMUX and TMUX_PANE."""

from __future__ import annotations

import shutil
from collections.abc import Mapping

from cafleet.adapters.tmux.driver import TmuxPaneDriver
from cafleet.application.ports.panes import PaneLocator
from cafleet.domain.errors import Unavailable
from cafleet.domain.placement import PaneLocation


class TmuxPaneLocator(PaneLocator):
    def __init__(self, env: Mapping[str, str]) -> None:
        self._env = env

    def current_pane(self) -> PaneLocation:
        if shutil.which("tmux") is None:
            raise Unavailable("tmux binary not found on PATH")
        pane = self._env.get("TMUX_PANE")
        if not pane:
            raise Unavailable("TMUX_PANE is not set; not running inside a tmux pane")
        socket = self._env.get("TMUX", "").split(",", 1)[0] or None
        return TmuxPaneDriver(socket).locate(pane)

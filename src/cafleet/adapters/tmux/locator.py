"""Finding the calling pane through tmux (the rest of the tmux driver drives member panes)."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Mapping

from cafleet.application.ports import PaneLocator
from cafleet.domain.errors import Unavailable
from cafleet.domain.placement import Multiplexer, PaneLocation

TMUX_TIMEOUT_SECONDS = 5


class TmuxPaneLocator(PaneLocator):
    def __init__(self, env: Mapping[str, str]) -> None:
        self._env = env

    def current_pane(self) -> PaneLocation:
        binary = shutil.which("tmux")
        if binary is None:
            raise Unavailable("tmux binary not found on PATH")
        pane = self._env.get("TMUX_PANE")
        if not pane:
            raise Unavailable("TMUX_PANE is not set; not running inside a tmux pane")
        socket = self._env.get("TMUX", "").split(",", 1)[0] or None
        argv = [
            binary,
            *(["-S", socket] if socket else []),
            "display-message",
            "-p",
            "-t",
            pane,
            "#{session_name}|#{window_id}|#{pane_id}",
        ]
        try:
            done = subprocess.run(
                argv, capture_output=True, text=True, timeout=TMUX_TIMEOUT_SECONDS, check=False
            )
        except subprocess.TimeoutExpired:
            raise Unavailable(
                f"tmux display-message timed out after {TMUX_TIMEOUT_SECONDS}s"
            ) from None
        fields = done.stdout.strip().split("|")
        if done.returncode != 0 or len(fields) != 3 or not all(fields):
            reason = (done.stderr.strip().splitlines() or ["no pane reported"])[0]
            raise Unavailable(f"tmux display-message failed: {reason}")
        session, window_id, pane_id = fields
        return PaneLocation(Multiplexer.TMUX, session, window_id, pane_id, socket)

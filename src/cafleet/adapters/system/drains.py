"""QueueDrains for the CLI: a detached `python -m cafleet.entrypoints.processes.drain` per command
that left rows queued (or held), so the command exits as soon as its own message is typed.

A fresh interpreter rather than a fork: an SQLite connection must never cross a fork, and
the command has one open by then. In a coding agent's tool sandbox a process of the
command's own would end with the tool call, so there the drainer is started by the pane's
tmux server instead (adapters/tmux/server_jobs).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from cafleet.application.ports.delivery import QueueDrains
from cafleet.domain.errors import CafleetError


class DrainProcess(QueueDrains):
    def __init__(self, env: Mapping[str, str], runtime: Callable[[], Path]) -> None:
        self._env = dict(env)
        self._runtime = runtime  # where a job for the tmux server leaves its launch file

    def start(self, recipients: Sequence[int]) -> None:
        argv = [sys.executable, "-m", "cafleet.entrypoints.processes.drain", *map(str, recipients)]
        if self._started_by_server(argv):
            return
        # On failure the rows stay queued: the next delivery to the pane or the monitor takes them.
        with contextlib.suppress(OSError):
            subprocess.Popen(
                argv,
                env=self._env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,  # outlives the command and its terminal
                close_fds=True,
            )

    def _started_by_server(self, argv: list[str]) -> bool:
        """In a sandbox that would end the drainer with it: started by the pane's tmux
        server instead (False: not needed, or it could not be asked)."""
        from cafleet.adapters.tmux.server_jobs import server_is_elsewhere, start_on_server

        if not server_is_elsewhere(self._env):
            return False
        try:
            runtime = self._runtime()
        except CafleetError:
            return False
        return start_on_server(self._env, argv, os.getcwd(), runtime, sys.executable)

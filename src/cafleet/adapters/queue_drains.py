"""QueueDrains for the CLI: a detached `python -m cafleet.drain` per command that left rows
queued, so the command exits as soon as its own message is typed.

A fresh interpreter rather than a fork: an SQLite connection must never cross a fork, and
the command has one open by then.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Mapping, Sequence

from cafleet.application.ports import QueueDrains


class DrainProcess(QueueDrains):
    def __init__(self, env: Mapping[str, str]) -> None:
        self._env = dict(env)

    def start(self, recipients: Sequence[int]) -> None:
        # On failure the rows stay queued: the next delivery to the pane or the monitor takes them.
        with contextlib.suppress(OSError):
            subprocess.Popen(
                [sys.executable, "-m", "cafleet.drain", *map(str, recipients)],
                env=self._env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,  # outlives the command and its terminal
                close_fds=True,
            )

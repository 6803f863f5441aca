"""A private tmux server per test, on its own socket name, always killed afterwards."""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

PRIVATE_VARIABLES = ("TMUX", "TMUX_PANE", "CLAUDE_CONFIG_DIR", "CODEX_HOME", "XDG_CONFIG_HOME")


def clean_environment(**extra: str) -> dict[str, str]:
    """os.environ without CAFLEET_*, HERDR_*, tmux client variables and the coding agents'
    home variables (a test must never write into a developer's agent config), plus `extra`."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("CAFLEET_", "HERDR_")) and k not in PRIVATE_VARIABLES
    }
    env.update(extra)
    return env


@dataclass(frozen=True)
class TmuxServer:
    name: str
    binary: str
    socket: str
    session: str
    window_id: str
    pane_id: str

    @property
    def env(self) -> dict[str, str]:
        """What tmux exports to a process running in the server's first pane."""
        return {"TMUX": f"{self.socket},0,0", "TMUX_PANE": self.pane_id}

    def run(self, *args: str) -> str:
        return _tmux(self.binary, self.name, *args)


def tmux_binary() -> str | None:
    return shutil.which("tmux")


@contextmanager
def private_tmux(
    binary: str, prefix: str, size: tuple[int, int] | None = None
) -> Iterator[TmuxServer]:
    """A server with one detached session `main`; killed and its socket file removed (tmux
    leaves the file behind) however the test ends."""
    name = f"{prefix}-{uuid.uuid4().hex}"
    geometry = ["-x", str(size[0]), "-y", str(size[1])] if size else []
    _tmux(binary, name, "new-session", "-d", "-s", "main", *geometry)
    socket = ""
    try:
        socket = _tmux(binary, name, "display-message", "-p", "#{socket_path}")
        yield TmuxServer(
            name=name,
            binary=binary,
            socket=socket,
            session="main",
            window_id=_tmux(binary, name, "display-message", "-p", "-t", "main", "#{window_id}"),
            pane_id=_tmux(binary, name, "display-message", "-p", "-t", "main", "#{pane_id}"),
        )
    finally:
        subprocess.run(
            [binary, "-L", name, "kill-server"],
            env=clean_environment(),
            capture_output=True,
            timeout=15,
            check=False,
        )
        if socket:
            Path(socket).unlink(missing_ok=True)


def _tmux(binary: str, name: str, *args: str) -> str:
    done = subprocess.run(
        [binary, "-L", name, "-f", "/dev/null", *args],
        env=clean_environment(),
        capture_output=True,
        text=True,
        timeout=15,
        check=True,
    )
    return done.stdout.strip()

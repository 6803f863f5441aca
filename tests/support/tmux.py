"""The one private tmux server every suite uses, as libtmux's pytest plugin has one `server`.

A server runs on a socket name of its own (`tmux -L <prefix>-<uuid> -f /dev/null`), so no test
ever sees the user's tmux or another test's, and it is killed (and its socket file removed:
tmux leaves it behind) however the test ends. The `tmux` fixture is a server per test; a
suite that needs another scope, size, first command or environment enters `private_tmux`
itself.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

import pytest

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


def tmux_binary() -> str | None:
    return shutil.which("tmux")


def require_tmux() -> str:
    """The tmux binary; the test is skipped on a machine without one."""
    binary = tmux_binary()
    if binary is None:
        pytest.skip("tmux is not installed")
    return binary


class TmuxServer:
    """A started private server: its first session's window and pane, and `run` to talk to it
    by name like a user would. Every tmux command runs with `environment` (a new session's
    panes inherit the server's environment, and tmux takes a new window's PATH from the
    client), in `cwd`."""

    def __init__(
        self, binary: str, name: str, environment: Mapping[str, str], cwd: Path | None = None
    ) -> None:
        self.binary = binary
        self.name = name
        self.environment = dict(environment)
        self.cwd = cwd
        self.session = ""
        self.socket = ""
        self.window_id = ""
        self.pane_id = ""

    @property
    def env(self) -> dict[str, str]:
        """What tmux exports to a process running in the server's first pane."""
        return {"TMUX": f"{self.socket},0,0", "TMUX_PANE": self.pane_id}

    def run(self, *args: str, input: str | None = None, check: bool = True) -> str:
        done = subprocess.run(
            [self.binary, "-L", self.name, "-f", "/dev/null", *args],
            env=self.environment,
            cwd=self.cwd,
            input=input,
            capture_output=True,
            text=True,
            timeout=15,
            check=False,
        )
        if check and done.returncode != 0:
            raise AssertionError(f"tmux {shlex.join(args)} failed: {done.stderr.strip()}")
        return done.stdout.strip()

    def pane_ids(self) -> list[str]:
        return self.run("list-panes", "-a", "-F", "#{pane_id}").split()

    def panes(self) -> dict[str, dict[str, str]]:
        """Every pane of the server: id -> left, top, width, height, command, pid."""
        fields = ("left", "top", "width", "height", "command", "pid")
        listing = self.run(
            "list-panes",
            "-a",
            "-F",
            "#{pane_id}\t#{pane_left}\t#{pane_top}\t#{pane_width}\t#{pane_height}"
            "\t#{pane_current_command}\t#{pane_pid}",
        )
        rows = [line.split("\t") for line in listing.splitlines() if line]
        return {row[0]: dict(zip(fields, row[1:], strict=True)) for row in rows}

    def capture(self, pane: str) -> str:
        return self.run("capture-pane", "-p", "-t", pane)

    def kill(self) -> None:
        subprocess.run(
            [self.binary, "-L", self.name, "kill-server"],
            env=self.environment,
            capture_output=True,
            timeout=15,
            check=False,
        )
        if self.socket:
            Path(self.socket).unlink(missing_ok=True)

    def start(
        self,
        session: str = "main",
        size: tuple[int, int] | None = None,
        command: Sequence[str] = (),
    ) -> None:
        """Start the server with one detached session (running `command`, else a shell)."""
        geometry = ["-x", str(size[0]), "-y", str(size[1])] if size else []
        self.run("new-session", "-d", "-s", session, *geometry, *command)
        self.session = session
        self.socket = self.run("display-message", "-p", "#{socket_path}")
        self.window_id = self.run("display-message", "-p", "-t", session, "#{window_id}")
        self.pane_id = self.run("display-message", "-p", "-t", session, "#{pane_id}")


@contextmanager
def private_tmux(
    binary: str,
    prefix: str,
    size: tuple[int, int] | None = None,
    *,
    environment: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    session: str = "main",
    command: Sequence[str] = (),
) -> Iterator[TmuxServer]:
    """A server with one detached session (running `command`, else a shell), killed and its
    socket file removed however the test ends."""
    env = clean_environment() if environment is None else environment
    server = TmuxServer(binary, f"{prefix}-{uuid.uuid4().hex}", env, cwd)
    try:
        server.start(session, size, command)
        yield server
    finally:
        server.kill()


@pytest.fixture
def tmux() -> Iterator[TmuxServer]:
    """A private tmux server with one session `main` (200x50), killed on teardown."""
    with private_tmux(require_tmux(), "cafleet-test", size=(200, 50)) as server:
        yield server


@pytest.fixture
def outer_variables_removed(monkeypatch: pytest.MonkeyPatch) -> None:
    """For a test that runs CAFleet in-process: none of the variables `clean_environment`
    drops (the outer shell's CAFLEET_*, multiplexer and agent-home settings) leaks in."""
    kept = clean_environment()
    for name in list(os.environ):
        if name not in kept:
            monkeypatch.delenv(name, raising=False)

"""Fixtures for running the real agent CLIs offline in a private tmux server.

- `model_server`: one scripted model server for the session (JSONL log in a temp dir).
- `agent_home`: a per-test scratch home seeded for all three CLIs, a workdir and the exact
  environment an agent process gets (nothing of the caller's HOME, keys or config leaks in).
- `agent_tmux`: a private tmux server started with that environment (panes inherit the
  server's environment, not the client's), always killed afterwards together with any process
  left behind with the scratch HOME (e.g. a detached daemon).
- `fleet`: a fleet whose Director is a shell (the test itself, through the CLI).
- `start_director`: starts a real agent as the Director, as a user does (realagents/director.py).

Helpers are exposed as fixtures so that test modules never import this file.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

import cafleet
from realagents.director import (
    USER_EXPORTS,
    Director,
    allow_cafleet_for_claude,
    grant_codex_sandbox,
    login_profile,
)
from realagents.fleet import CLAUDE_EXTRA, Fleet
from realagents.homes import seed_agent_home
from realagents.installed import agent_bin_dir, require_agent
from realagents.model_server import ScriptedModelServer
from support.tmux import TmuxServer, private_tmux, require_tmux

SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


@pytest.fixture(scope="session")
def model_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ScriptedModelServer]:
    log = tmp_path_factory.mktemp("model-server") / "requests.jsonl"
    with ScriptedModelServer(log_path=log) as server:
        yield server


@dataclass(frozen=True)
class AgentHome:
    env: dict[str, str]
    workdir: Path
    home: Path

    def processes(self) -> dict[int, str]:
        """pid -> command line of every process whose HOME is this scratch home."""
        needle = f"HOME={self.home}".encode()
        found = {}
        for proc in Path("/proc").glob("[0-9]*"):
            try:
                if needle in (proc / "environ").read_bytes().split(b"\0"):
                    found[int(proc.name)] = (proc / "cmdline").read_bytes().replace(b"\0", b" ")
            except OSError:  # gone, or not ours to read
                continue
        return {pid: cmd.decode(errors="replace").strip() for pid, cmd in found.items()}


@pytest.fixture
def agent_home(tmp_path: Path, model_server: ScriptedModelServer) -> AgentHome:
    workdir = tmp_path / "work"
    seeded = seed_agent_home(tmp_path, workdir, model_server.url)
    bins = agent_bin_dir()
    # The agents' bin dir, then this virtualenv's (so `cafleet` resolves), then the system.
    path = [*([str(bins)] if bins else []), str(Path(sys.executable).parent), SYSTEM_PATH]
    # `python -m cafleet` (and the hooks) run the very code this test imports
    source = str(Path(cafleet.__file__).resolve().parents[1])
    env = {"PATH": os.pathsep.join(path), "PYTHONPATH": source, **seeded}
    return AgentHome(env=env, workdir=workdir, home=Path(seeded["HOME"]))


class AgentTmux:
    """The private tmux server (tests/support/tmux.py) whose environment is the agent
    environment: every tmux command runs with it, since a new session's panes inherit the
    server's environment and tmux takes a new window's PATH from the client."""

    def __init__(self, server: TmuxServer, home: AgentHome) -> None:
        self.server = server
        self.binary = server.binary
        self.name = server.name
        self.socket = server.socket
        self.home = home
        self.env = home.env
        self.own_pids = {
            int(self.run("display-message", "-p", "#{pid}")),
            int(self.run("display-message", "-p", "-t", "main", "#{pane_pid}")),
        }

    def run(self, *args: str) -> str:
        return self.server.run(*args)

    def spawn(self, argv: list[str], cwd: Path) -> str:
        """Start argv in a new window; returns its pane id."""
        return self.run("new-window", "-d", "-P", "-F", "#{pane_id}", "-c", str(cwd), "--", *argv)

    def panes(self) -> list[str]:
        return self.run("list-panes", "-a", "-F", "#{pane_id}").split()

    def capture(self, pane: str) -> str:
        if pane not in self.panes():
            return "(pane gone)"
        return self.run("capture-pane", "-p", "-t", pane)

    def type_line(self, pane: str, text: str, delay: float = 0.3) -> None:
        """Type text literally, then Enter after a pause (lets slash-command menus open)."""
        self.run("send-keys", "-t", pane, "-l", text)
        time.sleep(delay)
        self.run("send-keys", "-t", pane, "Enter")

    def paste(self, pane: str, text: str) -> None:
        """Bracketed paste of text (as CAFleet types a preview), without Enter."""
        buffer = f"b-{uuid.uuid4().hex}"
        subprocess.run(
            [self.binary, "-L", self.name, "load-buffer", "-b", buffer, "-"],
            input=text,
            env=self.env,
            text=True,
            timeout=15,
            check=True,
        )
        self.run("paste-buffer", "-p", "-r", "-d", "-b", buffer, "-t", pane)

    def foreground(self, pane: str) -> str:
        """The pane's foreground command as tmux reports it (`claude`, `node`, `opencode`)."""
        return self.run("display-message", "-p", "-t", pane, "#{pane_current_command}")

    def wait_for_screen(self, pane: str, pattern: str, timeout: float) -> re.Match[str]:
        deadline = time.monotonic() + timeout
        while True:
            if found := re.search(pattern, self.capture(pane)):
                return found
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"{pattern!r} not on the screen of {pane} within {timeout}s:\n"
                    + self.capture(pane)
                )
            time.sleep(0.2)

    def wait_gone(self, pane: str, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while pane in self.panes():
            if time.monotonic() > deadline:
                return False
            time.sleep(0.1)
        return True

    def leftovers(self) -> dict[int, str]:
        """Processes with the scratch HOME other than the server and its placeholder."""
        return {pid: cmd for pid, cmd in self.home.processes().items() if pid not in self.own_pids}

    def wait_no_leftovers(self, timeout: float) -> dict[int, str]:
        """{} once the agents' processes are gone; else what is still there after timeout s."""
        deadline = time.monotonic() + timeout
        while (left := self.leftovers()) and time.monotonic() < deadline:
            time.sleep(0.2)
        return left


@pytest.fixture
def agent_tmux(agent_home: AgentHome) -> Iterator[AgentTmux]:
    # A placeholder window (`cat`) keeps the server alive when an agent's pane closes.
    started = private_tmux(
        require_tmux(),
        "cafleet-realagent",
        (160, 50),
        environment=agent_home.env,
        command=["cat"],
    )
    with started as server:
        tmux = AgentTmux(server, agent_home)
        try:
            yield tmux
        finally:
            server.kill()
            # Anything that outlived the server (a daemon re-parented to init) was started by
            # this test: end it by pid.
            for pid in tmux.wait_no_leftovers(timeout=5):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)


@pytest.fixture
def fleet(agent_home: AgentHome, agent_tmux: AgentTmux, tmp_path: Path) -> Iterator[Fleet]:
    """A fleet whose Director is the private server's first pane, on a fresh database."""
    env = {
        **agent_home.env,
        "CAFLEET_DATABASE_URL": f"sqlite:///{tmp_path / 'cafleet.db'}",
        "CAFLEET_AGENT_ARGS_CLAUDE": CLAUDE_EXTRA,
        "TMUX": f"{agent_tmux.socket},0,0",
        "TMUX_PANE": agent_tmux.run("display-message", "-p", "-t", "main", "#{pane_id}"),
    }
    made = Fleet(agent_tmux, env, agent_home.workdir)
    made.cli("setup", "db")
    made.cli("setup", "skill", "--agent", "claude", "--agent", "codex", "--agent", "opencode")
    created = made.cli("fleet", "create", "--name", "real").split()
    made.fleet_id, made.director = int(created[0]), int(created[1].split("=")[1])
    yield made
    made.cli("fleet", "delete", "--fleet-id", str(made.fleet_id), check=False)


@pytest.fixture
def start_director(
    agent_home: AgentHome,
    agent_tmux: AgentTmux,
    model_server: ScriptedModelServer,
    tmp_path: Path,
) -> Iterator[Callable[[str], Director]]:
    """Start `claude`, `codex` or `opencode` as the Director: `cafleet setup` done once, the
    agent's least grants to run `cafleet` (docs/agents.md) in the user's own settings, the
    user's exports, then the plain command in a pane of the private tmux server."""
    started: list[Director] = []

    def start(agent: str) -> Director:
        binary = require_agent(agent)
        data = tmp_path / "data"  # the database in a directory of its own
        data.mkdir()
        env = {**agent_home.env, **USER_EXPORTS}
        env["CAFLEET_DATABASE_URL"] = f"sqlite:///{data / 'cafleet.db'}"
        fleet = Fleet(agent_tmux, env, agent_home.workdir)
        fleet.cli("setup", "db")
        fleet.cli("setup", "skill", "--agent", "claude", "--agent", "codex", "--agent", "opencode")
        if agent == "claude":
            allow_cafleet_for_claude(agent_home.home)
        if agent == "codex":
            grant_codex_sandbox(Path(env["CODEX_HOME"]), data)
            login_profile(agent_home.home, env["PATH"])
        exports = [f"{name}={value}" for name, value in env.items()]
        first_request = len(model_server.requests)
        pane = agent_tmux.spawn(["env", *exports, binary], agent_home.workdir)
        director = Director(agent, agent_tmux, pane, model_server, fleet, first_request)
        started.append(director)
        director.wait_ready()
        return director

    yield start
    for director in started:
        if director.fleet.fleet_id:
            director.fleet.cli("fleet", "delete", "--fleet-id", str(director.fleet.fleet_id),
                               check=False)  # fmt: skip

"""A real `cafleet server` (uvicorn) on a free loopback port, over a real SQLite file.

The database is prepared the way a user would: `cafleet setup db`, `cafleet setup skill`
(HOME is a temporary directory), then `cafleet fleet create` run "inside" the first pane of a
private tmux server (`tmux -L cafleet-http-<uuid>`), which is killed at teardown. The server
process is stopped by its own pid.

Helpers are exposed as fixtures so that test modules never import this file.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import pytest

SERVER_START_TIMEOUT = 30.0
PRINTED_ADDRESS = re.compile(r"cafleet admin WebUI on (http://\S+/)(?:\?token=(\S+))? ")


def cafleet_command() -> list[str]:
    """The virtualenv's console script, else `python -m cafleet`."""
    search = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    found = shutil.which("cafleet", path=search)
    return [found] if found else [sys.executable, "-m", "cafleet"]


CAFLEET = cafleet_command()


def clean_environment(**extra: str) -> dict[str, str]:
    """os.environ without CAFLEET_*, HERDR_* and tmux client variables, plus `extra`."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("CAFLEET_", "HERDR_")) and k not in ("TMUX", "TMUX_PANE")
    }
    env.update(extra)
    return env


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass(frozen=True)
class Done:
    code: int
    stdout: str
    stderr: str


def run_cli(env: Mapping[str, str], *args: str) -> Done:
    finished = subprocess.run(
        [*CAFLEET, *args], env=dict(env), capture_output=True, text=True, timeout=120, check=False
    )
    return Done(finished.returncode, finished.stdout, finished.stderr)


@dataclass
class Workspace:
    """A HOME, a database and the environment every `cafleet` call of a test uses."""

    root: Path
    env: dict[str, str]

    def cli(self, *args: str, **extra_env: str) -> Done:
        return run_cli({**self.env, **extra_env}, *args)

    def ok(self, *args: str, **extra_env: str) -> str:
        done = self.cli(*args, **extra_env)
        assert done.code == 0, done
        return done.stdout

    def json(self, *args: str, **extra_env: str) -> Any:
        return json.loads(self.ok("--json", *args, **extra_env))


def make_workspace(root: Path) -> Workspace:
    home, runtime = root / "home", root / "run"
    home.mkdir()
    runtime.mkdir(mode=0o700)
    env = clean_environment(
        HOME=str(home),
        CAFLEET_DATABASE_URL=f"sqlite:///{root / 'cafleet.db'}",
        XDG_RUNTIME_DIR=str(runtime),
        CAFLEET_SUBMIT_DELAY_CLAUDE="0",
    )
    return Workspace(root, env)


def prepared(workspace: Workspace) -> Workspace:
    """Schema at head, and the bundled skills recorded so team commands are not gated."""
    workspace.ok("setup", "db")
    workspace.cli("setup", "skill", "--agent", "claude")  # fine if it fails: no gate yet
    return workspace


@dataclass(frozen=True)
class PrivateTmux:
    name: str
    binary: str
    socket: str
    pane_id: str

    @property
    def env(self) -> dict[str, str]:
        """What tmux exports to a process running in the server's first pane."""
        return {"TMUX": f"{self.socket},0,0", "TMUX_PANE": self.pane_id}

    def run(self, *args: str) -> str:
        done = subprocess.run(
            [self.binary, "-L", self.name, "-f", "/dev/null", *args],
            env=clean_environment(),
            capture_output=True,
            text=True,
            timeout=15,
            check=True,
        )
        return done.stdout.strip()


@pytest.fixture(scope="module")
def private_tmux() -> Iterator[PrivateTmux]:
    binary = shutil.which("tmux")
    if binary is None:
        pytest.skip("tmux is not installed")
    server = PrivateTmux(f"cafleet-http-{uuid.uuid4().hex}", binary, "", "")
    server.run("new-session", "-d", "-s", "main", "-x", "200", "-y", "50")
    socket_path = server.run("display-message", "-p", "#{socket_path}")
    try:
        yield PrivateTmux(
            server.name,
            binary,
            socket_path,
            server.run("display-message", "-p", "-t", "main", "#{pane_id}"),
        )
    finally:
        subprocess.run(
            [binary, "-L", server.name, "kill-server"],
            env=clean_environment(),
            capture_output=True,
            timeout=15,
            check=False,
        )
        Path(socket_path).unlink(missing_ok=True)  # tmux may leave the socket file behind


@dataclass
class ServerProcess:
    process: subprocess.Popen[bytes]
    base_url: str
    log: Path
    token: str = ""  # the token the server printed, or the one it was given

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def printed(self) -> tuple[str, str | None] | None:
        """The address the server printed and the token in it (None before it printed)."""
        found = PRINTED_ADDRESS.search(self.output())
        return (found.group(1), found.group(2)) if found else None

    @property
    def bearer(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    def stop(self, timeout: float = 15) -> int:
        if self.process.poll() is None:
            self.process.terminate()
        try:
            return self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait(timeout=timeout)


def start_server(workspace: Workspace, *args: str, **extra_env: str) -> ServerProcess:
    """`cafleet server --port <free>` in the background, once it printed its address and
    answers HTTP; its token is the printed one, else CAFLEET_WEBUI_TOKEN."""
    port = free_port()
    log = workspace.root / f"server-{port}.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [*CAFLEET, "server", "--port", str(port), *args],
            env={**workspace.env, **extra_env},
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    served = ServerProcess(process, f"http://127.0.0.1:{port}", log)
    deadline = time.monotonic() + SERVER_START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"cafleet server exited early:\n{served.output()}")
        printed = served.printed()
        try:
            if printed is not None:
                httpx2.get(served.base_url + "/api/fleets", timeout=2, trust_env=False)
                served.token = printed[1] or extra_env.get("CAFLEET_WEBUI_TOKEN", "")
                return served
        except httpx2.TransportError:
            pass
        time.sleep(0.1)
    served.stop()
    pytest.fail(f"cafleet server did not answer within {SERVER_START_TIMEOUT}s:\n{served.output()}")


@dataclass(frozen=True)
class FleetIds:
    fleet_id: int
    director: int
    admin: int


@dataclass
class Served:
    """One fleet in a real database, served by a running `cafleet server`."""

    workspace: Workspace
    tmux: PrivateTmux
    server: ServerProcess
    fleet: FleetIds

    @property
    def base_url(self) -> str:
        return self.server.base_url

    def client(self, **headers: str) -> httpx2.Client:
        """Carries the server's token and the fleet; `headers` may replace either."""
        return httpx2.Client(
            base_url=self.base_url,
            headers={**self.server.bearer, "X-Fleet-Id": str(self.fleet.fleet_id), **headers},
            timeout=30,
            trust_env=False,
        )

    def create_fleet(self, name: str) -> FleetIds:
        made = self.workspace.json("fleet", "create", "--name", name, **self.tmux.env)
        return FleetIds(
            made["fleet_id"], made["director"]["agent_id"], made["administrator_agent_id"]
        )


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, private_tmux: PrivateTmux) -> Iterator[Served]:
    yield from serve(prepared(make_workspace(tmp_path_factory.mktemp("http"))), private_tmux)


def serve(workspace: Workspace, private_tmux: PrivateTmux) -> Iterator[Served]:
    """A fleet made in the private tmux pane, served by `cafleet server` until the fixture ends."""
    made = workspace.json("fleet", "create", "--name", "served", **private_tmux.env)
    fleet = FleetIds(made["fleet_id"], made["director"]["agent_id"], made["administrator_agent_id"])
    server = start_server(workspace)
    try:
        yield Served(workspace, private_tmux, server, fleet)
    finally:
        server.stop()
    assert "Traceback" not in server.output(), server.output()


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    """A fresh, prepared workspace of its own (for servers a test starts itself)."""
    return prepared(make_workspace(tmp_path))


@pytest.fixture
def launch(workspace: Workspace) -> Iterator[Callable[..., ServerProcess]]:
    """Start servers on the test's workspace; every one is stopped at teardown."""
    started: list[ServerProcess] = []

    def launch_one(*args: str, **extra_env: str) -> ServerProcess:
        server = start_server(workspace, *args, **extra_env)
        started.append(server)
        return server

    yield launch_one
    for server in started:
        server.stop()


@pytest.fixture(scope="module")
def served_on_postgres(
    tmp_path_factory: pytest.TempPathFactory, private_tmux: PrivateTmux, postgres_server: Any
) -> Iterator[Served]:
    """As `served`, on a database of the private PostgreSQL server."""
    workspace = make_workspace(tmp_path_factory.mktemp("http-postgres"))
    workspace.env["CAFLEET_DATABASE_URL"] = postgres_server.create_database("served")
    try:
        yield from serve(prepared(workspace), private_tmux)
    finally:
        # the session server outlives this module: leave it as clean as it was
        postgres_server.drop_database("served")

"""A real `cafleet server` (uvicorn) on a free loopback port, over a real SQLite file.

The database is prepared the way a user would: `cafleet setup db`, `cafleet setup skill`
(HOME is a temporary directory), then `cafleet fleet create` run "inside" the first pane of a
private tmux server (`tmux -L cafleet-http-<uuid>`), which is killed at teardown. The server
process is stopped by its own pid.

Helpers are exposed as fixtures so that test modules never import this file.
"""

from __future__ import annotations

import json
import re
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import pytest

from support.cli import CAFLEET, Result, run_cafleet
from support.tmux import TmuxServer, clean_environment, require_tmux
from support.tmux import private_tmux as start_private_tmux

SERVER_START_TIMEOUT = 30.0
PRINTED_ADDRESS = re.compile(r"cafleet admin WebUI on (http://\S+/)(?:\?token=(\S+))? ")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass
class Workspace:
    """A HOME, a database and the environment every `cafleet` call of a test uses."""

    root: Path
    env: dict[str, str]

    def cli(self, *args: str, **extra_env: str) -> Result:
        return run_cafleet(*args, env={**self.env, **extra_env})

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


@pytest.fixture(scope="module")
def private_tmux() -> Iterator[TmuxServer]:
    with start_private_tmux(require_tmux(), "cafleet-http", (200, 50)) as server:
        yield server


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
    tmux: TmuxServer
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
def served(tmp_path_factory: pytest.TempPathFactory, private_tmux: TmuxServer) -> Iterator[Served]:
    yield from serve(prepared(make_workspace(tmp_path_factory.mktemp("http"))), private_tmux)


def serve(workspace: Workspace, private_tmux: TmuxServer) -> Iterator[Served]:
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
    tmp_path_factory: pytest.TempPathFactory, private_tmux: TmuxServer, postgres_server: Any
) -> Iterator[Served]:
    """As `served`, on a database of the private PostgreSQL server."""
    workspace = make_workspace(tmp_path_factory.mktemp("http-postgres"))
    workspace.env["CAFLEET_DATABASE_URL"] = postgres_server.create_database("served")
    try:
        yield from serve(prepared(workspace), private_tmux)
    finally:
        # the session server outlives this module: leave it as clean as it was
        postgres_server.drop_database("served")

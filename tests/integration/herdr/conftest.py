"""Fixtures for the herdr scenarios: the installed `cafleet` CLI against a real SQLite file and
the fake herdr server in pty mode (real shells, the demo agent really running in its panes).

The CLI runs as subprocesses with HERDR_ENV=1, HERDR_PANE_ID=<the server's first pane> and
HERDR_SOCKET_PATH=<the fake's socket>, no tmux variables, and a temporary HOME, database and
runtime directory (set up once per module). Each test gets a fresh server and a fleet of its
own; the server's first pane stands in for the Director's pane. Every `monitor start`
process a test launches is ended by its own pid on teardown; the server stops (and ends
every pane's process) on teardown.

Helpers are exposed as fixtures so test modules never import this file.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from support.cli import CAFLEET, Result, run_cafleet
from support.demo_log import log_events
from support.processes import BackgroundProcess
from support.tmux import clean_environment

_ROOT = str(Path(__file__).resolve().parents[3])
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

from tests.fakes.herdr_server import FakeHerdrServer, wait_until  # noqa: E402

DEADLINE = 30.0
DEMO_AGENT = f"{sys.executable} -m cafleet.demo.agent"
MEMBER_LINE = re.compile(r"^(\d+) (\S+) coding_agent=custom pane=(\S+)$")


read_log = log_events  # the demo agents' logs


class LoopProcess(BackgroundProcess):
    """A running `cafleet monitor start`."""

    def wait_for_line(self, pattern: str, timeout: float = DEADLINE) -> re.Match[str]:
        return super().wait_for_line(pattern, timeout)

    def wait(self, timeout: float = DEADLINE) -> int:
        return super().wait(timeout)


@dataclass(frozen=True)
class Member:
    agent_id: int
    name: str
    pane_id: str
    log: Path

    def events(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in read_log(self.log) if e.get("event") == kind]

    def submissions(self) -> list[str]:
        return [e["text"] for e in self.events("submit")]


@dataclass
class HerdrFleet:
    server: FakeHerdrServer
    env: dict[str, str]
    workdir: Path
    db_path: Path
    fleet_id: int = 0
    director: int = 0
    created: dict[str, Any] = field(default_factory=dict)
    loops: list[LoopProcess] = field(default_factory=list)

    def __call__(self, *args: str, extra_env: dict[str, str] | None = None) -> Result:
        return run_cafleet(*args, env={**self.env, **(extra_env or {})}, cwd=self.workdir)

    def ok(self, *args: str, extra_env: dict[str, str] | None = None) -> str:
        result = self(*args, extra_env=extra_env)
        assert result.code == 0, result
        return result.stdout

    def json(self, *args: str) -> Any:
        return json.loads(self.ok("--json", *args))

    def member(
        self,
        name: str,
        *,
        role: str = "member",
        options: str = "",
        extra_env: dict[str, str] | None = None,
    ) -> Member:
        """A member running the demo agent (custom backend), started and ready."""
        log = self.workdir / f"{name}.jsonl"
        out = self.ok(
            "member", "create", "--fleet-id", str(self.fleet_id),
            "--agent-id", str(self.director), "--name", name,
            "--description", f"{name} on herdr", "--role", role,
            "--coding-agent", "custom", "--agent-command", f"{DEMO_AGENT} {options}".strip(),
            "--text", f"you are {name}",
            extra_env={"CAFLEET_DEMO_LOG": str(log), **(extra_env or {})},
        )  # fmt: skip
        made = MEMBER_LINE.match(out.strip())
        assert made, out
        member = Member(int(made.group(1)), made.group(2), made.group(3), log)
        wait_until(lambda: member.events("ready"), f"the demo agent of {name} to start", DEADLINE)
        wait_until(
            lambda: self.server.bracketed(member.pane_id),
            f"{name}'s agent to ask for bracketed paste",
            DEADLINE,
        )
        return member

    def start_loop(self, *extra: str) -> LoopProcess:
        loop = LoopProcess(
            [*CAFLEET, "monitor", "start", "--fleet-id", str(self.fleet_id), *extra], self.env
        )
        self.loops.append(loop)
        return loop

    def wait(self, probe: Callable[[], Any], what: str) -> Any:
        return wait_until(probe, what, DEADLINE)


@dataclass(frozen=True)
class Installation:
    """A temporary HOME, runtime directory and database brought to head, with the skills
    install the CLI's gate insists on; shared by the module's fleets."""

    root: Path
    env: dict[str, str]
    db_path: Path


@pytest.fixture(scope="module")
def installation(tmp_path_factory: pytest.TempPathFactory) -> Installation:
    if not os.path.isdir("/proc"):
        pytest.skip("the fake herdr server reads foreground processes from /proc")
    root = tmp_path_factory.mktemp("herdr")
    home = root / "home"
    (home / ".claude").mkdir(parents=True)
    runtime = root / "run"
    runtime.mkdir(mode=0o700)
    db_path = root / "cafleet.db"
    env = clean_environment(
        HOME=str(home),
        XDG_RUNTIME_DIR=str(runtime),
        CAFLEET_DATABASE_URL=f"sqlite:///{db_path}",
        CAFLEET_SUBMIT_DELAY_CUSTOM="0.05",
    )
    for args in (("setup", "db"), ("setup", "skill", "--agent", "claude")):
        done = run_cafleet(*args, env=env, cwd=root)
        assert done.code == 0, done
    return Installation(root, env, db_path)


@pytest.fixture
def herdr_fleet(installation: Installation, tmp_path: Path) -> Iterator[HerdrFleet]:
    """A fresh fake herdr server, and `fleet create --name h --coding-agent custom` run from
    its first pane."""
    workdir = tmp_path / "work"
    workdir.mkdir()
    server = FakeHerdrServer(pty=True, env=installation.env).start(cwd=str(workdir))
    env = {
        **installation.env,
        "HERDR_ENV": "1",
        "HERDR_PANE_ID": server.root_pane,
        "HERDR_SOCKET_PATH": server.socket_path,
    }
    fleet = HerdrFleet(server, env, workdir, installation.db_path)
    try:
        created = fleet.json("fleet", "create", "--name", "h", "--coding-agent", "custom")
        fleet.created = created
        fleet.fleet_id = created["fleet_id"]
        fleet.director = created["director"]["agent_id"]
        yield fleet
    finally:
        for loop in fleet.loops:
            loop.stop()
        server.stop()

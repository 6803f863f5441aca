"""Fixtures for the monitor loop against a real tmux server and a real SQLite file.

The module gets a private tmux server (tests/support/tmux.py, killed on teardown) and
a temporary HOME and database brought to head by `cafleet setup db` (plus `setup skill --agent
claude`, for the skills gate). Each fleet is created from the first pane of a window of its
own, with a monitoring member and an ordinary member, both running the built-in demo agent
(which logs what it receives to a JSON-lines file). Every `monitor start` process a test
launches is tracked and ended by its own pid on teardown.

Helpers are exposed as fixtures so test modules never import this file.
"""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from support.cli import CAFLEET, Result, run_cafleet
from support.demo_log import log_events
from support.processes import BackgroundProcess
from support.tmux import TmuxServer, clean_environment, private_tmux, require_tmux

DEADLINE = 30.0
STEP = 0.05
DEMO_AGENT = f"{sys.executable} -m cafleet.demo.agent"
FLEET_LINE = re.compile(r"^(\d+) director=(\d+) admin=(\d+)$")
MEMBER_LINE = re.compile(r"^(\d+) (\S+) coding_agent=custom pane=(%\d+)$")


def wait_for(probe: Callable[[], Any], what: str, timeout: float = DEADLINE) -> Any:
    """Call `probe` until it returns something truthy; fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(STEP)


@pytest.fixture(scope="module")
def mon_tmux() -> Iterator[TmuxServer]:
    """A private tmux server for the module; each fleet lives in a window of its own."""
    with private_tmux(require_tmux(), "cafleet-mon", (220, 60)) as server:
        yield server


# --------------------------------------------------------------------------- the CLI


class Cafleet:
    """`cafleet` with a fixed environment (per-call additions allowed)."""

    def __init__(self, env: dict[str, str]) -> None:
        self.env = env

    def __call__(self, *args: str, extra_env: dict[str, str] | None = None) -> Result:
        return run_cafleet(*args, env={**self.env, **(extra_env or {})})

    def ok(self, *args: str, extra_env: dict[str, str] | None = None) -> str:
        result = self(*args, extra_env=extra_env)
        assert result.code == 0, result
        return result.stdout

    def json(self, *args: str) -> Any:
        return json.loads(self.ok("--json", *args))


class LoopProcess(BackgroundProcess):
    """A running `cafleet monitor start`."""

    def wait_for_line(self, pattern: str, timeout: float = DEADLINE) -> re.Match[str]:
        return super().wait_for_line(pattern, timeout)

    def wait(self, timeout: float = DEADLINE) -> int:
        return super().wait(timeout)


# --------------------------------------------------------------------------- the fleet


read_log = log_events  # the demo agents' logs


@dataclass
class MonitoredFleet:
    tmux: TmuxServer
    cli: Cafleet
    db_path: Path
    window_id: str
    fleet_id: int
    director_id: int
    admin_id: int
    watcher_id: int
    watcher_log: Path
    member_id: int
    member_log: Path
    loops: list[LoopProcess] = field(default_factory=list)

    def loop_argv(self, *extra: str) -> list[str]:
        return [*CAFLEET, "monitor", "start", "--fleet-id", str(self.fleet_id), *extra]

    def start_loop(self, *extra: str) -> LoopProcess:
        loop = LoopProcess(self.loop_argv(*extra), self.cli.env)
        self.loops.append(loop)
        return loop

    def wakes(self) -> list[str]:
        """Every `[monitor] wake:` submission the watcher's demo agent logged."""
        return [
            e["text"]
            for e in read_log(self.watcher_log)
            if e.get("event") == "submit" and e.get("text", "").startswith("[monitor] wake:")
        ]

    def wait_for_wake(self, fragment: str) -> str:
        """The first wake the watcher received that contains `fragment`."""
        return str(
            wait_for(
                lambda: next((w for w in self.wakes() if fragment in w), None),
                f"a wake naming {fragment!r} in the watcher's log",
            )
        )

    def wait_until(self, probe: Callable[[], Any], what: str) -> Any:
        return wait_for(probe, what)

    def status(self) -> Any:
        return self.cli.json("monitor", "status", "--fleet-id", str(self.fleet_id))

    def runtime_row(self) -> dict[str, Any] | None:
        conn = sqlite3.connect(self.db_path, timeout=30)
        conn.row_factory = sqlite3.Row
        try:
            row = conn.execute(
                "SELECT * FROM monitor_runtime WHERE fleet_id = ?", (self.fleet_id,)
            ).fetchone()
        finally:
            conn.close()
        return None if row is None else dict(row)


@dataclass(frozen=True)
class Installation:
    """A temporary HOME and database brought to head, reached through a tmux server."""

    tmux: TmuxServer
    home: Path
    db_path: Path

    def cli(self, pane: str) -> Cafleet:
        """`cafleet` as if run in `pane` of the private server."""
        return Cafleet(
            clean_environment(
                HOME=str(self.home),
                CAFLEET_DATABASE_URL=f"sqlite:///{self.db_path}",
                TMUX=f"{self.tmux.socket},0,0",
                TMUX_PANE=pane,
                CAFLEET_SUBMIT_DELAY_CUSTOM="0.05",
            )
        )


@pytest.fixture(scope="module")
def installation(mon_tmux: TmuxServer, tmp_path_factory: pytest.TempPathFactory) -> Installation:
    root = tmp_path_factory.mktemp("monitor")
    home = root / "home"
    home.mkdir()
    made = Installation(mon_tmux, home, root / "cafleet.db")
    cli = made.cli(mon_tmux.pane_id)
    cli.ok("setup", "db")
    # team commands (monitor, member, fleet) refuse to run without a recorded skills install
    cli.ok("setup", "skill", "--agent", "claude")
    return made


def build_fleet(installation: Installation, logs: Path) -> MonitoredFleet:
    """A fleet whose Director is the first pane of a new window, with a monitoring member and
    a member `worker` (interval 1 s), both running the demo agent."""
    tmux = installation.tmux
    window, pane = tmux.run(
        "new-window", "-d", "-P", "-F", "#{window_id} #{pane_id}", "-t", "main"
    ).split()
    cli = installation.cli(pane)
    fleet = FLEET_LINE.match(
        cli.ok("fleet", "create", "--name", "m", "--coding-agent", "custom").strip()
    )
    assert fleet, "unexpected fleet create output"
    fleet_id, director_id, admin_id = (int(g) for g in fleet.groups())

    def create(name: str, role: str, log: Path) -> int:
        out = cli.ok(
            "member", "create", "--fleet-id", str(fleet_id), "--agent-id", str(director_id),
            "--name", name, "--description", f"{name} for the monitor test",
            "--role", role, "--coding-agent", "custom", "--agent-command", DEMO_AGENT,
            "--text", "watch",
            extra_env={"CAFLEET_DEMO_LOG": str(log)},
        )  # fmt: skip
        made = MEMBER_LINE.match(out.strip())
        assert made, out
        wait_for(
            lambda: any(e.get("event") == "ready" for e in read_log(log)),
            f"the demo agent of {name} to start",
        )
        return int(made.group(1))

    watcher_log, member_log = logs / "watcher.jsonl", logs / "worker.jsonl"
    watcher_id = create("watcher", "monitor", watcher_log)
    member_id = create("worker", "member", member_log)
    cli.ok(
        "monitor", "config", "--fleet-id", str(fleet_id), "--member-id", str(member_id),
        "--interval", "1",
    )  # fmt: skip
    return MonitoredFleet(
        tmux=tmux,
        cli=cli,
        db_path=installation.db_path,
        window_id=window,
        fleet_id=fleet_id,
        director_id=director_id,
        admin_id=admin_id,
        watcher_id=watcher_id,
        watcher_log=watcher_log,
        member_id=member_id,
        member_log=member_log,
    )


def _close(world: MonitoredFleet) -> None:
    """End the loops this test started (by pid), then close the fleet's window."""
    for loop in world.loops:
        loop.terminate()
    for loop in world.loops:
        try:
            loop.wait(timeout=10)
        except subprocess.TimeoutExpired:
            loop.kill()
    world.tmux.run("kill-window", "-t", world.window_id, check=False)


@pytest.fixture
def monitored(installation: Installation, tmp_path: Path) -> Iterator[MonitoredFleet]:
    """A fresh fleet for a test that starts, stops or deletes things."""
    world = build_fleet(installation, tmp_path)
    try:
        yield world
    finally:
        _close(world)


@dataclass(frozen=True)
class RunningLoop:
    fleet: MonitoredFleet
    loop: LoopProcess


@pytest.fixture(scope="module")
def running(
    installation: Installation, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RunningLoop]:
    """A fleet with `monitor start --tick 1` running, shared by tests that only observe it."""
    world = build_fleet(installation, tmp_path_factory.mktemp("running"))
    try:
        loop = world.start_loop("--tick", "1")
        loop.wait_for_line(rf"^monitor loop started \(fleet {world.fleet_id}, tick 1s, pid ")
        yield RunningLoop(world, loop)
    finally:
        _close(world)


@pytest.fixture(scope="module")
def idle_fleet(
    installation: Installation, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[MonitoredFleet]:
    """A fleet shared by tests that only read (no loop runs for it)."""
    world = build_fleet(installation, tmp_path_factory.mktemp("idle"))
    try:
        yield world
    finally:
        _close(world)

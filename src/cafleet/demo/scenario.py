"""`cafleet demo`: a whole fleet at work in a private tmux server, then cleaned up.

The demo drives the real CLI in separate processes, the way a Director does: it
creates a fleet in the first pane, spawns two members running the built-in demo
agent (or a real coding agent when asked), starts a ping-pong between them by
sending one message, waits for the conversation to finish, prints the timeline
and tears everything down.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from cafleet.application.messaging.service import MessagingService
from cafleet.composition import Components
from cafleet.domain.message import Message, MessageState
from cafleet.settings import Settings

ROUND_TIMEOUT_SECONDS = 30.0
REAL_AGENTS = ("claude", "codex", "opencode")

MEMBER_PROMPT = (
    "You are {name}, a member of CAFleet fleet {{fleet_id}} with agent id {{agent_id}}; the"
    " Director is {{director_agent_id}}. When a message arrives, run `cafleet message poll"
    " --fleet-id {{fleet_id}} --agent-id {{agent_id}}`, acknowledge each message with"
    " `cafleet message ack`, and answer `ping N` with `pong N` to its sender, and `pong N`"
    " with `ping N+1` while N < {rounds}, using `cafleet message send`."
)


class DemoError(Exception):
    """A step of the demo failed; the message says which and why."""


@dataclass(frozen=True)
class Fleet:
    fleet_id: str
    director: str
    admin: str


def run_demo(
    rounds: int, coding_agent: str, keep: bool, echo: Callable[[str], None] = print
) -> int:
    if shutil.which("tmux") is None:
        raise DemoError("tmux is not installed; the demo runs its fleet in a private tmux server")
    if coding_agent in REAL_AGENTS and shutil.which(coding_agent) is None:
        raise DemoError(
            f"{coding_agent} is not installed; run the demo without --coding-agent"
            " to use the built-in demo agent"
        )
    server = f"cafleet-demo-{uuid.uuid4().hex[:8]}"
    scratch = Path(tempfile.mkdtemp(prefix="cafleet-demo-"))
    tmux = ["tmux", "-L", server, "-f", os.devnull]
    subprocess.run([*tmux, "new-session", "-d", "-s", "demo", "-x", "200", "-y", "50"], check=True)
    try:
        env = _environment(tmux, scratch)
        cli = _Cli(env, echo)
        cli("setup", "db")
        # the scratch database must record a skills install; put the copies in the scratch
        # directory rather than in the user's own coding-agent homes
        cli("setup", "skill", "--agent", "claude", home=scratch)
        fleet = _create_fleet(cli, coding_agent)
        members = [
            _create_member(cli, fleet, name, coding_agent, rounds) for name in ("alice", "bob")
        ]
        echo(f"\nWatch it live: tmux -L {server} attach -t demo\n")
        cli(
            "message",
            "send",
            "--fleet-id",
            fleet.fleet_id,
            "--agent-id",
            members[0],
            "--to",
            members[1],
            "--text",
            "ping 1",
        )
        history = Components(Settings.from_environ(env), env).messaging
        finished = _wait_for_messages(history, fleet, 2 * rounds, rounds * ROUND_TIMEOUT_SECONDS)
        echo("\nTimeline:")
        for line in _timeline(history, fleet, members):
            echo(f"  {line}")
        cli("member", "list", "--fleet-id", fleet.fleet_id, "--activity")
        if keep:
            echo(
                f"\nLeft running. Attach: tmux -L {server} attach -t demo"
                f"\nDatabase: {env['CAFLEET_DATABASE_URL']}"
                f"\nStop: tmux -L {server} kill-server"
            )
            return 0 if finished else 1
        cli("fleet", "delete", "--fleet-id", fleet.fleet_id, "--timeout", "5")
        if not finished:
            echo("The conversation did not finish in time; see the timeline above.")
        return 0 if finished else 1
    finally:
        if not keep:
            subprocess.run([*tmux, "kill-server"], check=False, capture_output=True)
            shutil.rmtree(scratch, ignore_errors=True)


class _Cli:
    """Runs `cafleet ...` as its own process, echoing each command and its output."""

    def __init__(self, env: dict[str, str], echo: Callable[[str], None]) -> None:
        self._env = env
        self._echo = echo

    def __call__(self, *args: str, quiet: bool = False, home: Path | None = None) -> str:
        if not quiet:
            self._echo(f"$ cafleet {shlex.join(args)}")
        done = subprocess.run(
            [sys.executable, "-m", "cafleet", *args],
            env=self._env if home is None else {**self._env, "HOME": str(home)},
            capture_output=True,
            text=True,
            check=False,
        )
        if not quiet and done.stdout.strip():
            self._echo(done.stdout.rstrip())
        if done.returncode != 0:
            raise DemoError(
                f"cafleet {args[0]} {args[1] if len(args) > 1 else ''} failed:"
                f" {done.stderr.strip()}"
            )
        return done.stdout.strip()


def _environment(tmux: list[str], scratch: Path) -> dict[str, str]:
    def query(*args: str) -> str:
        return subprocess.run(
            [*tmux, *args], check=True, capture_output=True, text=True
        ).stdout.strip()

    env = {k: v for k, v in os.environ.items() if not k.startswith(("TMUX", "HERDR_"))}
    env.update(
        CAFLEET_DATABASE_URL=f"sqlite:///{scratch / 'demo.db'}",
        CAFLEET_SUBMIT_DELAY_CUSTOM="0.2",
        TMUX=f"{query('display-message', '-p', '#{socket_path}')},0,0",
        TMUX_PANE=query("display-message", "-p", "-t", "demo", "#{pane_id}"),
    )
    return env


def _create_fleet(cli: _Cli, coding_agent: str) -> Fleet:
    fleet_id, director, admin = (
        part.split("=")[-1]
        for part in cli("fleet", "create", "--name", "demo", "--coding-agent", "custom").split()
    )
    del coding_agent  # the Director is this process; only members run agents
    return Fleet(fleet_id, director, admin)


def _create_member(cli: _Cli, fleet: Fleet, name: str, coding_agent: str, rounds: int) -> str:
    agent_args = ["--coding-agent", coding_agent]
    if coding_agent == "custom":
        command = shlex.join([sys.executable, "-m", "cafleet.demo.agent", "--rounds", str(rounds)])
        agent_args += ["--agent-command", command]
    prompt = MEMBER_PROMPT.format(name=name, rounds=rounds)
    created = cli(
        "member",
        "create",
        "--fleet-id",
        fleet.fleet_id,
        "--agent-id",
        fleet.director,
        "--name",
        name,
        "--description",
        f"Demo member {name}",
        *agent_args,
        "--text",
        prompt,
    )
    return created.split()[0]


def _wait_for_messages(history: MessagingService, fleet: Fleet, count: int, timeout: float) -> bool:
    """True once `count` member messages were sent and every one was acknowledged."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        messages = _member_messages(history, fleet)
        if len(messages) >= count and all(m.state is MessageState.COMPLETED for m in messages):
            return True
        time.sleep(0.25)
    return False


def _member_messages(history: MessagingService, fleet: Fleet) -> list[Message]:
    timeline = history.timeline(int(fleet.fleet_id))
    return [m for m in reversed(timeline) if m.from_agent_id != int(fleet.director)]


def _timeline(history: MessagingService, fleet: Fleet, members: list[str]) -> list[str]:
    names = {int(members[0]): "alice", int(members[1]): "bob"}
    return [
        f"#{m.task_id} {names.get(m.from_agent_id, m.from_agent_id)} ->"
        f" {names.get(m.to_agent_id or 0, m.to_agent_id)}: {m.text} [{m.state.value}]"
        for m in _member_messages(history, fleet)
    ]

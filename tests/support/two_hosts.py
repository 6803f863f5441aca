"""Two hosts on one machine, sharing one PostgreSQL store: what a team across machines is,
minus the network. Host A and host B each have a private tmux server of their own and a
`cafleet relay` with their own `CAFLEET_HOST`; nothing of one host's tmux is reachable from
the other's commands except through B's or A's relay. Used by the end-to-end test and the
cross-host benchmark.

- Host A: the Director's pane runs the demo agent in `--hold` mode (it shows each preview
  it is given and does nothing else) under Claude Code's name, so whatever reaches the
  Director's pane is in its log. A's relay runs in the background, outside any
  pane (nothing is spawned on A from elsewhere). `spawn_on_a` puts a demo-agent member
  beside the Director, for a delivery on one host through the same store.
- Host B: B's relay runs in the first pane of B's server, so members spawned on B open
  beside it; or (`relay_b_in_pane=False`) under nohup outside any pane, as a service, so
  members open in the tmux session it makes of its own. Members run the demo agent, which
  answers `ping N` with `pong N`.

Each host has its own tmux socket directory (TMUX_TMPDIR), as a machine of its own has: the
session a relay outside any pane makes (`tmux -L cafleet`) is the host's, and is killed at
the end.

Everything runs through the installed `cafleet` command, as a person would.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from support.cli import CAFLEET
from support.demo_log import log_events
from support.tmux import TmuxServer, clean_environment, private_tmux

HOST_A = "host-a"
HOST_B = "host-b"
BIN = Path(sys.executable).parent
DEMO_AGENT = str(BIN / "cafleet-demo-agent")
SUBMIT_DELAY = "0.05"
# The Director's agent: the demo agent in --hold mode behind Claude Code's name (a script
# `claude`, which the multiplexer shows as its interpreter; the settings name both), so the
# pane passes the agent check as a Director's Claude Code does.
DIRECTOR_AGENT = """#!{python}
import sys
from cafleet.demo import agent as demo_agent
sys.exit(demo_agent.main(["--hold", *sys.argv[1:]]))
"""
DIRECTOR_COMMANDS = sorted(
    {"claude", Path(sys.executable).name, Path(os.path.realpath(sys.executable)).name}
)
T = TypeVar("T")


def wait_until(probe: Callable[[], T | None], what: str, timeout: float = 60.0) -> T:
    """`probe()` once it is truthy (an empty list or text is not); fails at the deadline."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(0.02)


class CliFailed(AssertionError):
    pass


@dataclass
class Host:
    name: str
    tmux: TmuxServer
    env: dict[str, str]  # a process on this host: its CAFLEET_HOST, and its tmux pane if any

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [*CAFLEET, *args],
            env=self.env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )
        if check and (done.returncode != 0 or done.stderr):
            raise CliFailed(f"cafleet {shlex.join(args)} on {self.name}: {done}")
        return done

    def ok(self, *args: str) -> str:
        return self.run(*args).stdout

    def json(self, *args: str) -> Any:
        return json.loads(self.ok("--json", *args))


@dataclass
class TwoHosts:
    scratch: Path
    url: str
    a: Host
    b: Host
    director_log: Path
    fleet_id: int = 0
    director: int = 0
    relay_a: subprocess.Popen[str] | None = None
    relay_b_pane: str = ""
    relay_b_service: subprocess.Popen[bytes] | None = None  # B's relay under nohup

    # -- the fleet

    def create_fleet(self) -> None:
        """The fleet, created from A's Director pane (a plain shell, which then becomes the
        Director's agent by exec: the same process, so the pane's recorded identity holds)."""
        made = self.a.json("fleet", "create", "--name", "two-hosts", "--coding-agent", "claude")
        self.fleet_id = made["fleet_id"]
        self.director = made["director"]["agent_id"]
        env = {"CAFLEET_FLEET_ID": str(self.fleet_id), "CAFLEET_AGENT_ID": str(self.director),
               "CAFLEET_DEMO_LOG": str(self.director_log)}  # fmt: skip
        claude = self.scratch / "bin" / "claude"
        claude.parent.mkdir()
        claude.write_text(DIRECTOR_AGENT.replace("{python}", sys.executable), encoding="utf-8")
        claude.chmod(0o755)
        line = f"export {_assignments(env)}; exec {shlex.quote(str(claude))} director"
        pane = self.a.env["TMUX_PANE"]
        self.a.tmux.run("send-keys", "-t", pane, "-l", line)
        self.a.tmux.run("send-keys", "-t", pane, "Enter")
        wait_until(lambda: self.director_events("ready"), "the Director's agent")

    @property
    def members_log(self) -> Path:
        """The demo agents' log on B: a member's environment is B's relay's, which names it."""
        return self.scratch / "logs" / "host-b-members.jsonl"

    @property
    def a_members_log(self) -> Path:
        """The demo agents' log on A, for members spawned beside the Director (`spawn_on_a`)."""
        return self.scratch / "logs" / "host-a-members.jsonl"

    def spawn_on_b(self, name: str) -> int:
        """`member create --host host-b` from A: the new member's id."""
        return _create_demo_member(self.a, self.fleet_id, self.director, name,
                                   f"{name} on host B", "--host", HOST_B)  # fmt: skip

    def spawn_on_a(self, name: str) -> int:
        """`member create` on A, beside the Director (no relay in between): the new member's
        id. Its agent logs to `a_members_log` (the member takes its spawner's environment)."""
        env = {**self.a.env, "CAFLEET_DEMO_LOG": str(self.a_members_log)}
        return _create_demo_member(Host(HOST_A, self.a.tmux, env), self.fleet_id,
                                   self.director, name, f"{name} on host A")  # fmt: skip

    def send(self, sender_host: Host, sender: int, to: int, text: str) -> dict[str, Any]:
        sent: dict[str, Any] = sender_host.json(
            "message", "send", "--fleet-id", str(self.fleet_id), "--agent-id", str(sender),
            "--to", str(to), "--text", text,
        )  # fmt: skip
        return sent

    # -- relays

    def start_relay_a(self) -> None:
        self.relay_a = subprocess.Popen(
            [*CAFLEET, "relay", "--poll", "1"],
            env=self.a_background_env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        self.wait_relay(HOST_A)

    def start_relay_b(self) -> None:
        """In B's first pane (kept open when the relay dies, to be started again there)."""
        env = {**self.b.env, "CAFLEET_DEMO_LOG": str(self.members_log)}
        env.pop("TMUX", None)
        env.pop("TMUX_PANE", None)
        command = f"exec env {_assignments(env)} {shlex.join([*CAFLEET, 'relay', '--poll', '1'])}"
        pane = self.b.tmux.pane_id
        self.b.tmux.run("set-option", "-p", "-t", pane, "remain-on-exit", "on")
        self.b.tmux.run("respawn-pane", "-k", "-t", pane, command)
        self.relay_b_pane = pane
        self.wait_relay(HOST_B)

    @property
    def relay_b_output(self) -> Path:
        return self.scratch / "logs" / "relay-b.out"

    def start_relay_b_under_nohup(self) -> None:
        """As a service runs it: under nohup, in no pane and with no TMUX, output to a file."""
        env = {**self.b.env, "CAFLEET_DEMO_LOG": str(self.members_log)}
        env.pop("TMUX", None)
        env.pop("TMUX_PANE", None)
        nohup = shutil.which("nohup") or "nohup"
        with self.relay_b_output.open("wb") as out:
            self.relay_b_service = subprocess.Popen(
                [nohup, *CAFLEET, "relay", "--poll", "1"],
                env=env,
                cwd=self.scratch,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # no terminal, no session leader of the test's
            )
        self.wait_relay(HOST_B)

    def relay_session(self, host: Host, *args: str) -> str:
        """`tmux -L cafleet ...` on `host`: the session its relay made outside any pane."""
        done = subprocess.run(
            [host.tmux.binary, "-L", "cafleet", *args],
            env=clean_environment(TMUX_TMPDIR=host.env["TMUX_TMPDIR"]),
            capture_output=True,
            text=True,
            timeout=15,
            check=True,
        )
        return done.stdout.strip()

    def kill_relay_b(self) -> None:
        """SIGKILL, as a crash or a lost machine: no goodbye, its beat just goes stale."""
        os.kill(self.relay_pid(HOST_B), signal.SIGKILL)
        pane = self.relay_b_pane
        wait_until(
            lambda: self.b.tmux.run("display-message", "-p", "-t", pane, "#{pane_dead}") == "1",
            "B's relay to die",
        )

    def relay_pid(self, host: str) -> int:
        rows = self.rows("SELECT pid FROM relays WHERE host = :host", host=host)
        assert rows, f"no relay row for {host}"
        return int(rows[0][0])

    def wait_relay(self, host: str) -> None:
        wait_until(lambda: self.rows("SELECT pid FROM relays WHERE host = :h", h=host),
                   f"the relay of {host}")  # fmt: skip

    def a_background_env(self) -> dict[str, str]:
        env = dict(self.a.env)
        env.pop("TMUX", None)
        env.pop("TMUX_PANE", None)
        return env

    # -- reading

    def director_events(self, event: str) -> list[dict[str, Any]]:
        return [e for e in log_events(self.director_log) if e["event"] == event]

    def member_events(self, event: str) -> list[dict[str, Any]]:
        return [e for e in log_events(self.members_log) if e["event"] == event]

    def rows(self, sql: str, **params: Any) -> list[Any]:
        from sqlalchemy import create_engine, text

        engine = create_engine(self.url)
        try:
            with engine.connect() as conn:
                return list(conn.execute(text(sql), params))
        finally:
            engine.dispose()

    def stop(self) -> None:
        for relay in (self.relay_a, self.relay_b_service):
            if relay is not None and relay.poll() is None:
                relay.terminate()
                try:
                    relay.wait(20)
                except subprocess.TimeoutExpired:
                    relay.kill()
                    relay.wait(20)


def _create_demo_member(
    spawner: Host, fleet_id: int, director: int, name: str, description: str, *extra: str
) -> int:
    """`member create` of a demo-agent member, run by `spawner` with `extra` options; the
    new member's id."""
    out = spawner.ok(
        "member", "create", "--fleet-id", str(fleet_id), "--agent-id", str(director),
        "--name", name, "--description", description, *extra, "--coding-agent", "custom",
        "--agent-command", f"{shlex.quote(DEMO_AGENT)} {{prompt}}", "--text", f"You are {name}.",
    )  # fmt: skip
    return int(out.split()[0])


def _plain_shell(tmux: TmuxServer) -> str:
    """A new window running a shell that reads no start-up files (it is ready at once, and
    nothing of the machine's shell set-up types into it); its pane id once it prompts."""
    pane = tmux.run("new-window", "-d", "-P", "-F", "#{pane_id}", "bash --norc --noprofile")
    wait_until(lambda: tmux.run("capture-pane", "-p", "-t", pane).strip(), "a shell prompt")
    return pane


def _host_env(scratch: Path, sockets: Path, host: str) -> dict[str, str]:
    """A host's name, its own runtime directory (send locks, launch pads) and tmux socket
    directory, as on a machine of its own."""
    runtime = scratch / f"run-{host}"
    runtime.mkdir(mode=0o700)
    tmux_dir = sockets / host
    tmux_dir.mkdir(mode=0o700)
    return {"CAFLEET_HOST": host, "XDG_RUNTIME_DIR": str(runtime), "TMUX_TMPDIR": str(tmux_dir)}


def _kill_relay_sessions(binary: str, hosts: list[dict[str, str]]) -> None:
    """The tmux servers the relays made outside any pane (see relay_session)."""
    for env in hosts:
        subprocess.run(
            [binary, "-L", "cafleet", "kill-server"],
            env=clean_environment(TMUX_TMPDIR=env["TMUX_TMPDIR"]),
            capture_output=True,
            timeout=15,
            check=False,
        )


def _assignments(env: Mapping[str, str]) -> str:
    return " ".join(shlex.quote(f"{k}={v}") for k, v in sorted(env.items()))


@contextmanager
def two_hosts(
    scratch: Path, url: str, tmux_binary: str, *, relay_b_in_pane: bool = True
) -> Iterator[TwoHosts]:
    """The store set up (`cafleet setup`), both hosts' tmux servers, a fleet whose Director
    is on A, and both relays running; everything stopped and killed afterwards."""
    home = scratch / "home"
    (home / ".claude").mkdir(parents=True)
    (scratch / "logs").mkdir()
    base = clean_environment(
        HOME=str(home),
        CAFLEET_DATABASE_URL=url,
        CAFLEET_SUBMIT_DELAY_CUSTOM=SUBMIT_DELAY,
        CAFLEET_AGENT_COMMANDS_CLAUDE=",".join(DIRECTOR_COMMANDS),
        PATH=os.pathsep.join([str(BIN), os.environ.get("PATH", "")]),
    )
    with ExitStack() as stack:
        tmux_a = stack.enter_context(private_tmux(tmux_binary, "cafleet-host-a", (200, 50)))
        tmux_b = stack.enter_context(private_tmux(tmux_binary, "cafleet-host-b", (200, 50)))
        # short: a socket's path must fit in 108 bytes
        sockets = Path(tempfile.mkdtemp(prefix="cafleet-tmux-"))
        stack.callback(shutil.rmtree, sockets, ignore_errors=True)
        director_pane = _plain_shell(tmux_a)
        a_env = {**tmux_a.env, "TMUX_PANE": director_pane}
        a = Host(HOST_A, tmux_a, {**base, **_host_env(scratch, sockets, HOST_A), **a_env})
        b = Host(HOST_B, tmux_b, {**base, **_host_env(scratch, sockets, HOST_B), **tmux_b.env})
        stack.callback(_kill_relay_sessions, tmux_binary, [a.env, b.env])
        a.ok("setup")
        hosts = TwoHosts(scratch, url, a, b, scratch / "logs" / "director.jsonl")
        stack.callback(hosts.stop)
        hosts.create_fleet()
        hosts.start_relay_a()
        if relay_b_in_pane:
            hosts.start_relay_b()
        else:
            hosts.start_relay_b_under_nohup()
        yield hosts

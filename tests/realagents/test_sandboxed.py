"""CAFleet run from inside the real Codex sandbox, as a Codex Director's or member's tool call
runs it: its own pid namespace, so the host's /proc is not there to read.

What a pane runs is learned from the multiplexer's side (the tmux server reads /proc for
CAFleet), and the monitor loop's liveness from a lock every process of the host can test,
whatever its pid namespace.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from cafleet.adapters.runtime.locks import runtime_directory
from realagents.conftest import AgentTmux
from realagents.fleet import PROMPT, Fleet
from realagents.installed import require_agent
from realagents.sandbox import CodexSandbox, stop

pytestmark = [pytest.mark.realagent, pytest.mark.tmux, pytest.mark.slow]
NORMAL_START = 60.0  # well under the 90 s after which a start that never looked ready fails


@pytest.fixture
def sandbox(
    fleet: Fleet, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, request: Any
) -> CodexSandbox:
    """The sandbox of a Codex member's tool calls, with CAFleet's runtime directory where
    nothing but CAFleet's own grant makes it writable (as in `/run/user/<uid>`), or (the
    test's parameter "beside-the-database") where the database's grant does too."""
    codex = require_agent("codex")
    where = getattr(request, "param", "alone")
    runtime = tmp_path / "run" if where == "beside-the-database" else tmp_path_factory.mktemp("run")
    runtime.mkdir(mode=0o700, exist_ok=True)
    runtime.chmod(0o700)
    fleet.env["XDG_RUNTIME_DIR"] = str(runtime)
    # A sandbox cannot create a directory it was granted: CAFleet's exists once any command
    # outside needed it (a send, a member), as a Director's `--add-dir` expects.
    runtime_directory(fleet.env)
    return CodexSandbox.of_member(codex, fleet.env, fleet.workdir)


RUNTIME_PLACES = pytest.mark.parametrize("sandbox", ["alone", "beside-the-database"], indirect=True)


def ran(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done.stdout


def send_from(sandbox: CodexSandbox, fleet: Fleet, member: int, text: str) -> tuple[int, str]:
    """The Director's `message send` run in the sandbox: the task id and what it printed."""
    out = ran(sandbox.cafleet(
        "message", "send", "--fleet-id", str(fleet.fleet_id), "--agent-id",
        str(fleet.director), "--to", str(member), "--text", text,
    ))  # fmt: skip
    found = re.search(r"^\[(\d+) \|", out, re.M)
    assert found is not None, out
    return int(found.group(1)), out


@RUNTIME_PLACES
def test_a_codex_member_created_from_inside_the_sandbox_is_ready_by_its_own_rule(
    fleet: Fleet, sandbox: CodexSandbox, agent_tmux: AgentTmux
) -> None:
    started = time.monotonic()
    out = ran(sandbox.cafleet(
        "member", "create", "--fleet-id", str(fleet.fleet_id), "--agent-id",
        str(fleet.director), "--name", "boxed", "--description", "codex from the sandbox",
        "--coding-agent", "codex", "--text", PROMPT.format(name="boxed"),
    ))  # fmt: skip
    took = time.monotonic() - started
    member, _, _, pane = out.split()

    shown = fleet.json("member", "show", "--fleet-id", str(fleet.fleet_id), "--member-id", member)
    assert shown["placement"]["ready_rule"] == "screen", shown  # Codex's own rule, not a wait
    assert took < NORMAL_START, took
    assert pane.removeprefix("pane=") in agent_tmux.panes()  # not rolled back


@RUNTIME_PLACES
def test_a_message_from_inside_the_sandbox_to_a_codex_pane_is_announced(
    fleet: Fleet, sandbox: CodexSandbox, agent_tmux: AgentTmux
) -> None:
    """Typed, which is where the pane's foreground is checked: Codex runs as `node`, whose
    command line must be read to tell it from a bare node."""
    fleet.env["CAFLEET_CHANNELS_CODEX"] = "keys"
    member, _ = fleet.create_member("codex", "typed")
    fleet.wait_for_status(member, "idle")

    task, out = send_from(sandbox, fleet, member, "ping 7")
    assert "skipped" not in out, out
    fleet.wait_for_texts({"pong 7"})
    assert fleet.attempts(task) == [("keys", "sent")]


def test_a_message_sent_from_inside_the_sandbox_waits_out_a_dialog_and_is_announced_after_it(
    fleet: Fleet, sandbox: CodexSandbox, agent_tmux: AgentTmux
) -> None:
    """The message meets the member's permission dialog and is held; what looks at the pane
    again must outlive the sandboxed call that sent it (it is started by the tmux server)."""
    fleet.env["CAFLEET_CHANNELS_CODEX"] = "keys"
    fleet.env["CAFLEET_AGENT_ARGS_CODEX"] = "--ask-for-approval on-request"
    member, pane = fleet.create_member("codex", "asking")
    fleet.wait_for_status(member, "idle")
    marker = fleet.workdir / "approved.txt"
    fleet.send(member, f"RUN: ESCALATE touch {marker}")
    dialog = r"(?i)would you like to run the following command"
    agent_tmux.wait_for_screen(pane, dialog, timeout=90)

    # as in a Codex pane: $TMUX names the server's pid, which the sandbox cannot see
    server = agent_tmux.run("display-message", "-p", "#{pid}").strip()
    in_pane = {**fleet.env, "TMUX": f"{agent_tmux.socket},{server},0"}
    task, _ = send_from(replace(sandbox, env=in_pane), fleet, member, "ping 9")
    assert [state for _, state in fleet.attempts(task)] == ["skipped", "pending"]

    time.sleep(3)  # the sandboxed call is over, and the dialog still there
    assert re.search(dialog, agent_tmux.capture(pane))
    agent_tmux.run("send-keys", "-t", pane, "Escape")
    # (its poll still lists the declined order too: the model's answer asks again)
    agent_tmux.wait_for_screen(pane, rf"\[cafleet msg {task} from", timeout=60)
    assert fleet.announced_once(task) == "keys"
    assert not marker.exists()


NATIVE = {"claude": "claude-hook", "codex": "codex-queue", "opencode": "opencode-http"}


@pytest.mark.parametrize("agent", sorted(NATIVE))
def test_a_message_from_inside_the_sandbox_takes_the_members_own_channel(
    agent: str, fleet: Fleet, sandbox: CodexSandbox
) -> None:
    """Claude Code's waiting hook (told by its lock: the sandbox sees no pid of it), `codex
    queue` and OpenCode's server, all reached from a Codex tool call."""
    require_agent(agent)
    member, _ = fleet.create_member(agent, "native")
    fleet.wait_for_status(member, "idle")

    task, _ = send_from(sandbox, fleet, member, "ping 8")
    fleet.wait_for_texts({"pong 8"})
    assert fleet.attempts(task) == [(NATIVE[agent], "sent")]


def test_inside_the_sandbox_only_the_agent_in_front_counts_as_the_agent(
    fleet: Fleet, sandbox: CodexSandbox, agent_tmux: AgentTmux, tmp_path: Path
) -> None:
    """The command lines read for CAFleet from the tmux server's side keep the rule: a REPL,
    inline code or another script in front of a runtime is not the agent; a shell never is."""
    script = tmp_path / "other.js"
    script.write_text("setInterval(() => {}, 1000)\n")
    panes = {
        "repl": agent_tmux.spawn(["node", "-i"], tmp_path),
        "inline": agent_tmux.spawn(["node", "-e", "setInterval(() => {}, 1000)"], tmp_path),
        "other": agent_tmux.spawn(["node", str(script)], tmp_path),
        "shell": agent_tmux.spawn(["bash", "--norc", "-i"], tmp_path),
        "codex": agent_tmux.spawn(
            ["node", require_agent("codex"), "sandbox", "--", "sleep", "60"], tmp_path
        ),
    }
    time.sleep(1.0)  # every program started
    probe = (
        "import json, sys\n"
        "from cafleet.adapters.tmux.driver import TmuxPaneDriver\n"
        "from cafleet.domain.agents.registry import PROFILES\n"
        "from cafleet.domain.panes import agent_check\n"
        "from cafleet.domain.placement import CodingAgent\n"
        "codex = PROFILES[CodingAgent.CODEX]\n"
        "infos = TmuxPaneDriver(sys.argv[1]).panes_of(sys.argv[2:])\n"
        "print(json.dumps({p: [i.command, i.argv,"
        " agent_check(i, codex.foreground_names, scripts=codex.script_names)]"
        " for p, i in infos.items() if i}))\n"
    )
    done = subprocess.run(
        sandbox.argv(sys.executable, "-c", probe, agent_tmux.socket, *panes.values()),
        env=dict(sandbox.env), cwd=sandbox.cwd, capture_output=True, text=True, timeout=60,
        check=False,
    )  # fmt: skip
    seen: dict[str, Any] = json.loads(ran(done))
    verdicts = {name: seen[pane][2] for name, pane in panes.items() if pane in seen}
    assert seen[panes["repl"]][1] == ["node", "-i"], seen
    assert verdicts == {
        "repl": "not-agent:node",
        "inline": "not-agent:node",
        "other": "not-agent:node",
        "shell": "not-agent:bash",
        "codex": None,
    }, seen


def monitor_status(run: Any, fleet: Fleet) -> dict[str, Any]:
    done = run("--json", "monitor", "status", "--fleet-id", str(fleet.fleet_id))
    runtime: dict[str, Any] = json.loads(ran(done))["runtime"]
    return runtime


def host_cli(fleet: Fleet) -> Any:
    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "cafleet", *args], env=fleet.env, cwd=fleet.workdir,
            capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip

    return run


def wait_started(loop: subprocess.Popen[str]) -> None:
    """Until the loop says it started (warnings may come first); fails if it ends instead."""
    assert loop.stdout is not None
    said = []
    for line in loop.stdout:
        said.append(line)
        if "monitor loop started" in line:
            return
    raise AssertionError("".join(said))


def test_a_monitor_started_inside_the_sandbox_is_judged_alive_and_dead_from_outside(
    fleet: Fleet, sandbox: CodexSandbox
) -> None:
    host = host_cli(fleet)
    loop = sandbox.start("monitor", "start", "--fleet-id", str(fleet.fleet_id), "--tick", "1")
    try:
        wait_started(loop)
        seen = monitor_status(host, fleet)
        assert seen["running"], seen
        # the pid means the loop on the host, where `kill <pid>` is typed
        cmdline = Path(f"/proc/{seen['pid']}/cmdline").read_bytes().split(b"\0")
        assert b"monitor" in cmdline and b"start" in cmdline, (seen, cmdline)
        # another sandbox (its own pid namespace) sees it running too, and cannot start a second
        assert monitor_status(sandbox.cafleet, fleet)["running"]
        second = sandbox.cafleet("monitor", "start", "--fleet-id", str(fleet.fleet_id))
        assert second.returncode != 0 and "already running" in second.stderr, second
    finally:
        stop(loop)  # as Codex ends a tool call: the sandbox and all in it
    deadline = time.monotonic() + 3  # no waiting for the heartbeat to go stale (15 s)
    while (seen := monitor_status(host, fleet))["running"]:
        assert time.monotonic() < deadline, seen
        time.sleep(0.2)


def test_a_monitor_running_outside_is_seen_from_inside_the_sandbox(
    fleet: Fleet, sandbox: CodexSandbox
) -> None:
    host = host_cli(fleet)
    loop = subprocess.Popen(
        [sys.executable, "-m", "cafleet", "monitor", "start", "--fleet-id", str(fleet.fleet_id)],
        env=fleet.env, cwd=fleet.workdir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True,
    )  # fmt: skip
    try:
        wait_started(loop)
        inside = monitor_status(sandbox.cafleet, fleet)
        assert inside["running"], inside
        second = sandbox.cafleet("monitor", "start", "--fleet-id", str(fleet.fleet_id))
        assert second.returncode != 0 and "already running" in second.stderr, second
        assert loop.poll() is None  # the loop outside was not displaced
        assert monitor_status(host, fleet)["pid"] == loop.pid
    finally:
        loop.terminate()
        loop.wait(timeout=10)

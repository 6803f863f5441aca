"""The delivery ladder and agent status with the real Claude Code and OpenCode TUIs.

Claude Code takes mail through its waiting Stop hook, Codex through `codex queue` and
OpenCode through its own HTTP server, with nothing typed into the pane; a busy member gets it
at its turn boundary without its tool being interrupted; with the native channel switched
off, keystrokes deliver it and the ledger says so.
"""

from __future__ import annotations

import re
import shlex
import sys
import time
from typing import Any

import pytest

from realagents.fleet import REPLY_TIMEOUT, Fleet
from realagents.installed import require_agent

pytestmark = [pytest.mark.realagent, pytest.mark.tmux, pytest.mark.slow]

NATIVE = {"claude": "claude-hook", "codex": "codex-queue", "opencode": "opencode-http"}
WATCHER = shlex.join([sys.executable, "-m", "cafleet.demo_agent"])  # the built-in demo agent
PREVIEW_TYPED = re.compile(r"^\s*(?:❯|>|┃)\s*\[cafleet msg", re.M)  # a preview in a prompt row


def sent_task(fleet: Fleet, member: int, text: str) -> int:
    out = fleet.send(member, text)
    return int(re.search(r"^\[(\d+) \|", out, re.M).group(1))  # type: ignore[union-attr]


@pytest.mark.parametrize("agent", sorted(NATIVE))
def test_an_idle_member_takes_mail_through_its_own_channel(
    agent: str, fleet: Fleet, agent_tmux: Any
) -> None:
    require_agent(agent)
    member, pane = fleet.create_member(agent, "native")
    fleet.wait_for_status(member, "idle")  # its first turn is over

    task = sent_task(fleet, member, "ping 1")
    fleet.wait_for_texts({"pong 1"})

    assert fleet.attempts(task) == [(NATIVE[agent], "sent")]  # no keystroke attempt at all
    if agent == "claude":
        fleet.wait_confirmed(task)  # the waiting hook took it
    if agent == "claude":  # Codex and OpenCode show a handed-over prompt like a typed one
        assert not PREVIEW_TYPED.search(agent_tmux.capture(pane)), agent_tmux.capture(pane)
    fleet.wait_for_status(member, "idle")


@pytest.mark.parametrize("agent", sorted(NATIVE))
def test_a_busy_member_takes_mail_at_its_turn_boundary_without_interruption(
    agent: str, fleet: Fleet, agent_tmux: Any
) -> None:
    require_agent(agent)
    member, pane = fleet.create_member(agent, "busy")
    fleet.wait_for_status(member, "idle")
    ident = f"--fleet-id {fleet.fleet_id} --agent-id {member}"
    fleet.send(member, f"RUN: sleep 15 && cafleet message send {ident} --to {fleet.director}"
                       " --text slept-ok")  # fmt: skip
    agent_tmux.wait_for_screen(pane, r"sleep 15", timeout=REPLY_TIMEOUT)
    fleet.wait_for_status(member, "working", timeout=10)

    task = sent_task(fleet, member, "ping 2")
    texts = fleet.wait_for_texts({"slept-ok", "pong 2"})

    assert texts.count("slept-ok") == 1  # the running tool finished: nothing interrupted it
    assert texts.count("pong 2") == 1
    assert fleet.attempts(task) == [(NATIVE[agent], "sent")]
    fleet.wait_for_status(member, "idle")


@pytest.mark.parametrize("agent", sorted(NATIVE))
def test_with_the_native_channel_off_keystrokes_deliver_and_the_ledger_names_them(
    agent: str, fleet: Fleet, agent_tmux: Any
) -> None:
    require_agent(agent)
    fleet.env[f"CAFLEET_CHANNELS_{agent.upper()}"] = "keys"
    member, pane = fleet.create_member(agent, "typed")
    time.sleep(3)  # let the first turn end, so the preview is typed into an idle composer

    task = sent_task(fleet, member, "ping 3")
    fleet.wait_for_texts({"pong 3"})

    assert fleet.attempts(task) == [("keys", "sent")]
    if agent == "claude":  # its prompt hook saw the typed preview: a receipt
        assert PREVIEW_TYPED.search(agent_tmux.capture(pane)), agent_tmux.capture(pane)
        fleet.wait_confirmed(task)


def test_a_claude_member_asking_permission_is_waiting_and_wakes_the_watcher(
    fleet: Fleet, agent_tmux: Any
) -> None:
    """With a stricter permission mode, a tool outside the allow rules opens Claude Code's
    permission dialog: the member's status says `waiting`, the monitor's next tick names it
    (`status:blocked`), and nothing is typed into the dialog."""
    require_agent("claude")
    fleet.env["CAFLEET_AGENT_ARGS_CLAUDE"] = "--permission-mode default"
    fleet.cli(
        "member", "create", "--fleet-id", str(fleet.fleet_id), "--agent-id",
        str(fleet.director), "--name", "watch", "--description", "watcher", "--role", "monitor",
        "--coding-agent", "custom", "--agent-command", WATCHER, "--text", "Watch the fleet.",
    )  # fmt: skip
    member, pane = fleet.create_member("claude", "asker")
    fleet.wait_for_status(member, "idle")
    marker = fleet.workdir / "asked.txt"
    fleet.send(member, f"RUN: touch {marker}")
    agent_tmux.wait_for_screen(pane, r"(?i)do you want to proceed", timeout=REPLY_TIMEOUT)

    fleet.wait_for_status(member, "waiting", timeout=30)  # Claude notifies after a few seconds
    monitor = fleet.components().monitoring()
    monitor.claim(fleet.fleet_id, 5)
    try:
        report = monitor.tick(fleet.fleet_id)
    finally:
        monitor.release(fleet.fleet_id)
    reasons = {d.agent_id: d.reasons for d in report.due}
    assert "status:blocked" in reasons.get(member, ()), report
    assert report.woke, report  # the wake line was typed into the watcher's pane

    task = int(re.search(r"^\[(\d+) \|", fleet.send(member, "ping 9"), re.M).group(1))  # type: ignore[union-attr]
    assert fleet.attempts(task)[-1][1] in {"sent", "skipped"}
    assert not marker.exists()  # the dialog was not answered by anything CAFleet typed

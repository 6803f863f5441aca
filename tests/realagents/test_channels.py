"""The delivery ladder and agent status with the real Claude Code, Codex and OpenCode TUIs.

Claude Code takes mail through its waiting Stop hook, Codex through `codex queue` and
OpenCode through its own HTTP server, with nothing typed into the pane; a busy member gets it
at its turn boundary without its tool being interrupted; with the native channel switched
off, keystrokes deliver it and the ledger says so.
"""

from __future__ import annotations

import json
import re
import shlex
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from cafleet.adapters.agents.opencode import preset_text
from realagents.fleet import REPLY_TIMEOUT, Fleet
from realagents.installed import require_agent

pytestmark = [pytest.mark.realagent, pytest.mark.tmux, pytest.mark.slow]

NATIVE = {"claude": "claude-hook", "codex": "codex-queue", "opencode": "opencode-http"}
WATCHER = shlex.join([sys.executable, "-m", "cafleet.demo.agent"])  # the built-in demo agent
PREVIEW_TYPED = re.compile(r"^\s*(?:❯|>|┃)\s*\[cafleet msg", re.M)  # a preview in a prompt row


@pytest.mark.parametrize("agent", sorted(NATIVE))
def test_an_idle_member_takes_mail_through_its_own_channel(
    agent: str, fleet: Fleet, agent_tmux: Any
) -> None:
    require_agent(agent)
    member, pane = fleet.create_member(agent, "native")
    fleet.wait_for_status(member, "idle")  # its first turn is over

    task = fleet.send_task(member, "ping 1")
    fleet.wait_for_texts({"pong 1"})

    assert fleet.attempts(task) == [(NATIVE[agent], "sent")]  # no keystroke attempt at all
    if agent != "claude":  # Claude's prompt hook reports it; the others' records are read
        fleet.tick_monitor()
    fleet.wait_confirmed(task)
    if agent == "claude":  # Codex and OpenCode show a handed-over prompt like a typed one
        assert not PREVIEW_TYPED.search(agent_tmux.capture(pane)), agent_tmux.capture(pane)
    fleet.wait_for_status(member, "idle")


def busy_member(fleet: Fleet, agent_tmux: Any, agent: str, name: str) -> int:
    """A member whose turn runs a 15 s tool that ends by sending `slept-ok`."""
    member, pane = fleet.create_member(agent, name)
    fleet.wait_for_status(member, "idle")
    ident = f"--fleet-id {fleet.fleet_id} --agent-id {member}"
    fleet.send(member, f"RUN: sleep 15 && cafleet message send {ident} --to {fleet.director}"
                       " --text slept-ok")  # fmt: skip
    agent_tmux.wait_for_screen(pane, r"sleep 15", timeout=REPLY_TIMEOUT)
    return member


@pytest.mark.parametrize("agent", sorted(NATIVE))
def test_a_busy_member_takes_mail_at_its_turn_boundary_without_interruption(
    agent: str, fleet: Fleet, agent_tmux: Any
) -> None:
    require_agent(agent)
    member = busy_member(fleet, agent_tmux, agent, "busy")
    fleet.wait_for_status(member, "working", timeout=10)

    task = fleet.send_task(member, "ping 2")
    texts = fleet.wait_for_texts({"slept-ok", "pong 2"})

    assert texts.count("slept-ok") == 1  # the running tool finished: nothing interrupted it
    assert texts.count("pong 2") == 1
    assert fleet.attempts(task) == [(NATIVE[agent], "sent")]
    fleet.wait_for_status(member, "idle")


@pytest.mark.parametrize("agent", sorted(NATIVE))
def test_messages_to_a_busy_member_join_one_announcement_and_all_are_answered(
    agent: str, fleet: Fleet, agent_tmux: Any
) -> None:
    """While the member works, the first message is announced and the next ones join it (the
    agent has not taken it in yet); the poll that follows lists them all."""
    require_agent(agent)
    member = busy_member(fleet, agent_tmux, agent, "burst")

    tasks = [fleet.send_task(member, f"ping {n}") for n in (31, 32, 33)]
    texts = fleet.wait_for_texts({"slept-ok", "pong 31", "pong 32", "pong 33"})

    for n in (31, 32, 33):
        assert texts.count(f"pong {n}") == 1
    last = [fleet.ledger(task)[-1] for task in tasks]
    joined = [row for row in last if (row["error"] or "").startswith("joined:")]
    assert all(row["state"] == "skipped" for row in joined)
    if agent == "claude":  # Claude takes mail and typed text in mid-turn: each has a receipt
        for task, row in zip(tasks, last, strict=True):
            if row not in joined:
                fleet.wait_confirmed(task)
    else:  # Codex and OpenCode hold it until the turn ends: the later ones joined the first
        assert joined, last


@pytest.mark.parametrize("agent", sorted(NATIVE))
def test_with_the_native_channel_off_keystrokes_deliver_and_the_ledger_names_them(
    agent: str, fleet: Fleet, agent_tmux: Any
) -> None:
    require_agent(agent)
    fleet.env[f"CAFLEET_CHANNELS_{agent.upper()}"] = "keys"
    member, pane = fleet.create_member(agent, "typed")
    time.sleep(3)  # let the first turn end, so the preview is typed into an idle composer

    task = fleet.send_task(member, "ping 3")
    fleet.wait_for_texts({"pong 3"})

    assert fleet.attempts(task) == [("keys", "sent")]
    if agent == "claude":
        assert PREVIEW_TYPED.search(agent_tmux.capture(pane)), agent_tmux.capture(pane)
    else:
        fleet.tick_monitor()
    fleet.wait_confirmed(task)  # the agent's own record shows the typed preview taken in


def ask_opencode_before_touch(fleet: Fleet) -> None:
    """The user's own stricter rule in the cafleet agent preset: `touch` asks first."""
    path = Path(fleet.env["XDG_CONFIG_HOME"]) / "opencode" / "agents" / "cafleet.md"
    text = path.read_text() if path.exists() else preset_text()
    _, front, body = text.split("---\n", 2)
    preset = json.loads(front)
    preset["permission"]["bash"]["touch *"] = "ask"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\n{json.dumps(preset, indent=2)}\n---\n{body}")


# how each agent is made to ask a person before a command, and its dialog's words
ASKING = {
    # the member floor allows `touch` (docs/agents.md): an inline interpreter still asks
    "claude": ({"CAFLEET_AGENT_ARGS_CLAUDE": "--permission-mode default"},
               "RUN: python3 -c \"open('{marker}', 'w').close()\"", r"(?i)do you want to proceed"),
    "codex": ({"CAFLEET_AGENT_ARGS_CODEX": "--ask-for-approval on-request"},
              "RUN: ESCALATE touch {marker}", r"(?i)would you like to run the following command"),
    "opencode": ({}, "RUN: touch {marker}", r"(?i)permission required"),
}  # fmt: skip


@pytest.mark.parametrize("agent", sorted(ASKING))
def test_a_member_asking_permission_is_waiting_and_wakes_the_watcher(
    agent: str, fleet: Fleet, agent_tmux: Any
) -> None:
    """With a stricter permission mode, a command outside the rules opens the agent's
    permission dialog: the member's status says `waiting`, the monitor's next tick names it
    (`status:blocked`), and nothing is typed into the dialog."""
    require_agent(agent)
    settings, order, dialog = ASKING[agent]
    fleet.env.update(settings)
    if agent == "opencode":
        ask_opencode_before_touch(fleet)
    fleet.cli(
        "member", "create", "--fleet-id", str(fleet.fleet_id), "--agent-id",
        str(fleet.director), "--name", "watch", "--description", "watcher", "--role", "monitor",
        "--coding-agent", "custom", "--agent-command", WATCHER, "--text", "Watch the fleet.",
    )  # fmt: skip
    member, pane = fleet.create_member(agent, "asker")
    fleet.wait_for_status(member, "idle")
    marker = fleet.workdir / "asked.txt"
    fleet.send(member, order.format(marker=marker))
    agent_tmux.wait_for_screen(pane, dialog, timeout=REPLY_TIMEOUT)

    fleet.wait_for_status(member, "waiting", timeout=30)  # Claude notifies after a few seconds
    report = fleet.tick_monitor()
    reasons = {d.agent_id: d.reasons for d in report.due}
    assert "status:blocked" in reasons.get(member, ()), report
    assert report.woke, report  # the wake line was typed into the watcher's pane

    task = int(re.search(r"^\[(\d+) \|", fleet.send(member, "ping 9"), re.M).group(1))  # type: ignore[union-attr]
    last = fleet.ledger(task)[-1]  # taken by the agent's own channel, or held for the dialog
    assert last["state"] == "sent" or (last["error"] or "").startswith("held:"), last
    assert re.search(dialog, agent_tmux.capture(pane))  # the dialog still waits for its answer
    assert not marker.exists()  # nothing CAFleet typed answered it


def test_a_message_meeting_claudes_permission_dialog_is_announced_once_after_the_answer(
    fleet: Fleet, agent_tmux: Any
) -> None:
    """Claude Code in its default permission mode, reached by keys alone as the Director's
    own pane is (no hook takes its mail): a message sent while its Bash permission dialog
    waits types nothing into it, is held, and is announced once after the user answers."""
    require_agent("claude")
    settings, order, dialog = ASKING["claude"]
    fleet.env.update({**settings, "CAFLEET_CHANNELS_CLAUDE": "keys"})
    member, pane = fleet.create_member("claude", "asker")
    fleet.wait_for_status(member, "idle")
    marker = fleet.workdir / "asked.txt"
    fleet.send(member, order.format(marker=marker))
    agent_tmux.wait_for_screen(pane, dialog, timeout=REPLY_TIMEOUT)

    out = fleet.send(member, "ping 7")
    task = int(re.search(r"^\[(\d+) \|", out, re.M).group(1))  # type: ignore[union-attr]

    assert "preview held: a dialog is on screen (esc to cancel)" in out, out
    time.sleep(3)  # the drainer looks at the pane every second meanwhile
    assert re.search(dialog, agent_tmux.capture(pane))  # nothing CAFleet typed answered it
    assert not marker.exists()
    held = [(row["channel"], row["state"], row["error"]) for row in fleet.ledger(task)]
    assert held == [
        ("keys", "skipped", "dialog:esc to cancel"),
        (None, "pending", "held:nothing:dialog:esc to cancel"),
    ]
    agent_tmux.run("send-keys", "-t", pane, "Enter")  # the user approves (`❯ 1. Yes`)

    texts = fleet.wait_for_texts({"pong 7"})
    assert marker.exists()
    assert fleet.ledger(task)[-1]["channel"] == "keys"
    assert fleet.ledger(task)[-1]["state"] == "sent"
    time.sleep(3)
    assert fleet.texts_to_director().count("pong 7") == texts.count("pong 7") == 1

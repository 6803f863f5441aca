"""The delivery ladder and agent status with the real Claude Code and OpenCode TUIs.

Claude Code takes mail through its waiting Stop hook and OpenCode through its own HTTP
server, with nothing typed into the pane; a busy member gets it at its turn boundary without
its tool being interrupted; with the native channel switched off, keystrokes deliver it and
the ledger says so. Codex has no native channel yet (its rows are `keys`, see test_members).
"""

from __future__ import annotations

import re
import time
from typing import Any

import pytest

from realagents.fleet import REPLY_TIMEOUT, Fleet
from realagents.installed import require_agent

pytestmark = [pytest.mark.realagent, pytest.mark.tmux, pytest.mark.slow]

NATIVE = {"claude": "claude-hook", "opencode": "opencode-http"}
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
    if agent == "claude":  # OpenCode shows a posted prompt like a typed one; Claude does not
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

"""Members whose own record of what they took in is not known when they become ready.

An OpenCode member ready by any rule but `http` learns its session later, from its own
server; a Claude Code member whose hooks never run keeps no record at all. Either way a
message joins an earlier announcement only when the agent's record can really tell whether
that one was taken in: otherwise each message is announced.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from realagents.fleet import REPLY_TIMEOUT, Fleet
from realagents.installed import require_agent

pytestmark = [pytest.mark.realagent, pytest.mark.tmux, pytest.mark.slow]


def waited_opencode_member(fleet: Fleet, name: str) -> tuple[int, str]:
    """An OpenCode member made ready by the bounded wait: its server's session was never
    seen at start."""
    fleet.env["CAFLEET_READY_RULES_OPENCODE"] = "wait"
    member, pane = fleet.create_member("opencode", name)
    shown = fleet.json("member", "show", "--fleet-id", str(fleet.fleet_id), "--member-id",
                       str(member))  # fmt: skip
    assert shown["placement"]["ready_rule"] == "wait", shown
    return member, pane


def test_an_opencode_member_ready_by_the_wait_rule_learns_its_session(fleet: Fleet) -> None:
    require_agent("opencode")
    member, _ = waited_opencode_member(fleet, "waited")

    fleet.wait_for_status(member, "idle")  # its server tells, for the session it learned
    task = fleet.send_task(member, "ping 1")
    fleet.wait_for_texts({"pong 1"})

    assert fleet.attempts(task) == [("opencode-http", "sent")]  # nothing typed
    fleet.tick_monitor()
    fleet.wait_confirmed(task)


def test_a_busy_opencode_member_ready_by_the_wait_rule_answers_its_second_message(
    fleet: Fleet, agent_tmux: Any
) -> None:
    """The member polls the first message, then thinks 10 s before it acks it and runs a
    30 s command: a second message sent then must not join the first (which the agent took
    in already, so no poll will list it), but reach the model and be answered."""
    require_agent("opencode")
    member, pane = waited_opencode_member(fleet, "busy")
    fleet.wait_for_status(member, "idle")
    ident = f"--fleet-id {fleet.fleet_id} --agent-id {member}"
    first = fleet.send_task(
        member,
        f"DELAY: 10\nRUN: sleep 30 && cafleet message send {ident} --to {fleet.director}"
        " --text slept-ok",
    )
    agent_tmux.wait_for_screen(pane, r"message poll", timeout=REPLY_TIMEOUT)
    time.sleep(4)  # the poll listed the first message; the model thinks before acking it

    second = fleet.send_task(member, "ping 2")
    texts = fleet.wait_for_texts({"slept-ok", "pong 2"}, timeout=REPLY_TIMEOUT + 40)

    assert texts.count("slept-ok") == 1 and texts.count("pong 2") == 1
    assert fleet.attempts(first) == [("opencode-http", "sent")]
    assert fleet.attempts(second) == [("opencode-http", "sent")]  # announced, not joined
    fleet.tick_monitor()
    fleet.wait_confirmed(second)


def test_a_claude_member_whose_hooks_are_off_has_each_message_announced(
    fleet: Fleet, agent_home: Any
) -> None:
    """With `disableAllHooks` in the user's settings no hook reports anything, so nothing
    can tell whether an announcement was taken in: every message is typed, none joins."""
    require_agent("claude")
    (agent_home.home / ".claude" / "settings.json").write_text(
        json.dumps({"disableAllHooks": True})
    )
    member, _ = fleet.create_member("claude", "hookless")
    time.sleep(3)  # let the first turn end, so the previews are typed into an idle composer

    tasks = [fleet.send_task(member, f"ping {n}") for n in (41, 42, 43)]
    fleet.wait_for_texts({"pong 41", "pong 42", "pong 43"})

    assert [fleet.attempts(task) for task in tasks] == [[("keys", "sent")]] * 3
    listed = fleet.json("member", "list", "--fleet-id", str(fleet.fleet_id))
    row = next(r for r in listed if r["agent_id"] == member)
    assert (row["agent_status"], row["agent_status_note"]) == ("unknown", "hooks off"), row

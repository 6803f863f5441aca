"""How `member create` waits for a member's agent on a real tmux server: the readiness rules,
an agent that dies at once, start-up dialogs, and messages sent while a member starts.

Claude Code members run a stand-in (`PaneFleet.use_fake_claude`): the demo agent behind
Claude Code's command line, reporting its prompt through the hook settings CAFleet hands it.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from panes_support import Member, PaneFleet, Result, wait_until

from cafleet.domain.agents.claude import CLAUDE_FLOOR

pytestmark = pytest.mark.tmux

DIALOG = "do you want to proceed"
# A custom agent that shows a shell for two seconds before the demo agent takes over: a window
# in which the member is registered, its pane recorded, and its agent not yet ready. The
# shell then runs this script again, which the agent check knows as the agent.
SLOW_START = """#!{python}
import os, sys

if os.environ.get("SLOW_START_SHELL") != "done":
    os.environ["SLOW_START_SHELL"] = "done"
    script = 'sleep 2; exec "$0" "$1" "$2"'
    os.execvp("sh", ["sh", "-c", script, sys.executable, sys.argv[0], sys.argv[-1]])
from cafleet.demo import agent as demo_agent

sys.exit(demo_agent.main([sys.argv[-1]]))
"""


def members_dir(fleet: PaneFleet) -> Path:
    return fleet.tmp / "run" / "cafleet" / "members"


def assert_rolled_back(fleet: PaneFleet, agent_id: int) -> None:
    [agent] = fleet.rows("SELECT status FROM agents WHERE agent_id = ?", agent_id)
    assert agent["status"] == "deregistered"
    assert fleet.rows("SELECT * FROM agent_placements WHERE agent_id = ?", agent_id) == []
    assert fleet.rows("SELECT * FROM monitor_config WHERE agent_id = ?", agent_id) == []
    assert fleet.ok("member", "list", "--fleet-id", str(fleet.fleet_id)) == "0 members.\n"
    assert set(fleet.tmux.panes()) == {fleet.director_pane}  # its pane was closed
    assert not members_dir(fleet).exists() or list(members_dir(fleet).iterdir()) == []


def next_agent_id(fleet: PaneFleet) -> int:
    return int(fleet.rows("SELECT max(agent_id) AS top FROM agents")[0]["top"]) + 1


# --------------------------------------------------------------------------- failed starts


def test_an_agent_that_exits_at_once_fails_member_create_with_its_last_words(
    pane_fleet: PaneFleet,
) -> None:
    fleet = pane_fleet
    agent_id = next_agent_id(fleet)
    # the prompt is appended as the last word ($0 of the script)
    dying = ["sh", "-c", "echo boom; echo last words >&2; exit 3"]

    result = fleet.member_create("doomed", *fleet.custom_options(dying))

    assert (result.code, result.stdout) == (1, ""), result
    first, *rest = result.stderr.splitlines()
    assert first == (
        "Error: custom did not start: the agent exited with status 3 before taking its first"
        f" prompt. Rolled back registration of {agent_id}."
    )
    assert re.fullmatch(r"Last lines of pane %\d+:", rest[0]), result.stderr
    shown = rest[1:]
    assert all(line.startswith("  | ") for line in shown), result.stderr
    assert shown[:2] == ["  | boom", "  | last words"]
    # the launcher's own word on the exit, kept on screen until CAFleet closed the pane
    assert re.fullmatch(r"  \| cafleet: \S*sh exited with status 3 during start-up", shown[-1])
    assert_rolled_back(fleet, agent_id)


def test_an_unknown_program_fails_before_anything_is_registered(pane_fleet: PaneFleet) -> None:
    fleet = pane_fleet
    agent_id = next_agent_id(fleet)

    result = fleet.member_create("ghost", *fleet.custom_options(["no-such-agent-program"]))

    assert result.code == 1, result
    assert result.stderr == "Error: binary no-such-agent-program not found on PATH\n"
    assert fleet.rows("SELECT * FROM agents WHERE agent_id = ?", agent_id) == []
    assert set(fleet.tmux.panes()) == {fleet.director_pane}


# --------------------------------------------------------------------------- readiness


def test_a_claude_member_is_ready_when_its_hook_reports_the_prompt(
    pane_fleet: PaneFleet,
) -> None:
    fleet = pane_fleet
    fleet.use_fake_claude()
    prompt = "Member {agent_id}: report to {director_agent_id}."

    member = fleet.create_claude_member("worker", prompt=prompt)

    assert member.log is not None
    argv = json.loads(Path(f"{member.log}.argv").read_text())
    settings = argv[argv.index("--settings") + 1]
    rendered = f"Member {member.agent_id}: report to {fleet.director}."
    assert argv == [
        "--permission-mode", "dontAsk", "--allowedTools", ",".join(CLAUDE_FLOOR),
        "--name", "worker", "--settings", settings, "--", rendered,
    ]  # fmt: skip
    assert Path(settings).parent.parent == members_dir(fleet)
    [placement] = fleet.rows("SELECT * FROM agent_placements WHERE agent_id = ?", member.agent_id)
    assert (placement["coding_agent"], placement["ready_rule"]) == ("claude", "hook")
    assert placement["ready_at"] is not None
    shown = fleet.json("member", "show", *fleet.target(member.agent_id))
    assert shown["pane_state"] == "running"

    sent = fleet.send(fleet.director, member.agent_id, "first task")
    assert sent["notification"] == {"state": "sent", "transport": "tmux", "reason": None}
    member.wait_event("ack")
    assert member.submits() == [
        f"[cafleet msg {sent['task']['id']} from {fleet.director} {sent['task']['ts']}]\nfirst task"
    ]
    assert member.count("esc") == 0


def test_a_claude_member_without_hooks_is_ready_by_its_prompt_on_screen(
    pane_fleet: PaneFleet,
) -> None:
    fleet = pane_fleet
    fleet.use_fake_claude()
    fleet.env["CAFLEET_READY_RULES_CLAUDE"] = "screen,wait"
    fleet.env["CAFLEET_CHANNELS_CLAUDE"] = "keys"

    member = fleet.create_claude_member("worker", prompt="Review the parser module please.")

    assert member.log is not None
    argv = json.loads(Path(f"{member.log}.argv").read_text())
    assert "--settings" not in argv
    [placement] = fleet.rows(
        "SELECT ready_rule FROM agent_placements WHERE agent_id = ?", member.agent_id
    )
    assert placement["ready_rule"] == "screen"
    assert "Review the parser module please." in fleet.tmux.capture(member.pane)


def test_a_dialog_at_start_fails_member_create_and_is_never_answered(
    pane_fleet: PaneFleet,
) -> None:
    fleet = pane_fleet
    fleet.use_fake_claude()
    agent_id = next_agent_id(fleet)

    result, log = fleet.claude_member_create("asker", "--permission-menu")

    assert (result.code, result.stdout) == (1, ""), result
    first, *rest = result.stderr.splitlines()
    assert first == (
        f"Error: claude did not start: a dialog is on screen ('{DIALOG}') and CAFleet never"
        " answers one: start claude once in this directory, answer it, and retry. Rolled back"
        f" registration of {agent_id}."
    )
    assert re.fullmatch(r"Last lines of pane %\d+:", rest[0]), result.stderr
    assert any("Do you want to proceed?" in line for line in rest[1:]), result.stderr
    events = [json.loads(line)["event"] for line in log.read_text().splitlines()]
    assert "menu-approved" not in events
    assert "menu-dismissed" not in events  # no Esc either
    assert "submit" not in events
    assert_rolled_back(fleet, agent_id)


# --------------------------------------------------------------------------- dialogs later


def show_dialog(fleet: PaneFleet, member: Member) -> None:
    """Make the member's screen end in a Claude Code permission question (the typed command
    spells it with an octal escape, so only its output shows the words)."""
    fleet.ok(
        "member", "exec", *fleet.target(member.agent_id), "printf 'Do you want to pro\\143eed?\\n'"
    )
    fleet.wait_screen(member.pane, "\nDo you want to proceed?\n")


def test_a_dialog_on_screen_withholds_previews_pings_and_exec(pane_fleet: PaneFleet) -> None:
    fleet = pane_fleet
    fleet.use_fake_claude()
    member = fleet.create_claude_member("worker")
    show_dialog(fleet, member)
    submits = member.submits()
    before = fleet.tmux.capture(member.pane)

    out = fleet.ok(
        "message", "send", "--fleet-id", str(fleet.fleet_id), "--agent-id",
        str(fleet.director), "--to", str(member.agent_id), "--text", "are you there?",
    )  # fmt: skip
    assert out.splitlines()[-1] == (
        f"preview held: a dialog is on screen ({DIALOG}); it is announced once, when the pane"
        " is clear (`message show --full` tells the outcome)"
    )
    sent = fleet.send(fleet.director, member.agent_id, "again")
    assert sent["notification"] == {  # behind the held one, never typed into the dialog
        "state": "pending",
        "transport": None,
        "reason": "queued",
    }
    for verb, what in (("ping", "the poll-trigger keystroke"), ("exec", "the shell command")):
        extra = ("echo hi",) if verb == "exec" else ()
        refused = fleet.run("member", verb, *fleet.target(member.agent_id), *extra)
        assert (refused.code, refused.stdout) == (1, ""), refused
        assert refused.stderr == (
            f"Error: {what} was not typed into pane {member.pane} (claude): a dialog is on"
            f" screen ({DIALOG}).\n"
        )

    assert fleet.tmux.capture(member.pane) == before  # not a key reached the pane
    assert member.submits() == submits
    assert member.count("esc") == 0


def test_a_preview_that_quotes_a_dialog_is_still_submitted(pane_fleet: PaneFleet) -> None:
    fleet = pane_fleet
    fleet.use_fake_claude()
    member = fleet.create_claude_member("worker")

    quoted = fleet.send(
        fleet.director, member.agent_id, "The installer asked: Do you want to proceed?"
    )

    # the preview's own words in the composer are not a dialog: Enter is pressed
    assert quoted["notification"]["state"] == "sent"
    member.wait_event("submit", count=1)


# --------------------------------------------------------------------------- while starting


def test_a_message_sent_while_a_member_starts_is_delivered_once_it_is_ready(
    pane_fleet: PaneFleet,
) -> None:
    fleet = pane_fleet
    script = fleet.tmp / "slow-start"
    script.write_text(SLOW_START.replace("{python}", sys.executable), encoding="utf-8")
    script.chmod(0o755)
    log = fleet.tmp / "late.jsonl"
    creating = fleet.popen(
        "member", "create", "--fleet-id", str(fleet.fleet_id), "--agent-id",
        str(fleet.director), "--name", "late", "--description", "starts slowly",
        "--coding-agent", "custom", "--agent-command", str(script),
        "--text", "You start slowly.", env={"CAFLEET_DEMO_LOG": str(log)},
    )  # fmt: skip

    def starting() -> int | None:
        rows = fleet.rows(
            "SELECT p.agent_id, p.mux_pane_id, p.ready_at FROM agent_placements p"
            " JOIN agents a ON a.agent_id = p.agent_id WHERE a.name = 'late'"
        )
        if rows and rows[0]["mux_pane_id"] and rows[0]["ready_at"] is None:
            return int(rows[0]["agent_id"])
        assert creating.poll() is None, creating.communicate()
        return None

    agent_id = wait_until(starting, "the member's pane recorded before it is ready")
    assert fleet.json("member", "show", *fleet.target(agent_id))["pane_state"] == "starting"

    sent = fleet.send(fleet.director, agent_id, "welcome aboard")  # waits for the start

    out, err = creating.communicate(timeout=120)
    assert (creating.returncode, err) == (0, ""), (out, err)
    assert out.split()[:2] == [str(agent_id), "late"]
    assert sent["notification"] == {"state": "sent", "transport": "tmux", "reason": None}
    [placement] = fleet.rows("SELECT * FROM agent_placements WHERE agent_id = ?", agent_id)
    assert placement["ready_rule"] == "wait"
    delivery = fleet.delivery(sent["task"]["id"])
    assert delivery["attempted_at"] >= placement["ready_at"]

    member = Member(agent_id, "late", placement["mux_pane_id"], log, Result(0, out, err))
    fleet.members.append(member)
    member.wait_event("ack")
    header = f"[cafleet msg {sent['task']['id']} from {fleet.director} {sent['task']['ts']}]"
    assert member.submits() == [f"{header} welcome aboard"]  # once, and on its own


# --------------------------------------------------------------------------- closed panes


def test_member_list_shows_a_member_whose_agent_exited_as_pane_gone(
    pane_fleet: PaneFleet,
) -> None:
    fleet = pane_fleet
    member = fleet.create_member("worker")
    other = fleet.create_member("other")
    fid = str(fleet.fleet_id)
    assert [m["pane_state"] for m in fleet.json("member", "list", "--fleet-id", fid)] == [
        "running",
        "running",
    ]

    # the agent leaves by itself (a user typed /exit into it): its pane closes
    fleet.tmux.run("send-keys", "-t", member.pane, "-l", "/exit")
    fleet.tmux.run("send-keys", "-t", member.pane, "Enter")
    member.wait_event("exit")
    wait_until(lambda: member.pane not in fleet.tmux.panes(), "the pane to close")

    listing = fleet.ok("member", "list", "--fleet-id", fid).splitlines()
    statuses = {line.split()[0]: line.split()[2] for line in listing[3:]}
    assert statuses == {str(member.agent_id): "pane-gone", str(other.agent_id): "active"}
    assert fleet.ok("member", "show", *fleet.target(member.agent_id)) == (
        f"{member.agent_id} worker pane-gone\n"
    )
    shown = fleet.json("member", "show", *fleet.target(member.agent_id))
    assert (shown["status"], shown["pane_state"]) == ("active", "gone")

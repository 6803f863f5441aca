"""The member pane verbs on a live demo-agent pane: capture, exec, ping, nudge."""

from __future__ import annotations

import hashlib
import re

import pytest
from panes_support import PaneFleet

pytestmark = pytest.mark.tmux

ISO_UTC = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00")


def test_capture_trims_blank_rows_and_keeps_the_last_lines(pane_fleet: PaneFleet) -> None:
    fleet = pane_fleet
    member = fleet.create_member("worker")
    fleet.ok("member", "exec", *fleet.target(member.agent_id), "seq 1 40")
    fleet.wait_screen(member.pane, "\n40\n")

    # The pane is 60 rows high and the output ends well above its bottom, so the last 20
    # rows of the screen are mostly blank: `member capture` trims them before counting.
    height, cursor = fleet.tmux.run(
        "display-message", "-p", "-t", member.pane, "#{pane_height}|#{cursor_y}"
    ).split("|")
    assert int(cursor) < int(height) - 10

    tail = [str(n) for n in range(22, 41)] + [">"]  # the composer line is the last one

    # Printed as captured, ended by one newline so that the next prompt starts a row of its own.
    default = fleet.ok("member", "capture", *fleet.target(member.agent_id))
    assert default.endswith(">\n")
    assert default.split("\n") == [*tail, ""]  # 20 lines by default

    five = fleet.ok("member", "capture", *fleet.target(member.agent_id), "--lines", "5")
    assert five.split("\n") == [*tail[-5:], ""]
    three = fleet.ok("member", "capture", *fleet.target(member.agent_id), "--tail", "3")
    assert three.split("\n") == [*tail[-3:], ""]

    shot = fleet.json("member", "capture", *fleet.target(member.agent_id))
    assert set(shot) == {
        "member_agent_id",
        "pane_id",
        "lines",
        "truncated",
        "content",
        "captured_at",
        "content_sha256",
    }
    assert (shot["member_agent_id"], shot["pane_id"], shot["lines"], shot["truncated"]) == (
        member.agent_id,
        member.pane,
        20,
        False,
    )
    assert shot["content"] == default.removesuffix("\n")
    assert shot["content"].split("\n") == tail
    assert shot["content_sha256"] == hashlib.sha256(shot["content"].encode()).hexdigest()
    assert ISO_UTC.fullmatch(shot["captured_at"])

    # The Director's pane can be captured too (it has a placement).
    fleet.ok("member", "capture", *fleet.target(fleet.director))


def test_exec_types_a_bang_command_and_its_output_appears(pane_fleet: PaneFleet) -> None:
    fleet = pane_fleet
    member = fleet.create_member("worker")

    out = fleet.ok("member", "exec", *fleet.target(member.agent_id), "echo hi")
    assert out == f"Sent bash command 'echo hi' to member worker ({member.pane}).\n"
    member.wait_for(lambda e: e.get("text") == "! echo hi", "the exec submission")
    screen = fleet.wait_screen(member.pane, "\nhi\n")
    assert "SUBMIT:! echo hi\nhi\n" in screen

    quoted = fleet.json("member", "exec", *fleet.target(member.agent_id), "  echo 'it''s'  ")
    assert quoted == {
        "member_agent_id": member.agent_id,
        "pane_id": member.pane,
        "command": "echo 'it''s'",
    }
    fleet.wait_screen(member.pane, "\nits\n")

    # A final `;` is a command separator for tmux unless escaped: it must arrive as typed,
    # and so must a final `\;` (as in `find -exec ... \;`).
    for command, output in (
        ("echo semi; echo colon;", "\nsemi\ncolon\n"),
        ("echo esc \\;", "\nesc ;\n"),
    ):
        fleet.ok("member", "exec", *fleet.target(member.agent_id), command)
        member.wait_for(lambda e, c=command: e.get("text") == f"! {c}", f"! {command}")
        fleet.wait_screen(member.pane, output)

    # Never into a pane that does not run the agent: the Director's shell.
    shell = fleet.tmux.panes()[fleet.director_pane]["command"]
    before = fleet.tmux.capture(fleet.director_pane)
    refused = fleet.run("member", "exec", *fleet.target(fleet.director), "echo hi")
    assert refused.code == 1
    assert refused.stderr == (
        f"Error: the shell command was not typed into pane {fleet.director_pane} (custom):"
        f" pane runs {shell}.\n"
    )
    assert fleet.tmux.capture(fleet.director_pane) == before


def test_exec_longer_than_one_tmux_chunk_arrives_whole(pane_fleet: PaneFleet) -> None:
    fleet = pane_fleet
    member = fleet.create_member("worker")
    # Typed as `! <command>` in chunks of 8 KiB; make the first chunk end with `;`.
    chunk = 8 * 1024
    head = "echo " + "a" * (chunk - len("! ") - len("echo ") - 1) + ";"
    command = head + " echo tail-" + "b" * 3000 + "; echo done-ok"
    assert ("! " + command)[:chunk].endswith(";")

    fleet.ok("member", "exec", *fleet.target(member.agent_id), command)
    [submit] = member.wait_for(lambda e: e["event"] == "submit", "the long submission")
    assert submit["text"] == "! " + command
    fleet.wait_screen(member.pane, "\ndone-ok\n")


def test_ping_types_the_poll_command_without_esc(pane_fleet: PaneFleet) -> None:
    fleet = pane_fleet
    member = fleet.create_member("worker")

    out = fleet.ok("member", "ping", *fleet.target(member.agent_id))
    assert out == f"Pinged member worker ({member.pane}) — poll command submitted.\n"
    poll = f"cafleet message poll --fleet-id {fleet.fleet_id} --agent-id {member.agent_id}"
    member.wait_event("submit")
    assert member.submits() == [poll]
    assert member.count("esc") == 0
    fleet.wait_screen(member.pane, "no pending messages")  # the agent ran the poll

    quiet = fleet.ok("member", "ping", *fleet.target(member.agent_id), "--quiet")
    assert quiet == f"{member.agent_id}\n"
    member.wait_event("submit", count=2)

    # Never into a pane that does not run the agent: the command fails and says why.
    shell = fleet.tmux.panes()[fleet.director_pane]["command"]
    before = fleet.tmux.capture(fleet.director_pane)
    refused = fleet.run("member", "ping", *fleet.target(fleet.director))
    assert (refused.code, refused.stdout) == (1, "")
    assert refused.stderr == (
        "Error: the poll-trigger keystroke was not typed into pane"
        f" {fleet.director_pane} (custom): pane runs {shell}.\n"
    )
    assert fleet.tmux.capture(fleet.director_pane) == before


def test_nudge_is_an_ordinary_message_with_its_preview(pane_fleet: PaneFleet) -> None:
    fleet = pane_fleet
    member = fleet.create_member("worker")

    out = fleet.ok(
        "member",
        "nudge",
        "--fleet-id",
        str(fleet.fleet_id),
        "--agent-id",
        str(fleet.director),
        "--member-id",
        str(member.agent_id),
        "--text",
        "please report your progress",
    )
    match = re.fullmatch(
        rf"Nudged worker \({re.escape(member.pane)}\) — task (\d+) queued,"
        r" preview submitted\.\n",
        out,
    )
    assert match, out
    task_id = int(match.group(1))
    member.wait_event("ack")
    [task] = fleet.rows("SELECT * FROM tasks WHERE task_id = ?", task_id)
    assert (task["type"], task["from_agent_id"], task["to_agent_id"]) == (
        "unicast",
        fleet.director,
        member.agent_id,
    )
    assert task["status_state"] == "completed"  # the agent acknowledged it
    preview = f"[cafleet msg {task_id} from {fleet.director} {task['created_at']}]"
    assert member.submits() == [f"{preview} please report your progress"]
    assert member.count("esc") == 0
    assert fleet.delivery(task_id)["state"] == "sent"

    # A nudge to a pane that runs a shell queues the task and says why nothing was typed.
    shell = fleet.tmux.panes()[fleet.director_pane]["command"]
    refused = fleet.ok(
        "member",
        "nudge",
        "--fleet-id",
        str(fleet.fleet_id),
        "--agent-id",
        str(member.agent_id),
        "--member-id",
        str(fleet.director),
        "--text",
        "hello Director",
    )
    assert re.fullmatch(
        rf"Nudged Director \({re.escape(fleet.director_pane)}\) — task \d+ queued;"
        rf" preview skipped: pane runs {re.escape(shell)}\.\n",
        refused,
    ), refused

"""Held deliveries on a real tmux server: a message that meets the Director's permission
dialog, a tmux call answered after CAFleet's timeout, a tmux server that stalls, and a send
killed between its paste and its Enter. Each message is announced exactly once, after the
pane is clear; nothing is typed into a dialog, and no preview is glued to one left behind.

The agents are the demo agent behind Claude Code's command line (`PaneFleet.use_fake_claude`)
drawing Claude Code's composer (`❯ `) and, on request, its permission dialog, so the Claude
Code profile reads their screens as it reads Claude Code's.
"""

from __future__ import annotations

import shlex
from typing import Any

import pytest
from panes_support import TMUX, Member, PaneFleet, wait_until

pytestmark = pytest.mark.tmux

CLAUDE_LOOK = ("--prompt-mark", "❯")
DIALOG_WORD = "approve-me"
# A tmux that carries out one chosen call and then misbehaves, once (the marker directory):
# `late` answers after CAFleet's 5 s timeout, `stall` stops the server for 6 s around the
# call, `kill` kills its caller (the sending `cafleet` process) right after the call.
MISBEHAVING_TMUX = """#!/bin/sh
real={real}
case " $* " in
*" $LATE_TMUX_CALL "*)
    if mkdir "$LATE_TMUX_MARK" 2>/dev/null; then
        case "$LATE_TMUX_MODE" in
        late) "$real" "$@"; exec sleep 8 ;;
        stall)
            kill -STOP "$LATE_TMUX_SERVER"
            (sleep 6; kill -CONT "$LATE_TMUX_SERVER") </dev/null >/dev/null 2>&1 &
            exec "$real" "$@" ;;
        kill) "$real" "$@"; kill -9 "$PPID"; exit 1 ;;
        esac
    fi ;;
esac
exec "$real" "$@"
"""


def misbehaving_tmux(fleet: PaneFleet, mode: str, call: str) -> dict[str, str]:
    """The environment of a `cafleet` call whose `call` tmux command misbehaves once."""
    bin_dir = fleet.tmp / f"tmux-{mode}"
    bin_dir.mkdir()
    script = bin_dir / "tmux"
    script.write_text(MISBEHAVING_TMUX.replace("{real}", shlex.quote(str(TMUX))), "utf-8")
    script.chmod(0o755)
    return {
        "PATH": f"{bin_dir}:{fleet.env['PATH']}",
        "LATE_TMUX_CALL": call,
        "LATE_TMUX_MODE": mode,
        "LATE_TMUX_MARK": str(fleet.tmp / f"tmux-{mode}.done"),
        "LATE_TMUX_SERVER": fleet.tmux.run("display-message", "-p", "#{pid}"),
    }


def header(sent: dict[str, Any]) -> str:
    task = sent["task"]
    return f"[cafleet msg {task['id']} from {task['from']} {task['ts']}]"


def ledger(fleet: PaneFleet, task_id: int) -> list[tuple[str | None, str, str | None]]:
    rows = fleet.rows(
        "SELECT channel, state, error FROM deliveries WHERE task_id = ? ORDER BY attempt", task_id
    )
    return [(r["channel"], r["state"], r["error"]) for r in rows]


def send_text(fleet: PaneFleet, sender: int, to: int, text: str) -> str:
    """`cafleet message send` in text form; its last line."""
    out = fleet.ok(
        "message", "send", "--fleet-id", str(fleet.fleet_id), "--agent-id", str(sender),
        "--to", str(to), "--text", text,
    )  # fmt: skip
    return out.splitlines()[-1]


def submitted(member: Member, sent: dict[str, Any]) -> list[str]:
    return [text for text in member.submits() if text.startswith(header(sent))]


# --------------------------------------------------------------------------- the dialog


def director_in_claude(fleet: PaneFleet) -> Member:
    """A fleet whose Director is the stand-in Claude Code, started in the first pane by the
    user, and which shows a permission dialog when asked to `approve-me`."""
    script = fleet.use_fake_claude()
    made = fleet.json("fleet", "create", "--name", "t", "--coding-agent", "claude")
    fleet.fleet_id, fleet.director = made["fleet_id"], made["director"]["agent_id"]
    log = fleet.tmp / "director.jsonl"
    flags = shlex.join(["--hold", *CLAUDE_LOOK, "--dialog-on", DIALOG_WORD])
    start = (
        f"CAFLEET_FLEET_ID={fleet.fleet_id} CAFLEET_AGENT_ID={fleet.director}"
        f" CAFLEET_DEMO_LOG={shlex.quote(str(log))} FAKE_CLAUDE_DEMO_FLAGS={shlex.quote(flags)}"
        f" exec {shlex.quote(str(script))} -- director"
    )  # exec: the pane's first process, recorded at fleet create, is the agent's
    fleet.tmux.run("send-keys", "-t", fleet.director_pane, "-l", start)
    fleet.tmux.run("send-keys", "-t", fleet.director_pane, "Enter")
    director = Member(fleet.director, "director", fleet.director_pane, log, made)
    director.wait_event("ready")
    return director


def open_dialog(fleet: PaneFleet, director: Member) -> None:
    """The agent asks for a permission (as for a Bash command of its turn)."""
    fleet.tmux.run("send-keys", "-t", director.pane, "-l", f"run {DIALOG_WORD}")
    fleet.tmux.run("send-keys", "-t", director.pane, "Enter")
    director.wait_event("dialog")
    fleet.wait_screen(director.pane, "Esc to cancel")


def test_a_report_meeting_the_directors_permission_dialog_is_announced_once_after_it(
    bare_pane_fleet: PaneFleet,
) -> None:
    fleet = bare_pane_fleet
    director = director_in_claude(fleet)
    worker = fleet.create_member("worker", "--hold")
    open_dialog(fleet, director)

    report = fleet.send(worker.agent_id, fleet.director, "report: done")
    later = send_text(fleet, worker.agent_id, fleet.director, "report: more")

    assert report["notification"] == {
        "state": "pending",
        "transport": "tmux",
        "reason": "held:nothing:dialog:esc to cancel",
    }
    assert later.startswith("preview queued")
    assert director.count("into-dialog") == 0 and director.submits() == [f"run {DIALOG_WORD}"]
    fleet.tmux.run("send-keys", "-t", director.pane, "1")  # the user answers the dialog

    director.wait_event("submit", count=3)  # the drainer the send started announces both
    first, second = director.submits()[1:]
    assert first == f"{header(report)}\nreport: done"
    assert second.endswith("\nreport: more")
    assert director.count("into-dialog") == 0
    assert ledger(fleet, report["task"]["id"]) == [
        ("keys", "skipped", "dialog:esc to cancel"),
        ("keys", "sent", None),
    ]
    pending = "SELECT 1 FROM deliveries WHERE state = 'pending'"
    wait_until(lambda: not fleet.rows(pending), "no delivery left pending")
    assert len(director.submits()) == 3  # announced once each


# --------------------------------------------------------------------------- late tmux


@pytest.mark.parametrize("mode", ["late", "stall"])
def test_a_paste_answered_after_the_timeout_is_finished_and_the_next_preview_is_apart(
    pane_fleet: PaneFleet, mode: str
) -> None:
    fleet = pane_fleet
    fleet.use_fake_claude()
    worker = fleet.create_claude_member("worker", *CLAUDE_LOOK)

    first = fleet.send(
        fleet.director, worker.agent_id, "first", env=misbehaving_tmux(fleet, mode, "paste-buffer")
    )

    assert first["notification"]["state"] == "pending"
    assert first["notification"]["reason"].endswith("tmux set-buffer timed out after 5s")
    worker.wait_event("ack")  # the drainer finished (or, if it never landed, typed) it
    second = fleet.send(fleet.director, worker.agent_id, "second")
    worker.wait_event("ack", count=2)
    assert worker.submits() == [f"{header(first)}\nfirst", f"{header(second)}\nsecond"]
    rows = ledger(fleet, first["task"]["id"])
    assert ("keys", "failed", "tmux set-buffer timed out after 5s") in rows
    assert rows[-1] == ("keys", "sent", None)
    assert all(channel is not None for channel, _, _ in rows)


def test_a_send_killed_between_paste_and_enter_is_finished_before_the_next_preview(
    pane_fleet: PaneFleet,
) -> None:
    fleet = pane_fleet
    fleet.use_fake_claude()
    worker = fleet.create_claude_member("worker", *CLAUDE_LOOK)

    killed = fleet.run(
        "message", "send", "--fleet-id", str(fleet.fleet_id), "--agent-id",
        str(fleet.director), "--to", str(worker.agent_id), "--text", "first",
        env=misbehaving_tmux(fleet, "kill", "paste-buffer"),
    )  # fmt: skip

    assert killed.code == -9, killed
    fleet.wait_screen(worker.pane, "❯ [cafleet msg")  # its preview, left in the composer
    assert worker.submits() == []
    [first_id] = [
        r["task_id"] for r in fleet.rows("SELECT task_id FROM tasks WHERE text = 'first'")
    ]
    second = fleet.send(fleet.director, worker.agent_id, "second")
    worker.wait_event("ack", count=2)  # its poll lists both

    first_text, *others = worker.submits()
    assert first_text.startswith(f"[cafleet msg {first_id} from {fleet.director} ")
    assert first_text.endswith("]\nfirst")  # alone: nothing glued to it
    assert ledger(fleet, first_id) == [("keys", "sent", None)]  # finished, never typed again
    # the second is typed on its own, or joins the first's announcement (its poll lists both)
    if others:
        assert others == [f"{header(second)}\nsecond"]
    else:
        assert ledger(fleet, second["task"]["id"])[-1][1:] == ("skipped", f"joined:{first_id}")


def test_the_drainer_of_a_dialog_never_answered_ends_with_its_pane(
    bare_pane_fleet: PaneFleet,
) -> None:
    fleet = bare_pane_fleet
    director = director_in_claude(fleet)
    worker = fleet.create_member("worker", "--hold")
    open_dialog(fleet, director)
    report = fleet.send(worker.agent_id, fleet.director, "report")
    assert report["notification"]["state"] == "pending"

    fleet.tmux.run("kill-pane", "-t", director.pane)

    def settled() -> tuple[str | None, str, str | None] | None:
        last = ledger(fleet, report["task"]["id"])[-1]
        return None if last[1] == "pending" else last

    assert wait_until(settled, "the held delivery settled") == ("keys", "skipped", "pane-gone")

"""Message previews typed into live demo-agent panes: one turn per message, never an Esc, the
agent check, the emulated slow composer, a ping-pong, concurrent senders.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from panes_support import SHELL_NAMES, Member, PaneFleet, wait_until

pytestmark = pytest.mark.tmux

HEADER = re.compile(r"\[cafleet msg (\d+) from (\d+) (\S+)\]")


def header(sent: dict[str, Any]) -> str:
    """The preview's first line for a `message send --json` result."""
    task = sent["task"]
    return f"[cafleet msg {task['id']} from {task['from']} {task['ts']}]"


def key_events(member: Member) -> list[str]:
    """The names of the logged events that keystrokes caused (Esc, submissions, exit)."""
    own = {"ready", "ack", "reply", "error", "menu"}
    return [e["event"] for e in member.events() if e["event"] not in own]


def test_two_line_message_arrives_as_one_submitted_turn(pane_fleet: PaneFleet) -> None:
    fleet = pane_fleet
    member = fleet.create_member("worker")

    sent = fleet.send(fleet.director, member.agent_id, "line one\nline two")
    assert sent["notification"] == {"state": "sent", "transport": "tmux", "reason": None}
    assert sent["notification_sent"] is True

    member.wait_event("ack")  # the agent polled and acknowledged the message
    # Exactly one submission: the header, the body with its LF as ⏎, on one line (a custom
    # agent may not have enabled bracketed paste, so no line break is typed).
    assert member.submits() == [f"{header(sent)} line one⏎line two"]
    assert key_events(member) == ["submit"]  # no Esc first: it would interrupt a busy agent
    [ack] = [e for e in member.events() if e["event"] == "ack"]
    assert ack == {"event": "ack", "task_id": sent["task"]["id"], "from": fleet.director}

    row = fleet.delivery(sent["task"]["id"])
    assert (row["state"], row["transport"], row["pane_id"]) == ("sent", "tmux", member.pane)
    [task] = fleet.rows("SELECT status_state FROM tasks WHERE task_id = ?", sent["task"]["id"])
    assert task["status_state"] == "completed"


def test_preview_body_is_sanitized_so_nothing_escapes_the_paste(pane_fleet: PaneFleet) -> None:
    fleet = pane_fleet
    member = fleet.create_member("worker")
    # An attempt to end the bracketed paste early and submit a command of its own.
    text = "run $(date) | tee `x`\tend\x1b[201~\r\n/exit\x07"
    sent = fleet.send(fleet.director, member.agent_id, text)
    assert sent["task"]["text"] == text  # stored verbatim; only the preview is sanitized

    member.wait_event("ack")
    body = "run $\ufe59date) \u2502 tee \u02cbx\u02cb\u23ceend\ufffd[201~\u23ce/exit\ufffd"
    assert member.submits() == [f"{header(sent)} {body}"]
    assert member.count("exit") == 0

    long = "x" * 205
    sent = fleet.send(fleet.director, member.agent_id, long)
    member.wait_event("ack", count=2)
    assert member.submits()[-1] == f"{header(sent)} {'x' * 200}\u2026"


def test_broadcast_pushes_to_every_live_agent_pane(pane_fleet: PaneFleet) -> None:
    fleet = pane_fleet
    alice = fleet.create_member("alice")
    bob = fleet.create_member("bob")
    carol = fleet.create_member("carol")

    out = fleet.ok(
        "message",
        "broadcast",
        "--fleet-id",
        str(fleet.fleet_id),
        "--agent-id",
        str(alice.agent_id),
        "--text",
        "all hands",
    )
    # Recipients: the Director (its pane runs a shell: skipped), bob and carol; not the
    # sender, not the Administrator.
    shell = fleet.tmux.panes()[fleet.director_pane]["command"]
    match = re.fullmatch(
        r"broadcast id=(\d+) recipients=3 delivered=2\n"
        rf"  to {fleet.director}: task (\d+), preview skipped: pane runs {re.escape(shell)}\n"
        rf"  to {bob.agent_id}: task (\d+)\n"
        rf"  to {carol.agent_id}: task (\d+)\n",
        out,
    )
    assert match, out
    summary = int(match.group(1))
    recipients = (fleet.director, bob.agent_id, carol.agent_id)
    printed = dict(zip(recipients, match.groups()[1:], strict=True))
    rows = fleet.rows(
        "SELECT t.task_id, t.to_agent_id, t.created_at, d.state, d.error FROM tasks t"
        " JOIN deliveries d ON d.task_id = t.task_id WHERE t.origin_task_id = ?"
        " AND t.type = 'unicast' ORDER BY t.to_agent_id",
        summary,
    )
    by_recipient = {r["to_agent_id"]: r for r in rows}
    assert set(by_recipient) == {fleet.director, bob.agent_id, carol.agent_id}
    assert {a: str(r["task_id"]) for a, r in by_recipient.items()} == printed
    assert by_recipient[fleet.director]["state"] == "skipped"
    assert by_recipient[fleet.director]["error"].startswith("not-agent:")
    for member in (bob, carol):
        row = by_recipient[member.agent_id]
        assert row["state"] == "sent"
        member.wait_event("ack")
        preview = f"[cafleet msg {row['task_id']} from {alice.agent_id} {row['created_at']}]"
        assert member.submits() == [f"{preview} all hands"]
    assert alice.submits() == []


def test_no_esc_is_typed_before_previews_pings_exec_or_exit(pane_fleet: PaneFleet) -> None:
    fleet = pane_fleet
    member = fleet.create_member("worker")

    sent = fleet.send(fleet.director, member.agent_id, "hello worker")
    member.wait_event("ack")
    fleet.ok("member", "exec", *fleet.target(member.agent_id), "echo hi")
    member.wait_for(lambda e: e.get("text") == "! echo hi", "the exec submission")
    fleet.ok("member", "ping", *fleet.target(member.agent_id))
    member.wait_event("submit", count=3)
    deleted = fleet.ok("member", "delete", *fleet.target(member.agent_id))
    assert deleted.endswith(f"pane_id:   {member.pane} (closed)\n")
    member.wait_event("exit")

    poll = f"cafleet message poll --fleet-id {fleet.fleet_id} --agent-id {member.agent_id}"
    assert member.submits() == [f"{header(sent)} hello worker", "! echo hi", poll, "/exit"]
    assert key_events(member) == [
        "submit",  # preview
        "submit",  # ! echo hi
        "submit",  # poll keystrokes of `member ping`
        "submit",  # /exit
        "exit",
    ]
    assert member.count("esc") == 0
    assert member.events()[-1] == {"event": "exit", "code": 0}


def test_preview_to_a_pane_running_a_shell_types_nothing(pane_fleet: PaneFleet) -> None:
    fleet = pane_fleet
    shell = fleet.tmux.panes()[fleet.director_pane]["command"]
    assert shell in SHELL_NAMES
    before = fleet.ok("member", "capture", *fleet.target(fleet.director))

    sent = fleet.send(fleet.admin, fleet.director, "echo SHOULD-NOT-RUN\nrm -rf nothing")
    assert sent["notification_sent"] is False
    assert sent["notification"] == {
        "state": "skipped",
        "transport": "tmux",
        "reason": f"not-agent:{shell}",
    }
    row = fleet.delivery(sent["task"]["id"])
    assert (row["state"], row["error"]) == ("skipped", f"not-agent:{shell}")

    after = fleet.ok("member", "capture", *fleet.target(fleet.director))
    assert after == before
    assert "cafleet msg" not in fleet.tmux.capture(fleet.director_pane)
    assert "SHOULD-NOT-RUN" not in fleet.tmux.capture(fleet.director_pane)


def test_slow_composer_still_gets_every_message_submitted_with_a_submit_delay(
    pane_fleet: PaneFleet,
) -> None:
    fleet = pane_fleet
    member = fleet.create_member("worker", "--slow-composer", "150")
    delay = {"CAFLEET_SUBMIT_DELAY_CUSTOM": "0.4"}

    expected = []
    for n in range(1, 6):
        sent = fleet.send(fleet.director, member.agent_id, f"message {n}", env=delay)
        assert sent["notification_sent"] is True
        expected.append(f"{header(sent)} message {n}")
        member.wait_event("ack", count=n)  # the agent is idle again before the next one

    assert member.submits() == expected
    assert member.count("enter-dropped") == 0


def test_slow_composer_drops_an_enter_that_follows_the_paste_at_once(
    pane_fleet: PaneFleet,
) -> None:
    fleet = pane_fleet
    member = fleet.create_member("worker", "--slow-composer", "150")
    no_delay = {"CAFLEET_SUBMIT_DELAY_CUSTOM": "0"}

    for n in range(1, 4):
        sent = fleet.send(fleet.director, member.agent_id, f"message {n}", env=no_delay)
        # The ledger cannot see a dropped Enter: every keystroke step was accepted.
        assert sent["notification_sent"] is True
    member.wait_event("enter-dropped")
    assert member.count("menu-approved") == 0


def test_two_demo_agents_play_three_rounds_of_ping_pong(pane_fleet: PaneFleet) -> None:
    fleet = pane_fleet
    alice = fleet.create_member("alice", "--rounds", "3")
    bob = fleet.create_member("bob", "--rounds", "3")

    fleet.send(alice.agent_id, bob.agent_id, "ping 1")

    pair = {alice.agent_id, bob.agent_id}

    def finished() -> list[Any] | None:
        rows = fleet.rows(
            "SELECT task_id, from_agent_id, to_agent_id, text, status_state FROM tasks"
            " WHERE type = 'unicast' ORDER BY task_id"
        )
        done = len(rows) >= 6 and all(r["status_state"] == "completed" for r in rows)
        return rows if done else None

    rows = wait_until(finished, "six acknowledged ping-pong messages", timeout=90)
    assert [r["text"] for r in rows] == ["ping 1", "pong 1", "ping 2", "pong 2", "ping 3", "pong 3"]
    for index, r in enumerate(rows):
        sender, recipient = (alice, bob) if index % 2 == 0 else (bob, alice)
        assert (r["from_agent_id"], r["to_agent_id"]) == (sender.agent_id, recipient.agent_id)
        assert {r["from_agent_id"], r["to_agent_id"]} == pair
        delivery = fleet.delivery(r["task_id"])
        assert (delivery["state"], delivery["pane_id"]) == ("sent", recipient.pane)
    assert [e["text"] for e in alice.events() if e["event"] == "reply"] == ["ping 2", "ping 3"]
    assert [e["text"] for e in bob.events() if e["event"] == "reply"] == [
        "pong 1",
        "pong 2",
        "pong 3",
    ]
    assert alice.count("error") == bob.count("error") == 0


@pytest.mark.slow
def test_twenty_concurrent_senders_pushing_into_one_live_pane(pane_fleet: PaneFleet) -> None:
    fleet = pane_fleet
    member = fleet.create_member("worker")
    procs = [
        fleet.popen(
            "--json",
            "message",
            "send",
            "--fleet-id",
            str(fleet.fleet_id),
            "--agent-id",
            str(fleet.director),
            "--to",
            str(member.agent_id),
            "--text",
            f"concurrent {n}",
        )
        for n in range(20)
    ]
    outputs = [proc.communicate(timeout=120) for proc in procs]

    failures = [
        (proc.returncode, err)
        for proc, (_, err) in zip(procs, outputs, strict=True)
        if proc.returncode != 0 or err
    ]
    assert failures == []
    results = [json.loads(out) for out, _ in outputs]
    # a sender that found the pane busy left its row to the queue's holder, and says so
    reports = {(r["notification"]["state"], r["notification"]["reason"]) for r in results}
    assert reports <= {("sent", None), ("pending", "queued")}
    task_ids = [r["task"]["id"] for r in results]
    assert len(set(task_ids)) == 20
    for task_id in task_ids:
        wait_until(lambda t=task_id: fleet.delivery(t)["state"] != "pending", "delivered")
        row = fleet.delivery(task_id)
        assert (row["state"], row["error"], row["pane_id"]) == ("sent", None, member.pane)
    # Every preview reached the agent intact, one submission each: the per-pane send lock
    # keeps the keystrokes of two senders from interleaving. (The agent polls and ACKs after
    # each submission, so the last ones are logged well after the senders have finished.)
    member.wait_event("submit", count=20, timeout=120)
    texts = member.submits()
    assert len(texts) == 20
    bodies = sorted(text.split("] ", 1)[1] for text in texts)
    assert bodies == sorted(f"concurrent {n}" for n in range(20))
    for text in texts:
        assert HEADER.match(text), text

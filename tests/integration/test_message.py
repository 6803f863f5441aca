"""`cafleet message send/broadcast/poll/ack/cancel/show` end to end."""

from __future__ import annotations

import json
import re
import subprocess
import time
from datetime import UTC, datetime

import pytest
from tests.support.cli_messages import Messages

from cafleet.adapters.store.sqlite.statements import COLUMNS

pytestmark = pytest.mark.both_stores  # and on PostgreSQL (conftest.py)

TS = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00"


@pytest.fixture
def msg(cli, fleet):
    return Messages(cli, fleet)


@pytest.fixture
def director_shell(tmux):
    """What the Director's pane runs in the private tmux server: a shell, never an agent."""
    return tmux.run("display-message", "-p", "-t", tmux.pane_id, "#{pane_current_command}")


# a message's own columns (PostgreSQL's store adds the stored search vector beside them)
MESSAGE_COLUMNS = ", ".join(COLUMNS["tasks"])


def task_row(db, task_id):
    return db.row(f"SELECT {MESSAGE_COLUMNS} FROM tasks WHERE task_id = ?", task_id)


def compact_header(task_id, sender, ts, *segments):
    return "[" + " | ".join([str(task_id), f"from:{sender}", *segments, ts]) + "]"


# --------------------------------------------------------------------------- send


def test_send_text_output_and_storage(msg, fleet, migrated):
    out = msg.ok("send", fleet.director, "--to", fleet.admin, "--text", "hello admin")
    lines = out.splitlines()
    assert lines[0] == "Message sent."
    match = re.fullmatch(rf"\[(\d+) \| from:{fleet.director} \| ({TS})\]", lines[1])
    assert match, lines[1]
    # the Administrator has no pane: the text says so, in words
    assert lines[2:] == ["hello admin", "preview skipped: the recipient has no pane"]
    row = task_row(migrated, int(match[1]))
    assert dict(row) == {
        "task_id": int(match[1]),
        "context_id": fleet.admin,
        "from_agent_id": fleet.director,
        "to_agent_id": fleet.admin,
        "type": "unicast",
        "created_at": match[2],
        "status_state": "input_required",
        "status_timestamp": match[2],
        "origin_task_id": None,
        "text": "hello admin",
        "sender_verified": 0,
        "in_reply_to": None,
        "thread_id": int(match[1]),  # a message that answers none starts its own thread
    }


def test_send_quiet_prints_only_the_task_id(msg, fleet, migrated):
    out = msg.ok("send", fleet.director, "--to", fleet.admin, "--text", "x", "--quiet")
    assert re.fullmatch(r"\d+\n", out)
    assert task_row(migrated, int(out))["text"] == "x"


def test_send_json(msg, fleet, migrated):
    sent = msg.json("send", fleet.director, "--to", fleet.admin, "--text", "hi")
    task = sent["task"]
    assert set(task) == {"id", "from", "ts", "text", "in_reply_to", "thread_id"}
    assert (task["in_reply_to"], task["thread_id"]) == (None, task["id"])
    assert task["from"] == fleet.director
    assert task["text"] == "hi"
    assert task["ts"] == task_row(migrated, task["id"])["status_timestamp"]
    assert sent["notification_sent"] is False
    assert sent["notification"] == {"state": "skipped", "transport": None, "reason": "no-placement"}


def test_send_json_ignores_quiet(msg, fleet):
    sent = msg.json("send", fleet.director, "--to", fleet.admin, "--text", "hi", "--quiet")
    assert sent["task"]["text"] == "hi"


def test_send_json_is_compact(msg, fleet):
    out = msg.cli.ok(
        "--json", *msg.args("send", fleet.director, "--to", fleet.admin, "--text", "é")
    )
    assert ", " not in out
    assert '": ' not in out
    assert '"text":"é"' in out


def test_send_full_text(msg, fleet, director_shell):
    out = msg.ok("send", fleet.admin, "--to", fleet.director, "--text", "full body", "--full")
    lines = out.splitlines()
    assert lines[0] == "Message sent."
    assert re.fullmatch(r"  id:    \d+", lines[1])
    assert lines[2:] == [
        "  state: input_required",
        f"  from:  {fleet.admin}",
        f"  to:    {fleet.director}",
        "  type:  unicast",
        "  text:  full body",
        f"preview skipped: pane runs {director_shell}",  # the Director's pane runs a shell
    ]


def test_send_full_json_has_every_column(msg, fleet, migrated):
    sent = msg.json("send", fleet.admin, "--to", fleet.director, "--text", "t", "--full")
    assert sent["task"] == dict(task_row(migrated, sent["task"]["task_id"]))


def test_send_to_self_is_allowed_and_skipped(msg, fleet, migrated):
    sent = msg.json("send", fleet.director, "--to", fleet.director, "--text", "note to self")
    assert sent["notification"] == {"state": "skipped", "transport": None, "reason": "self"}
    delivery = migrated.row("SELECT * FROM deliveries WHERE task_id = ?", sent["task"]["id"])
    assert delivery["recipient_agent_id"] == fleet.director
    assert delivery["state"] == "skipped"
    assert delivery["error"] == "self"


def test_send_writes_one_ledger_row(msg, fleet, migrated):
    task_id = msg.send(fleet.director, fleet.admin, "ledger")
    [delivery] = migrated.rows("SELECT * FROM deliveries WHERE task_id = ?", task_id)
    task = task_row(migrated, task_id)
    assert delivery["recipient_agent_id"] == fleet.admin
    assert delivery["state"] == "skipped"
    assert delivery["error"] == "no-placement"
    assert delivery["transport"] is None
    assert delivery["created_at"] == task["created_at"]
    assert delivery["attempted_at"] is not None


def test_send_to_a_pending_placement_is_skipped(msg, fleet, add_member, migrated):
    pending = add_member(fleet, "pending", pane_id=None)
    sent = msg.json("send", fleet.director, "--to", pending, "--text", "early")
    assert sent["notification"] == {"state": "skipped", "transport": None, "reason": "pending-pane"}
    assert sent["notification_sent"] is False


def test_send_names_a_skipped_preview_in_words(msg, fleet, add_member, migrated, tmux):
    busy = add_member(fleet, "busy")  # its pane runs `sleep`, not claude
    closed = add_member(fleet, "closed")
    closed_pane = migrated.scalar(
        "SELECT mux_pane_id FROM agent_placements WHERE agent_id = ?", closed
    )
    tmux.run("kill-pane", "-t", closed_pane)

    out = msg.ok("send", fleet.director, "--to", busy, "--text", "are you there?")
    assert out.splitlines()[-2:] == ["are you there?", "preview skipped: pane runs sleep"]
    sent = msg.json("send", fleet.director, "--to", busy, "--text", "again")
    assert sent["notification"] == {
        "state": "skipped",
        "transport": "tmux",
        "reason": "not-agent:sleep",
    }
    out = msg.ok("send", fleet.director, "--to", closed, "--text", "hello?")
    assert out.splitlines()[-1] == "preview skipped: the pane is gone"
    assert msg.ok("send", fleet.director, "--to", busy, "--text", "q", "--quiet").count("\n") == 1


def start_send(cafleet_argv, cli, msg, sender, to, text):
    """`cafleet --json message send` in the background."""
    return subprocess.Popen(
        [*cafleet_argv, "--json", *msg.args("send", sender, "--to", to, "--text", text)],
        env=cli.env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for_pending_delivery(migrated, proc, recipient):
    """The message is stored and its preview waits: a pending ledger row for `recipient`."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        rows = migrated.rows("SELECT state FROM deliveries WHERE recipient_agent_id = ?", recipient)
        if [r["state"] for r in rows] == ["pending"]:
            return
        time.sleep(0.05)
    raise AssertionError("the message to the starting member was not stored in time")


def test_send_to_a_starting_member_waits_until_it_is_ready(
    cafleet_argv, cli, msg, fleet, add_member, migrated
):
    early = add_member(fleet, "early", ready=False)
    proc = start_send(cafleet_argv, cli, msg, fleet.director, early, "welcome")
    wait_for_pending_delivery(migrated, proc, early)
    time.sleep(0.5)  # still waiting: nothing is typed before the agent is seen ready
    assert proc.poll() is None
    assert (
        migrated.scalar("SELECT state FROM deliveries WHERE recipient_agent_id = ?", early)
        == "pending"
    )

    ready_at = datetime.now(UTC).isoformat(timespec="microseconds")
    migrated.execute(
        "UPDATE agent_placements SET ready_at = ?, ready_rule = 'hook' WHERE agent_id = ?",
        ready_at,
        early,
    )
    out, err = proc.communicate(timeout=30)
    assert (proc.returncode, err) == (0, "")
    sent = json.loads(out)
    # attempted once, after it became ready (the pane runs `sleep`, so nothing is typed)
    assert sent["notification"] == {
        "state": "skipped",
        "transport": "tmux",
        "reason": "not-agent:sleep",
    }
    [delivery] = migrated.rows("SELECT * FROM deliveries WHERE recipient_agent_id = ?", early)
    assert delivery["attempted_at"] >= ready_at


def test_send_to_a_member_whose_start_was_rolled_back_is_skipped_as_starting(
    cafleet_argv, cli, msg, fleet, add_member, migrated
):
    early = add_member(fleet, "early", ready=False)
    proc = start_send(cafleet_argv, cli, msg, fleet.director, early, "welcome")
    wait_for_pending_delivery(migrated, proc, early)

    # what `member create` does when the agent never takes its prompt
    migrated.execute("DELETE FROM agent_placements WHERE agent_id = ?", early)
    migrated.execute("UPDATE agents SET status = 'deregistered' WHERE agent_id = ?", early)
    out, err = proc.communicate(timeout=30)
    assert (proc.returncode, err) == (0, "")
    sent = json.loads(out)
    assert sent["notification_sent"] is False
    assert sent["notification"]["state"] == "skipped"
    assert sent["notification"]["reason"] == "agent-starting"
    assert (
        migrated.scalar("SELECT error FROM deliveries WHERE recipient_agent_id = ?", early)
        == "agent-starting"
    )


def test_send_to_an_unknown_foreign_or_deregistered_agent_reads_the_same(
    cli, make_fleet, add_member, migrated
):
    mine, other = make_fleet("mine"), make_fleet("other")
    gone = add_member(mine, "gone")
    migrated.execute("UPDATE agents SET status='deregistered' WHERE agent_id=?", gone)
    msg = Messages(cli, mine)
    for target in (other.director, gone, 4242):
        line = msg.fails("send", mine.director, "--to", target, "--text", "x")
        assert line == f"Error: Destination agent not found: {target}"
    assert migrated.count("tasks") == 0


def test_acting_agent_must_be_an_active_member_of_the_fleet(cli, make_fleet, add_member, migrated):
    mine, other = make_fleet("mine"), make_fleet("other")
    gone = add_member(mine, "gone")
    migrated.execute("UPDATE agents SET status='deregistered' WHERE agent_id=?", gone)
    msg = Messages(cli, mine)
    for actor in (other.director, gone, 4242):
        expected = f"Error: agent {actor} is not a member of fleet {mine.fleet_id}."
        assert msg.fails("send", actor, "--to", mine.director, "--text", "x") == expected
        assert msg.fails("poll", actor) == expected
    assert migrated.count("tasks") == 0


def test_errors_stay_plain_text_with_json(msg, fleet):
    result = msg.cli("--json", *msg.args("send", fleet.director, "--to", 4242, "--text", "x"))
    assert (result.code, result.stdout) == (1, "")
    assert result.stderr == "Error: Destination agent not found: 4242\n"


def test_send_requires_a_recipient(msg, fleet):
    result = msg.run("send", fleet.director, "--text", "x")
    assert result.code == 2
    assert "Missing option '--to' (or '--reply-to')" in result.stderr


def test_a_reply_joins_the_thread_and_thread_prints_it_in_order(msg, fleet, add_member):
    worker = add_member(fleet, "worker", pane_id=None)
    question = msg.send(fleet.director, worker, "which branch?")
    answer = int(msg.ok("send", worker, "--reply-to", question, "--text", "main", "--quiet"))
    msg.send(fleet.director, worker, "unrelated")
    thanks = int(msg.ok("send", fleet.director, "--reply-to", answer, "--text", "ok", "--quiet"))

    polled = msg.json("poll", fleet.director)
    [reply] = [m for m in polled if m["id"] == answer]
    assert (reply["in_reply_to"], reply["thread_id"]) == (question, question)
    assert re.search(rf"^\[{answer} \| from:{worker} \| re:{question} \| ", msg.ok(
        "poll", fleet.director), re.M)  # fmt: skip

    shown = msg.json("thread", worker, "--task-id", thanks)
    assert shown["thread_id"] == question
    assert [(m["id"], m["from"], m["to"], m["text"]) for m in shown["messages"]] == [
        (question, fleet.director, worker, "which branch?"),
        (answer, worker, fleet.director, "main"),
        (thanks, fleet.director, worker, "ok"),
    ]
    text = msg.ok("thread", fleet.admin, "--task-id", question).splitlines()
    assert text[0] == f"thread {question}: 3 messages"
    assert text[1].startswith(f"{fleet.director} -> {worker}: [{question} | ")


def test_replies_to_what_the_sender_could_not_see_are_refused_as_unknown_ids(
    msg, fleet, add_member
):
    worker = add_member(fleet, "worker", pane_id=None)
    private = msg.send(fleet.director, worker, "between us")

    line = msg.fails("send", fleet.admin, "--reply-to", private, "--text", "peek")
    missing = msg.fails("send", fleet.admin, "--reply-to", 4242, "--text", "x")
    nobody = msg.run("send", fleet.director, "--text", "x")

    assert line == f"Error: Task {private} not found"
    assert missing == "Error: Task 4242 not found"
    assert nobody.code == 2 and "Missing option '--to' (or '--reply-to')" in nobody.stderr


def test_send_to_an_unknown_fleet(cli, migrated):
    line = cli.fails(
        "message", "send", "--fleet-id", "77", "--agent-id", "1", "--to", "2", "--text", "x"
    )
    assert line == "Error: fleet 77 not found."


# --------------------------------------------------------------------------- truncation


def test_long_text_is_truncated_unless_full(msg, fleet):
    body = "abcdefghij"
    env = {"CAFLEET_MAX_TEXT_LEN": "5"}
    out = msg.ok("send", fleet.admin, "--to", fleet.director, "--text", body, env=env)
    assert out.splitlines()[2] == "abcde…"
    sent = msg.json("send", fleet.admin, "--to", fleet.director, "--text", body, env=env)
    assert sent["task"]["text"] == "abcde…"
    polled = msg.json("poll", fleet.director, env=env)
    assert [p["text"] for p in polled] == ["abcde…", "abcde…"]
    full = msg.json("poll", fleet.director, "--full", env=env)
    assert [p["text"] for p in full] == [body, body]
    text_full = msg.ok("poll", fleet.director, "--full", "--limit", "1", env=env)
    assert text_full.splitlines()[-1] == f"  text:  {body}"


def test_text_at_the_limit_is_not_truncated(msg, fleet):
    env = {"CAFLEET_MAX_TEXT_LEN": "5"}
    sent = msg.json("send", fleet.admin, "--to", fleet.director, "--text", "αβγδε", env=env)
    assert sent["task"]["text"] == "αβγδε"


def test_default_limit_is_200_codepoints(msg, fleet):
    body = "é" * 205
    sent = msg.json("send", fleet.admin, "--to", fleet.director, "--text", body)
    assert sent["task"]["text"] == "é" * 200 + "…"


def test_storage_keeps_the_full_text(msg, fleet, migrated):
    body = "x" * 500
    task_id = msg.send(fleet.admin, fleet.director, body, "--full")
    assert task_row(migrated, task_id)["text"] == body


# --------------------------------------------------------------------------- poll


def test_poll_empty(msg, fleet):
    assert msg.ok("poll", fleet.director) == "No messages found.\n"
    assert msg.json("poll", fleet.director) == []


def test_poll_lists_pending_messages_newest_first(msg, fleet, migrated):
    first = msg.send(fleet.admin, fleet.director, "first")
    second = msg.send(fleet.admin, fleet.director, "second")
    out = msg.ok("poll", fleet.director)
    entries = out.rstrip("\n").split("\n\n")
    assert len(entries) == 2
    for entry, task_id, text in zip(entries, (second, first), ("second", "first"), strict=True):
        ts = task_row(migrated, task_id)["status_timestamp"]
        assert entry == f"{compact_header(task_id, fleet.admin, ts)}\n{text}"
    assert [p["id"] for p in msg.json("poll", fleet.director)] == [second, first]


def test_poll_only_shows_own_input_required_messages(msg, fleet):
    keep = msg.send(fleet.admin, fleet.director, "keep")
    acked = msg.send(fleet.admin, fleet.director, "acked")
    canceled = msg.send(fleet.admin, fleet.director, "canceled")
    msg.send(fleet.director, fleet.admin, "for the admin")
    msg.ok("ack", fleet.director, "--task-id", acked)
    msg.ok("cancel", fleet.admin, "--task-id", canceled)
    assert [p["id"] for p in msg.json("poll", fleet.director)] == [keep]


def test_poll_limit(msg, fleet):
    ids = [msg.send(fleet.admin, fleet.director, f"m{i}") for i in range(3)]
    assert [p["id"] for p in msg.json("poll", fleet.director, "--limit", "2")] == ids[::-1][:2]


def test_poll_limit_must_be_positive(msg, fleet):
    result = msg.run("poll", fleet.director, "--limit", "0")
    assert result.code == 2


def test_poll_full_rendering(msg, fleet):
    task_id = msg.send(fleet.admin, fleet.director, "full")
    assert msg.ok("poll", fleet.director, "--full").splitlines() == [
        f"  id:    {task_id}",
        "  state: input_required",
        f"  from:  {fleet.admin}",
        f"  to:    {fleet.director}",
        "  type:  unicast",
        "  text:  full",
    ]


# --------------------------------------------------------------------------- broadcast


def test_broadcast_from_the_administrator(msg, fleet, add_member, migrated, director_shell):
    worker = add_member(fleet, "worker", pane_id=None)
    watcher = add_member(fleet, "watcher", pane_id=None, kind="monitoring-member")
    out = msg.ok("broadcast", fleet.admin, "--text", "all hands")
    # one line per recipient: its own task and, when the preview was not typed, why in words
    match = re.fullmatch(
        r"broadcast id=(\d+) recipients=3 delivered=0\n"
        rf"  to {fleet.director}: task (\d+), preview skipped: pane runs"
        rf" {re.escape(director_shell)}\n"
        rf"  to {worker}: task (\d+), preview skipped: the recipient's pane is not recorded yet\n"
        rf"  to {watcher}: task (\d+), preview skipped: the recipient's pane is not recorded yet\n",
        out,
    )
    assert match, out
    summary_id = int(match[1])
    summary = task_row(migrated, summary_id)
    assert summary["type"] == "broadcast_summary"
    assert summary["context_id"] == fleet.admin
    assert summary["from_agent_id"] == fleet.admin
    assert summary["to_agent_id"] is None
    assert summary["status_state"] == "completed"
    assert summary["origin_task_id"] == summary_id
    assert summary["text"] == "Broadcast sent to 3 recipients"
    copies = migrated.rows(
        "SELECT * FROM tasks WHERE origin_task_id = ? AND task_id != ? ORDER BY task_id",
        summary_id,
        summary_id,
    )
    assert [c["to_agent_id"] for c in copies] == [fleet.director, worker, watcher]
    assert [c["task_id"] for c in copies] == [int(match[i]) for i in (2, 3, 4)]
    for copy in copies:
        assert copy["type"] == "unicast"
        assert copy["context_id"] == copy["to_agent_id"]
        assert copy["from_agent_id"] == fleet.admin
        assert copy["status_state"] == "input_required"
        assert copy["text"] == "all hands"
        assert copy["created_at"] == summary["created_at"]
    ledger = migrated.rows("SELECT * FROM deliveries ORDER BY recipient_agent_id")
    assert [d["task_id"] for d in ledger] == [c["task_id"] for c in copies]
    assert summary_id not in {d["task_id"] for d in ledger}
    assert [(d["state"], d["error"]) for d in ledger] == [
        ("skipped", f"not-agent:{director_shell}"),
        ("skipped", "pending-pane"),
        ("skipped", "pending-pane"),
    ]


def test_broadcast_from_a_member_reaches_the_director_but_not_the_administrator(
    msg, fleet, add_member, migrated
):
    sender = add_member(fleet, "sender", pane_id=None)
    other = add_member(fleet, "other", pane_id=None)
    [result] = msg.json("broadcast", sender, "--text", "hey")
    assert result["recipients"] == 2
    summary_id = result["task"]["id"]
    targets = [
        r["to_agent_id"]
        for r in migrated.rows(
            "SELECT to_agent_id FROM tasks WHERE origin_task_id = ? AND type = 'unicast'"
            " ORDER BY task_id",
            summary_id,
        )
    ]
    assert targets == [fleet.director, other]


def test_broadcast_json(msg, fleet, migrated):
    out = msg.cli.ok("--json", *msg.args("broadcast", fleet.admin, "--text", "x"))
    [result] = json.loads(out)
    assert set(result) == {"task", "recipients", "delivered", "recipient_tasks"}
    [copy] = migrated.rows("SELECT task_id FROM tasks WHERE type = 'unicast'")
    assert result["recipient_tasks"] == [
        {
            "agent_id": fleet.director,
            "task_id": copy["task_id"],
            "notification_sent": False,
            "notification": {
                "state": "skipped",
                "transport": "tmux",
                "reason": result["recipient_tasks"][0]["notification"]["reason"],
            },
        }
    ]
    assert result["recipients"] == 1
    assert result["delivered"] == 0
    task = result["task"]
    assert task == {
        "id": task["id"],
        "from": fleet.admin,
        "ts": task_row(migrated, task["id"])["status_timestamp"],
        "text": "Broadcast sent to 1 recipients",
        "kind": "broadcast_summary",
        "origin": task["id"],
        "state": "completed",
        "in_reply_to": None,
        "thread_id": task["id"],
    }


def test_broadcast_full(msg, fleet, director_shell):
    lines = msg.ok("broadcast", fleet.admin, "--text", "x", "--full").splitlines()
    assert re.fullmatch(r"  id:    \d+", lines[0])
    assert lines[1:] == [
        "  state: completed",
        f"  from:  {fleet.admin}",
        "  type:  broadcast_summary",
        "  text:  Broadcast sent to 1 recipients",
        f"  to {fleet.director}: task {int(lines[0].split()[-1]) + 1}, preview skipped: pane"
        f" runs {director_shell}",
    ]


def test_broadcast_with_no_recipients_still_writes_the_summary(msg, fleet, migrated):
    out = msg.ok("broadcast", fleet.director, "--text", "anyone?")
    assert re.fullmatch(r"broadcast id=\d+ recipients=0 delivered=0\n", out)
    assert migrated.count("tasks") == 1
    assert migrated.count("deliveries") == 0


def test_broadcast_summary_is_hidden_from_poll_and_show_gives_what_was_sent(msg, fleet, migrated):
    [result] = msg.json("broadcast", fleet.admin, "--text", "news")
    summary_id = result["task"]["id"]
    assert msg.json("poll", fleet.admin) == []
    [copy] = msg.json("poll", fleet.director)
    assert copy["origin"] == summary_id
    assert copy["text"] == "news"
    assert set(copy) == {"id", "from", "ts", "text", "origin", "in_reply_to", "thread_id"}
    assert (copy["in_reply_to"], copy["thread_id"]) == (None, summary_id)  # the broadcast's thread
    shown = msg.ok("show", fleet.director, "--task-id", summary_id)
    ts = task_row(migrated, summary_id)["status_timestamp"]
    assert shown == (
        compact_header(
            summary_id,
            fleet.admin,
            ts,
            "kind:broadcast_summary",
            f"origin:{summary_id}",
            "state:completed",
        )
        + f"\nnews\nto: {fleet.director} (task {copy['id']}, input_required)\n"
    )
    detail = msg.json("show", fleet.director, "--task-id", summary_id)
    assert detail["task"]["text"] == "Broadcast sent to 1 recipients"
    assert detail["broadcast"] == {
        "text": "news",
        "recipient_tasks": [
            {"agent_id": fleet.director, "task_id": copy["id"], "state": "input_required"}
        ],
    }


def test_broadcast_copies_are_acked_and_canceled_one_by_one(msg, fleet, add_member):
    worker = add_member(fleet, "worker", pane_id=None)
    [result] = msg.json("broadcast", fleet.admin, "--text", "news")
    summary_id = result["task"]["id"]
    [to_director] = msg.json("poll", fleet.director)
    [to_worker] = msg.json("poll", worker)
    msg.ok("ack", fleet.director, "--task-id", to_director["id"])
    msg.ok("cancel", fleet.admin, "--task-id", to_worker["id"])
    assert msg.json("poll", fleet.director) == []
    assert msg.json("poll", worker) == []
    assert msg.fails("cancel", fleet.admin, "--task-id", summary_id) == (
        "Error: Cannot cancel task in state completed"
    )


# --------------------------------------------------------------------------- ack


def test_ack(msg, fleet, migrated):
    task_id = msg.send(fleet.admin, fleet.director, "please")
    created = task_row(migrated, task_id)["created_at"]
    out = msg.ok("ack", fleet.director, "--task-id", task_id)
    row = task_row(migrated, task_id)
    assert row["status_state"] == "completed"
    assert row["created_at"] == created
    assert row["status_timestamp"] > created
    assert out == (
        "Message acknowledged.\n"
        + compact_header(task_id, fleet.admin, row["status_timestamp"], "state:completed")
        + "\nplease\n"
    )


def test_ack_quiet_and_json(msg, fleet):
    first = msg.send(fleet.admin, fleet.director, "a")
    second = msg.send(fleet.admin, fleet.director, "b")
    assert msg.ok("ack", fleet.director, "--task-id", first, "--quiet") == f"{first}\n"
    acked = msg.json("ack", fleet.director, "--task-id", second)["task"]
    assert acked["id"] == second
    assert acked["state"] == "completed"
    assert "kind" not in acked
    assert "origin" not in acked


def test_ack_full(msg, fleet, migrated):
    task_id = msg.send(fleet.admin, fleet.director, "a")
    lines = msg.ok("ack", fleet.director, "--task-id", task_id, "--full").splitlines()
    assert lines[0] == "Message acknowledged."
    assert lines[2] == "  state: completed"
    acked = msg.json(
        "ack", fleet.director, "--task-id", msg.send(fleet.admin, fleet.director, "b"), "--full"
    )
    assert set(acked) == {"task"}
    assert acked["task"]["status_state"] == "completed"


def test_ack_rules(msg, fleet):
    task_id = msg.send(fleet.admin, fleet.director, "a")
    assert msg.fails("ack", fleet.admin, "--task-id", task_id) == (
        "Error: Only the recipient can ACK a task"
    )
    msg.ok("ack", fleet.director, "--task-id", task_id)
    assert msg.fails("ack", fleet.director, "--task-id", task_id) == (
        "Error: Cannot ACK task in state completed"
    )
    canceled = msg.send(fleet.admin, fleet.director, "b")
    msg.ok("cancel", fleet.admin, "--task-id", canceled)
    assert msg.fails("ack", fleet.director, "--task-id", canceled) == (
        "Error: Cannot ACK task in state canceled"
    )


# --------------------------------------------------------------------------- cancel


def test_cancel(msg, fleet, migrated):
    task_id = msg.send(fleet.admin, fleet.director, "never mind")
    out = msg.ok("cancel", fleet.admin, "--task-id", task_id)
    row = task_row(migrated, task_id)
    assert row["status_state"] == "canceled"
    assert row["status_timestamp"] > row["created_at"]
    assert out == (
        "Task canceled.\n"
        + compact_header(task_id, fleet.admin, row["status_timestamp"], "state:canceled")
        + "\nnever mind\n"
    )


def test_cancel_json_and_full(msg, fleet):
    first = msg.send(fleet.admin, fleet.director, "a")
    canceled = msg.json("cancel", fleet.admin, "--task-id", first)["task"]
    assert (canceled["id"], canceled["state"]) == (first, "canceled")
    second = msg.send(fleet.admin, fleet.director, "b")
    lines = msg.ok("cancel", fleet.admin, "--task-id", second, "--full").splitlines()
    assert lines[0] == "Task canceled."
    assert lines[2] == "  state: canceled"


def test_cancel_rules(msg, fleet):
    task_id = msg.send(fleet.admin, fleet.director, "a")
    assert msg.fails("cancel", fleet.director, "--task-id", task_id) == (
        "Error: Only the sender can cancel a task"
    )
    msg.ok("ack", fleet.director, "--task-id", task_id)
    assert msg.fails("cancel", fleet.admin, "--task-id", task_id) == (
        "Error: Cannot cancel task in state completed"
    )
    other = msg.send(fleet.admin, fleet.director, "b")
    msg.ok("cancel", fleet.admin, "--task-id", other)
    assert msg.fails("cancel", fleet.admin, "--task-id", other) == (
        "Error: Cannot cancel task in state canceled"
    )


# --------------------------------------------------------------------------- show


def test_show_is_open_to_any_active_agent_of_the_fleet(msg, fleet, add_member, migrated):
    bystander = add_member(fleet, "bystander", pane_id=None)
    task_id = msg.send(fleet.admin, fleet.director, "visible")
    out = msg.ok("show", bystander, "--task-id", task_id)
    ts = task_row(migrated, task_id)["status_timestamp"]
    assert out == compact_header(task_id, fleet.admin, ts) + "\nvisible\n"
    assert msg.json("show", bystander, "--task-id", task_id) == {
        "task": {
            "id": task_id,
            "from": fleet.admin,
            "ts": ts,
            "text": "visible",
            "in_reply_to": None,
            "thread_id": task_id,
        },
        "sender_verified": False,
    }


def test_show_full_json_adds_deliveries(msg, fleet, migrated):
    task_id = msg.send(fleet.director, fleet.admin, "ledger")
    shown = msg.json("show", fleet.director, "--task-id", task_id, "--full")
    row = dict(task_row(migrated, task_id))
    deliveries = shown.pop("deliveries")
    assert shown == {"task": row, "sender_verified": False}
    ledger = migrated.row("SELECT * FROM deliveries WHERE task_id = ?", task_id)
    assert deliveries == [
        {
            "recipient_agent_id": fleet.admin,
            "attempt": 1,
            "channel": None,
            "state": "skipped",
            "transport": None,
            "pane_id": None,
            "attempted_at": ledger["attempted_at"],
            "confirmed_at": None,
            "error": "no-placement",
        }
    ]
    assert "deliveries" not in msg.json("show", fleet.director, "--task-id", task_id)


def test_show_full_text(msg, fleet):
    task_id = msg.send(fleet.admin, fleet.director, "line one\nline two")
    assert msg.ok("show", fleet.admin, "--task-id", task_id, "--full").splitlines() == [
        f"  id:    {task_id}",
        "  state: input_required",
        f"  from:  {fleet.admin} (not verified)",
        f"  to:    {fleet.director}",
        "  type:  unicast",
        "  text:  line one",
        "line two",
    ]


def test_task_lookups_never_reveal_other_fleets(cli, make_fleet):
    mine, other = make_fleet("mine"), make_fleet("other")
    theirs = Messages(cli, other).send(other.admin, other.director, "secret")
    msg = Messages(cli, mine)
    for task_id in (theirs, 4242):
        expected = f"Error: Task {task_id} not found"
        assert msg.fails("show", mine.director, "--task-id", task_id) == expected
        assert msg.fails("ack", mine.director, "--task-id", task_id) == expected
        assert msg.fails("cancel", mine.admin, "--task-id", task_id) == expected
    assert Messages(cli, other).json("poll", other.director)[0]["id"] == theirs


# --------------------------------------------------------------------------- terminal escapes

# OSC 52 (clipboard), OSC 0 (title), a CR that fakes a line, CSI 2J (clear), a bidi override
ESCAPES = "hi\x1b]52;c;cHduZWQ=\x07\x1b]0;new-title\x07\rFAKE\x1b[2J\u202eevil\nline two"


def test_show_and_poll_print_escapes_inert_and_json_keeps_them(msg, fleet):
    task_id = msg.send(fleet.admin, fleet.director, ESCAPES)
    shown = "hi\\x1b]52;c;cHduZWQ=\\x07\\x1b]0;new-title\\x07\\rFAKE\\x1b[2J\\u202eevil"
    for out in (
        msg.ok("show", fleet.director, "--task-id", task_id),
        msg.ok("show", fleet.director, "--task-id", task_id, "--full"),
        msg.ok("poll", fleet.director),
    ):
        assert all(line.isprintable() for line in out.split("\n")), repr(out)
        assert shown in out
        assert out.splitlines()[-1] == "line two"
    shown = msg.json("show", fleet.director, "--task-id", task_id, "--full")
    assert shown["task"]["text"] == ESCAPES
    assert [m["text"] for m in msg.json("poll", fleet.director)] == [ESCAPES]

"""`cafleet message ...` through click on the fakes."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest

from cafleet.adapters.fake.notifier import RecordingNotifier
from cafleet.domain.delivery import PushOutcome
from cafleet.domain.message import Message, MessageState

TS = "2026-01-01T08:00:00.000000+00:00"


@dataclass
class Team:
    fid: str
    director: int
    admin: int
    worker: int  # pane %1
    pending: int  # no pane yet

    def args(self, command: str, agent_id: int, *rest: str) -> list[str]:
        return ["message", command, "--fleet-id", self.fid, "--agent-id", str(agent_id), *rest]


@pytest.fixture
def team(run) -> Team:
    made = run.world.fleet("alpha")
    return Team(
        str(made.fleet.fleet_id),
        made.director.agent_id,
        made.administrator.agent_id,
        run.world.member(made, "worker", pane_id="%1"),
        run.world.member(made, "pending", pane_id=None),
    )


def send(run, team: Team, text: str = "hello worker", *extra: str, to: int | None = None):
    target = team.worker if to is None else to
    return run(*team.args("send", team.director, "--to", str(target), "--text", text, *extra))


def only_message(run):
    [message] = run.world.all_messages()
    return message


# -- send -------------------------------------------------------------------------------------


def test_send_prints_message_sent_and_the_compact_rendering(run, team: Team) -> None:
    result = send(run, team)

    stored = only_message(run)
    assert result.exit_code == 0
    assert result.stdout == (
        f"Message sent.\n[{stored.task_id} | from:{team.director} | {TS}]\nhello worker\n"
    )
    assert result.stderr == ""
    assert (stored.from_agent_id, stored.to_agent_id, stored.text) == (
        team.director,
        team.worker,
        "hello worker",
    )


def test_send_full_prints_the_full_rendering(run, team: Team) -> None:
    result = send(run, team, "hello worker", "--full")

    stored = only_message(run)
    assert result.stdout == (
        "Message sent.\n"
        f"  id:    {stored.task_id}\n"
        "  state: input_required\n"
        f"  from:  {team.director}\n"
        f"  to:    {team.worker}\n"
        "  type:  unicast\n"
        "  text:  hello worker\n"
    )


def test_send_quiet_prints_only_the_task_id(run, team: Team) -> None:
    result = send(run, team, "hello", "--quiet")

    assert result.stdout == f"{only_message(run).task_id}\n"


def test_send_json_carries_the_task_and_the_notification(run, team: Team) -> None:
    result = run(
        "--json", *team.args("send", team.director, "--to", str(team.worker), "--text", "hi")
    )

    task_id = only_message(run).task_id
    assert result.exit_code == 0
    assert result.stdout == (
        f'{{"task":{{"id":{task_id},"from":{team.director},"ts":"{TS}","text":"hi",'
        f'"in_reply_to":null,"thread_id":{task_id}}},'
        '"notification_sent":true,'
        '"notification":{"state":"sent","transport":"tmux","reason":null},'
        '"sender_verified":false}\n'
    )


def test_send_json_ignores_quiet(run, team: Team) -> None:
    result = run(
        "--json",
        *team.args("send", team.director, "--to", str(team.worker), "--text", "hi", "--quiet"),
    )

    assert json.loads(result.stdout)["task"]["text"] == "hi"


def test_send_json_full_carries_the_full_task(run, team: Team) -> None:
    result = run(
        "--json",
        *team.args("send", team.director, "--to", str(team.worker), "--text", "hi", "--full"),
    )

    task = json.loads(result.stdout)["task"]
    assert list(task) == [
        "task_id",
        "context_id",
        "from_agent_id",
        "to_agent_id",
        "type",
        "created_at",
        "status_state",
        "status_timestamp",
        "origin_task_id",
        "text",
        "sender_verified",
        "in_reply_to",
        "thread_id",
    ]
    assert task["context_id"] == task["to_agent_id"] == team.worker


@pytest.mark.parametrize(
    ("recipient", "reason"),
    [("self", "self"), ("admin", "no-placement"), ("pending", "pending-pane")],
)
def test_send_json_reports_a_skipped_notification(
    run, team: Team, recipient: str, reason: str
) -> None:
    to = {"self": team.director, "admin": team.admin, "pending": team.pending}[recipient]

    result = run("--json", *team.args("send", team.director, "--to", str(to), "--text", "x"))

    body = json.loads(result.stdout)
    assert body["notification_sent"] is False
    assert body["notification"] == {"state": "skipped", "transport": None, "reason": reason}
    assert run.notifier.announced == []


def test_send_json_reports_a_failed_notification(run, team: Team) -> None:
    run.notifier = RecordingNotifier(
        lambda a: PushOutcome.failed("tmux send-keys timed out after 5s", "tmux", "%1")
    )

    result = run(
        "--json", *team.args("send", team.director, "--to", str(team.worker), "--text", "x")
    )

    assert result.exit_code == 0
    assert json.loads(result.stdout)["notification"] == {
        "state": "failed",
        "transport": "tmux",
        "reason": "tmux send-keys timed out after 5s",
    }


@pytest.mark.parametrize(
    ("recipient", "words"),
    [
        ("self", "the recipient is the sender"),
        ("admin", "the recipient has no pane"),
        ("pending", "the recipient's pane is not recorded yet"),
    ],
)
def test_send_text_names_why_no_preview_was_typed(
    run, team: Team, recipient: str, words: str
) -> None:
    to = {"self": team.director, "admin": team.admin, "pending": team.pending}[recipient]

    result = run(*team.args("send", team.director, "--to", str(to), "--text", "x"))

    assert result.exit_code == 0
    assert result.stdout.startswith("Message sent.\n")
    assert result.stdout.endswith(f"\nx\npreview skipped: {words}\n")


def test_send_text_names_a_failed_preview(run, team: Team) -> None:
    run.notifier = RecordingNotifier(
        lambda a: PushOutcome.failed("tmux send-keys timed out after 5s", "tmux", "%1")
    )

    result = send(run, team)

    assert result.stdout.endswith("\npreview failed: tmux send-keys timed out after 5s\n")


def test_send_quiet_stays_the_task_id_when_the_preview_was_skipped(run, team: Team) -> None:
    result = run(
        *team.args("send", team.director, "--to", str(team.pending), "--text", "x", "--quiet")
    )

    assert result.stdout == f"{only_message(run).task_id}\n"


def test_send_truncates_compact_text_and_json_but_stores_the_full_body(run, team: Team) -> None:
    env = {"CAFLEET_MAX_TEXT_LEN": "5"}
    text_result = run(
        *team.args("send", team.director, "--to", str(team.worker), "--text", "abcdefgh"), env=env
    )
    json_result = run(
        "--json",
        *team.args("send", team.director, "--to", str(team.worker), "--text", "abcdefgh"),
        env=env,
    )
    full_result = run(
        *team.args("send", team.director, "--to", str(team.worker), "--text", "abcdefgh"),
        "--full",
        env=env,
    )

    assert text_result.stdout.splitlines()[-1] == "abcde…"
    assert json.loads(json_result.stdout)["task"]["text"] == "abcde…"
    assert full_result.stdout.splitlines()[-1] == "  text:  abcdefgh"
    assert [m.text for m in run.world.all_messages()] == ["abcdefgh"] * 3


def test_send_json_writes_raw_utf8(run, team: Team) -> None:
    result = run(
        "--json", *team.args("send", team.director, "--to", str(team.worker), "--text", "héllo ✓")
    )

    assert '"text":"héllo ✓"' in result.stdout


@pytest.mark.parametrize("case", ["unknown", "other-fleet", "deregistered"])
def test_send_to_an_unreachable_recipient_is_one_error(run, team: Team, case: str) -> None:
    other = run.world.fleet("beta")
    to = {"unknown": 999, "other-fleet": other.director.agent_id, "deregistered": team.worker}[case]
    if case == "deregistered":
        run.world.deregister(team.worker)

    result = send(run, team, "x", to=to)

    assert result.exit_code == 1
    assert result.stderr == f"Error: Destination agent not found: {to}\n"
    assert result.stdout == ""
    assert run.world.all_messages() == []


def test_an_acting_agent_outside_the_fleet_is_refused(run, team: Team) -> None:
    result = run(*team.args("poll", 999))

    assert result.exit_code == 1
    assert result.stderr == f"Error: agent 999 is not a member of fleet {team.fid}.\n"


def test_poll_in_a_deleted_fleet_is_refused_as_read_only(run, team: Team) -> None:
    run("fleet", "delete", "--fleet-id", team.fid)

    result = run(*team.args("poll", team.director))

    assert result.exit_code == 1
    assert result.stderr == f"Error: fleet {team.fid} is deleted; its history is read-only\n"


def test_errors_stay_plain_text_with_json(run, team: Team) -> None:
    result = run("--json", *team.args("poll", 999))

    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr == f"Error: agent 999 is not a member of fleet {team.fid}.\n"


# -- broadcast --------------------------------------------------------------------------------


def broadcast_made(run) -> tuple[Message, dict[int, int]]:
    """The broadcast's summary and, per recipient, the id of the message it got."""
    summary = next(m for m in run.world.all_messages() if m.is_summary)
    copies = {
        m.to_agent_id: m.task_id
        for m in run.world.all_messages()
        if m.origin_task_id == summary.task_id and not m.is_summary
    }
    return summary, copies


def test_broadcast_prints_id_recipients_and_each_recipients_task(run, team: Team) -> None:
    result = run(*team.args("broadcast", team.worker, "--text", "standup"))

    summary, copies = broadcast_made(run)
    assert result.exit_code == 0
    # recipients: the Director (pane %0, pushed) and the pending member (skipped, named)
    assert result.stdout == (
        f"broadcast id={summary.task_id} recipients=2 delivered=1\n"
        f"  to {team.director}: task {copies[team.director]}\n"
        f"  to {team.pending}: task {copies[team.pending]}, preview skipped: the recipient's"
        " pane is not recorded yet\n"
    )


def test_broadcast_full_prints_the_summary_in_full(run, team: Team) -> None:
    result = run(*team.args("broadcast", team.director, "--text", "standup", "--full"))

    summary, copies = broadcast_made(run)
    assert result.stdout == (
        f"  id:    {summary.task_id}\n"
        "  state: completed\n"
        f"  from:  {team.director}\n"
        "  type:  broadcast_summary\n"
        "  text:  Broadcast sent to 2 recipients\n"
        f"  to {team.worker}: task {copies[team.worker]}\n"
        f"  to {team.pending}: task {copies[team.pending]}, preview skipped: the recipient's"
        " pane is not recorded yet\n"
    )


def test_broadcast_json_is_a_one_element_list_naming_each_recipients_task(run, team: Team) -> None:
    result = run("--json", *team.args("broadcast", team.director, "--text", "standup"))

    summary, copies = broadcast_made(run)
    sid = summary.task_id
    sent = {"state": "sent", "transport": "tmux", "reason": None}
    skipped = {"state": "skipped", "transport": None, "reason": "pending-pane"}
    assert json.loads(result.stdout) == [
        {
            "task": {
                "id": sid,
                "from": team.director,
                "ts": TS,
                "text": "Broadcast sent to 2 recipients",
                "in_reply_to": None,
                "thread_id": sid,
                "kind": "broadcast_summary",
                "origin": sid,
                "state": "completed",
            },
            "recipients": 2,
            "delivered": 1,
            "recipient_tasks": [
                {
                    "agent_id": team.worker,
                    "task_id": copies[team.worker],
                    "notification_sent": True,
                    "notification": sent,
                },
                {
                    "agent_id": team.pending,
                    "task_id": copies[team.pending],
                    "notification_sent": False,
                    "notification": skipped,
                },
            ],
        }
    ]


def test_broadcast_with_no_recipients_still_reports_the_summary(run) -> None:
    made = run.world.fleet("solo")
    fid, admin = made.fleet.fleet_id, made.administrator.agent_id
    run.world.deregister(made.director.agent_id)

    result = run(
        "message", "broadcast", "--fleet-id", str(fid), "--agent-id", str(admin), "--text", "x"
    )

    [summary] = run.world.all_messages()
    assert result.stdout == f"broadcast id={summary.task_id} recipients=0 delivered=0\n"
    assert summary.text == "Broadcast sent to 0 recipients"


# -- poll -------------------------------------------------------------------------------------


def test_poll_of_an_empty_inbox(run, team: Team) -> None:
    text = run(*team.args("poll", team.worker))
    as_json = run("--json", *team.args("poll", team.worker))

    assert (text.exit_code, text.stdout) == (0, "No messages found.\n")
    assert (as_json.exit_code, as_json.stdout) == (0, "[]\n")


def test_poll_lists_newest_first_separated_by_one_blank_line(run, team: Team) -> None:
    send(run, team, "first")
    run.clock.advance(61)
    send(run, team, "second\nline two")
    first, second = run.world.all_messages()

    result = run(*team.args("poll", team.worker))

    assert result.stdout == (
        f"[{second.task_id} | from:{team.director} | 2026-01-01T08:01:01.000000+00:00]\n"
        "second\nline two\n"
        "\n"
        f"[{first.task_id} | from:{team.director} | {TS}]\n"
        "first\n"
    )


def test_poll_json_lists_compact_objects(run, team: Team) -> None:
    send(run, team, "one")
    send(run, team, "two")

    result = run("--json", *team.args("poll", team.worker))

    assert [m["text"] for m in json.loads(result.stdout)] == ["two", "one"]


def test_poll_full_uses_the_full_rendering(run, team: Team) -> None:
    send(run, team, "one")
    send(run, team, "two")

    result = run(*team.args("poll", team.worker, "--full"))

    blocks = result.stdout.rstrip("\n").split("\n\n")
    assert [b.splitlines()[-1] for b in blocks] == ["  text:  two", "  text:  one"]


def test_poll_limit_caps_the_list(run, team: Team) -> None:
    send(run, team, "one")
    send(run, team, "two")

    result = run("--json", *team.args("poll", team.worker, "--limit", "1"))

    assert [m["text"] for m in json.loads(result.stdout)] == ["two"]


@pytest.mark.parametrize("limit", ["0", "-1", "many"])
def test_poll_limit_must_be_a_positive_integer(run, team: Team, limit: str) -> None:
    result = run(*team.args("poll", team.worker, "--limit", limit))

    assert result.exit_code == 2
    assert "Invalid value for '--limit'" in result.stderr


# -- ack / cancel / show ----------------------------------------------------------------------


def test_ack_prints_message_acknowledged_and_the_completed_rendering(run, team: Team) -> None:
    send(run, team, "do it")
    task = only_message(run).task_id
    run.clock.advance(30)

    result = run(*team.args("ack", team.worker, "--task-id", str(task)))

    assert result.exit_code == 0
    assert result.stdout == (
        "Message acknowledged.\n"
        f"[{task} | from:{team.director} | state:completed | 2026-01-01T08:00:30.000000+00:00]\n"
        "do it\n"
    )
    assert only_message(run).state is MessageState.COMPLETED


def test_ack_quiet_and_json(run, team: Team) -> None:
    send(run, team, "a")
    send(run, team, "b")
    first, second = (m.task_id for m in run.world.all_messages())

    quiet = run(*team.args("ack", team.worker, "--task-id", str(first), "--quiet"))
    as_json = run("--json", *team.args("ack", team.worker, "--task-id", str(second), "--quiet"))

    assert quiet.stdout == f"{first}\n"
    assert json.loads(as_json.stdout) == {  # upstream's wrapper
        "task": {
            "id": second,
            "from": team.director,
            "ts": TS,
            "text": "b",
            "in_reply_to": None,
            "thread_id": second,
            "state": "completed",
        }
    }


def test_ack_by_someone_else_is_an_error(run, team: Team) -> None:
    send(run, team, "x")
    task = only_message(run).task_id

    result = run(*team.args("ack", team.director, "--task-id", str(task)))

    assert result.exit_code == 1
    assert result.stderr == "Error: Only the recipient can ACK a task\n"
    assert only_message(run).state is MessageState.INPUT_REQUIRED


def test_ack_twice_names_the_state(run, team: Team) -> None:
    send(run, team, "x")
    task = str(only_message(run).task_id)
    run(*team.args("ack", team.worker, "--task-id", task))

    result = run(*team.args("ack", team.worker, "--task-id", task))

    assert (result.exit_code, result.stderr) == (1, "Error: Cannot ACK task in state completed\n")


def test_cancel_prints_task_canceled_and_the_rendering(run, team: Team) -> None:
    send(run, team, "never mind")
    task = only_message(run).task_id

    result = run(*team.args("cancel", team.director, "--task-id", str(task)))

    assert result.exit_code == 0
    assert result.stdout == (
        f"Task canceled.\n[{task} | from:{team.director} | state:canceled | {TS}]\nnever mind\n"
    )
    assert only_message(run).state is MessageState.CANCELED


def test_cancel_json_wraps_the_task_object(run, team: Team) -> None:
    send(run, team, "x")
    task = only_message(run).task_id

    result = run("--json", *team.args("cancel", team.director, "--task-id", str(task)))

    assert json.loads(result.stdout) == {
        "task": {
            "id": task,
            "from": team.director,
            "ts": TS,
            "text": "x",
            "in_reply_to": None,
            "thread_id": task,
            "state": "canceled",
        }
    }


def test_cancel_by_the_recipient_is_an_error(run, team: Team) -> None:
    send(run, team, "x")
    task = only_message(run).task_id

    result = run(*team.args("cancel", team.worker, "--task-id", str(task)))

    assert (result.exit_code, result.stderr) == (1, "Error: Only the sender can cancel a task\n")


@pytest.mark.parametrize("command", ["ack", "cancel", "show"])
def test_a_task_of_another_fleet_is_not_found(run, team: Team, command: str) -> None:
    other = run.world.fleet("beta")
    foreign_member = run.world.member(other, "foreigner", pane_id="%7")
    run(
        "message",
        "send",
        "--fleet-id",
        str(other.fleet.fleet_id),
        "--agent-id",
        str(other.director.agent_id),
        "--to",
        str(foreign_member),
        "--text",
        "secret",
    )
    foreign = only_message(run).task_id

    result = run(*team.args(command, team.director, "--task-id", str(foreign)))

    assert result.exit_code == 1
    assert result.stderr == f"Error: Task {foreign} not found\n"


def test_show_prints_only_the_rendering(run, team: Team) -> None:
    send(run, team, "look")
    task = only_message(run).task_id

    result = run(*team.args("show", team.admin, "--task-id", str(task)))

    assert result.stdout == f"[{task} | from:{team.director} | {TS}]\nlook\n"


def test_show_json_full_adds_the_deliveries(run, team: Team) -> None:
    send(run, team, "look")
    task = only_message(run).task_id

    plain = json.loads(
        run("--json", *team.args("show", team.worker, "--task-id", str(task))).stdout
    )
    detailed = json.loads(
        run("--json", *team.args("show", team.worker, "--task-id", str(task), "--full")).stdout
    )

    assert plain == {
        "task": {
            "id": task,
            "from": team.director,
            "ts": TS,
            "text": "look",
            "in_reply_to": None,
            "thread_id": task,
        },
        "sender_verified": False,
    }
    assert detailed["task"]["task_id"] == task
    assert detailed["deliveries"] == [
        {
            "recipient_agent_id": team.worker,
            "attempt": 1,
            "channel": "keys",
            "state": "sent",
            "transport": "tmux",
            "pane_id": "%1",
            "attempted_at": TS,
            "confirmed_at": None,
            "error": None,
        }
    ]


def test_show_in_a_deleted_fleet_reads_the_message_and_says_the_fleet_is_deleted(
    run, team: Team
) -> None:
    send(run, team, "last words")
    task = only_message(run).task_id
    run("fleet", "delete", "--fleet-id", team.fid)

    text = run(*team.args("show", team.worker, "--task-id", str(task))).stdout
    shown = json.loads(
        run("--json", *team.args("show", team.worker, "--task-id", str(task), "--full")).stdout
    )

    assert text == (
        f"[{task} | from:{team.director} | {TS}]\nlast words\n"
        f"(fleet deleted {TS}; its history is read-only)\n"
    )
    assert (shown["task"]["task_id"], shown["fleet_deleted_at"]) == (task, TS)
    assert [d["state"] for d in shown["deliveries"]] == ["sent"]


def test_show_in_a_live_fleet_has_no_deletion_field(run, team: Team) -> None:
    send(run, team, "look")
    task = only_message(run).task_id

    shown = json.loads(
        run("--json", *team.args("show", team.worker, "--task-id", str(task))).stdout
    )

    assert "fleet_deleted_at" not in shown


@pytest.mark.parametrize(
    "args",
    [
        ("send", "--to", "{director}", "--text", "hi"),
        ("broadcast", "--text", "hi"),
        ("ack", "--task-id", "{task}"),
        ("cancel", "--task-id", "{task}"),
    ],
)
def test_writes_in_a_deleted_fleet_are_refused_and_store_nothing(run, team: Team, args) -> None:
    send(run, team, "before")
    task = only_message(run)
    run("fleet", "delete", "--fleet-id", team.fid)
    actor = team.director if args[0] in ("send", "broadcast", "cancel") else team.worker
    filled = [a.format(director=team.director, task=task.task_id) for a in args]

    result = run(*team.args(filled[0], actor, *filled[1:]))

    assert result.exit_code == 1
    assert result.stderr == f"Error: fleet {team.fid} is deleted; its history is read-only\n"
    assert run.world.all_messages() == [task]


def test_show_of_a_summary_gives_the_text_sent_and_each_recipients_task(run, team: Team) -> None:
    run(*team.args("broadcast", team.director, "--text", "hi all"))
    summary, copies = broadcast_made(run)
    run(*team.args("ack", team.worker, "--task-id", str(copies[team.worker])))
    shown = ("show", team.worker, "--task-id", str(summary.task_id))

    as_json = json.loads(run("--json", *team.args(*shown)).stdout)
    text = run(*team.args(*shown)).stdout
    full = run(*team.args(*shown, "--full")).stdout

    assert as_json["task"]["kind"] == "broadcast_summary"
    assert as_json["task"]["text"] == "Broadcast sent to 2 recipients"  # upstream's value
    assert as_json["broadcast"] == {
        "text": "hi all",
        "recipient_tasks": [
            {"agent_id": team.worker, "task_id": copies[team.worker], "state": "completed"},
            {"agent_id": team.pending, "task_id": copies[team.pending], "state": "input_required"},
        ],
    }
    went_to = (
        f"{team.worker} (task {copies[team.worker]}, completed),"
        f" {team.pending} (task {copies[team.pending]}, input_required)"
    )
    assert text.splitlines()[1:] == ["hi all", f"to: {went_to}"]
    assert full.splitlines()[-2:] == ["  text:  hi all", f"  to:    {went_to}"]


def test_show_of_a_broadcast_to_nobody_keeps_the_summary_text(run) -> None:
    made = run.world.fleet("solo")
    fid, admin = str(made.fleet.fleet_id), str(made.administrator.agent_id)
    run.world.deregister(made.director.agent_id)
    run("message", "broadcast", "--fleet-id", fid, "--agent-id", admin, "--text", "x")
    [summary] = run.world.all_messages()

    args = ("message", "show", "--fleet-id", fid, "--agent-id", admin)
    result = run("--json", *args, "--task-id", str(summary.task_id))

    assert json.loads(result.stdout)["broadcast"] == {"text": None, "recipient_tasks": []}
    assert run(*args, "--task-id", str(summary.task_id)).stdout.splitlines()[1] == (
        "Broadcast sent to 0 recipients"
    )


# -- options ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ["send", "--to", "2", "--text", "x"],
        ["broadcast", "--text", "x"],
        ["poll"],
        ["ack", "--task-id", "1"],
        ["cancel", "--task-id", "1"],
        ["show", "--task-id", "1"],
    ],
)
def test_message_subcommands_take_json_after_the_subcommand(
    run, team: Team, args: list[str]
) -> None:
    result = run("message", args[0], "--fleet-id", team.fid, "--agent-id", "1", *args[1:], "--json")

    if result.exit_code == 0:
        json.loads(result.stdout)
    else:  # ack, cancel, show of a message that does not exist: the usual one-line error
        assert result.exit_code == 1
        assert result.stderr.startswith("Error: ")
    assert "No such option" not in result.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["send", "--agent-id", "1", "--to", "2", "--text", "x"],
        ["broadcast", "--agent-id", "1", "--text", "x"],
        ["poll", "--agent-id", "1"],
        ["ack", "--agent-id", "1", "--task-id", "1"],
        ["cancel", "--agent-id", "1", "--task-id", "1"],
        ["show", "--agent-id", "1", "--task-id", "1"],
    ],
)
def test_message_subcommands_require_a_fleet_id(run, args: list[str]) -> None:
    result = run("message", *args)

    assert result.exit_code == 1
    assert result.stderr == (
        "Error: --fleet-id <int> is required for this subcommand unless CAFLEET_FLEET_ID"
        " is set. Create a fleet with 'cafleet fleet create' and pass its id.\n"
    )


def test_a_missing_agent_id_is_one_line_naming_the_flag_and_the_variable(run, team: Team) -> None:
    result = run("message", "poll", "--fleet-id", team.fid)

    assert result.exit_code == 1
    assert result.stderr == (
        "Error: --agent-id <int> is required for this subcommand unless CAFLEET_AGENT_ID is set"
        " (your own agent id).\n"
    )

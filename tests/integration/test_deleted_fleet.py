"""A deleted fleet through the real CLI on a SQLite file: its history reads, its writes are
refused with one line (README "Fleets": history is kept after `fleet delete`)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest

pytestmark = pytest.mark.both_stores  # and on PostgreSQL (conftest.py)


def read_only(fleet_id: int) -> str:
    return f"Error: fleet {fleet_id} is deleted; its history is read-only"


@pytest.fixture
def gone(cli: Any, fleet: Any, add_member: Any) -> dict[str, Any]:
    """A fleet with a member and one message, then deleted (member panes left running)."""
    fid = str(fleet.fleet_id)
    worker = add_member(fleet, "worker")
    task = cli.ok(
        "message", "send", "--fleet-id", fid, "--agent-id", str(fleet.director),
        "--to", str(worker), "--text", "last words", "--quiet",
    )  # fmt: skip
    cli.ok("fleet", "delete", "--fleet-id", fid, "--keep-panes")
    deleted_at = cli.json("fleet", "show", "--fleet-id", fid)["deleted_at"]
    return {
        "fleet": fleet,
        "fid": fid,
        "worker": worker,
        "task": int(task),
        "deleted_at": deleted_at,
        "note": f"(fleet deleted {deleted_at}; its history is read-only)",
    }


def test_fleet_list_all_shows_the_deleted_fleet_beside_the_live_ones(
    cli: Any, gone: dict[str, Any], make_fleet: Any
) -> None:
    live = make_fleet("live")

    default = cli.json("fleet", "list")
    every = cli.json("fleet", "list", "--all")
    text = cli.ok("fleet", "list", "--all").splitlines()

    assert [(r["fleet_id"], r["deleted_at"]) for r in default] == [(live.fleet_id, None)]
    assert [(r["fleet_id"], r["deleted_at"]) for r in every] == [
        (live.fleet_id, None),
        (gone["fleet"].fleet_id, gone["deleted_at"]),
    ]
    assert text[0].split()[-1] == "DELETED_AT"
    assert text[2].split()[-1] == "-"
    assert text[3].split()[-1] == gone["deleted_at"]
    datetime.fromisoformat(gone["deleted_at"])


def test_message_show_reads_a_deleted_fleets_message_as_any_agent_it_had(
    cli: Any, gone: dict[str, Any]
) -> None:
    fid, task = gone["fid"], str(gone["task"])
    for reader in (gone["fleet"].director, gone["worker"]):
        args = ("message", "show", "--fleet-id", fid, "--agent-id", str(reader), "--task-id", task)
        text = cli.ok(*args).splitlines()
        shown = cli.json(*args, "--full")

        assert text[-2:] == ["last words", gone["note"]]
        assert (shown["task"]["task_id"], shown["fleet_deleted_at"]) == (
            gone["task"],
            gone["deleted_at"],
        )
        assert [d["recipient_agent_id"] for d in shown["deliveries"]] == [gone["worker"]]


def test_member_list_and_show_read_the_deleted_fleets_record(
    cli: Any, gone: dict[str, Any]
) -> None:
    fid, worker = gone["fid"], gone["worker"]
    fleet = gone["fleet"]

    members = cli.ok("member", "list", "--fleet-id", fid).splitlines()
    everyone = cli.json("member", "list", "--fleet-id", fid, "--all")
    shown = cli.ok("member", "show", "--fleet-id", fid, "--member-id", str(worker))

    assert members[0] == gone["note"]
    assert members[1] == "1 member:"
    assert members[4].split()[:3] == [str(worker), "worker", "deregistered"]
    assert [(a["agent_id"], a["kind"], a["status"]) for a in everyone] == [
        (fleet.director, "director", "deregistered"),
        (fleet.admin, "administrator", "deregistered"),
        (worker, "member", "deregistered"),
    ]
    assert {a["fleet_deleted_at"] for a in everyone} == {gone["deleted_at"]}
    assert shown == f"{worker} worker deregistered {gone['note']}\n"


def test_monitor_status_of_a_deleted_fleet_is_stopped_and_says_so(
    cli: Any, gone: dict[str, Any]
) -> None:
    text = cli.ok("monitor", "status", "--fleet-id", gone["fid"])
    status = cli.json("monitor", "status", "--fleet-id", gone["fid"])

    assert text == f"monitor: stopped {gone['note']}\n"
    assert (status["runtime"]["running"], status["agents"]) == (False, [])
    assert status["fleet_deleted_at"] == gone["deleted_at"]


WRITES = [
    "message send --agent-id {director} --to {worker} --text hi",
    "message broadcast --agent-id {director} --text hi",
    "message poll --agent-id {worker}",
    "message ack --agent-id {worker} --task-id {task}",
    "message cancel --agent-id {director} --task-id {task}",
    "member create --agent-id {director} --name late --description x --coding-agent custom"
    " --agent-command sleep --text go",
    "member create --agent-id {director} --name watch --description x --role monitor --text go",
    "member delete --member-id {worker}",
    "member capture --member-id {worker}",
    "member ping --member-id {worker}",
    "member exec --member-id {worker} ls",
    "member nudge --agent-id {director} --member-id {worker} --text x",
    "monitor config --agent-id {director} --interval 60",
    "monitor start",
]


@pytest.mark.parametrize("command", WRITES, ids=lambda c: "-".join(c.split()[:2]))
def test_writes_to_a_deleted_fleet_are_refused_in_one_line(
    cli: Any, gone: dict[str, Any], migrated: Any, command: str
) -> None:
    fleet = gone["fleet"]
    values = {"director": fleet.director, "worker": gone["worker"], "task": gone["task"]}
    group, verb, *rest = command.format(**values).split()
    before = (migrated.count("tasks"), migrated.count("agents"), migrated.count("monitor_config"))

    line = cli.fails(group, verb, "--fleet-id", gone["fid"], *rest)

    assert line == read_only(fleet.fleet_id)
    after = (migrated.count("tasks"), migrated.count("agents"), migrated.count("monitor_config"))
    assert after == before
    [message] = migrated.rows("SELECT status_state FROM tasks")
    assert message["status_state"] == "input_required"

"""`cafleet member show` and `member list` (default, --all, --activity) end to end.

Members are registered directly in the tables (pane spawning is exercised elsewhere).
"""

from __future__ import annotations

import os
import re
from datetime import datetime

import pytest

pytestmark = pytest.mark.both_stores  # and on PostgreSQL (conftest.py)

HHMMSS = r"\d\d:\d\d:\d\d"
LONG_DESCRIPTION = "A member whose description is much longer than sixty codepoints, really"


def split_row(line: str) -> list[str]:
    return re.split(r"\s{2,}", line.strip())


def column_starts(line: str) -> list[int]:
    return [m.start() for m in re.finditer(r"\S+", line)]


def assert_table(lines: list[str], headers: list[str]) -> list[list[str]]:
    """A content-sized table indented by two spaces with a dashed rule; returns its cells."""
    assert split_row(lines[0]) == headers
    assert all(line.startswith("  ") for line in lines)
    starts = column_starts(lines[0])
    assert column_starts(lines[1]) == starts
    assert set(lines[1].strip()) <= {"-", " "}
    rows = [split_row(line) for line in lines[2:]]
    widths = [len(d) for d in lines[1].split()]
    for i, header in enumerate(headers):
        assert widths[i] == max([len(header), *(len(r[i]) for r in rows)]), header
    return rows


def hhmmss(value: str) -> str:
    return datetime.fromisoformat(value).strftime("%H:%M:%S")


# --------------------------------------------------------------------------- show


def test_member_show_compact(cli, fleet, add_member):
    worker = add_member(fleet, "worker")
    fid = str(fleet.fleet_id)
    assert cli.ok("member", "show", "--fleet-id", fid, "--member-id", str(worker)) == (
        f"{worker} worker active\n"
    )
    assert cli.ok("member", "show", "--fleet-id", fid, "--member-id", str(fleet.director)) == (
        f"{fleet.director} Director active\n"
    )


def test_member_show_full_of_a_member(cli, fleet, add_member, migrated, tmux):
    worker = add_member(fleet, "worker", description=LONG_DESCRIPTION, coding_agent="codex")
    out = cli.ok(
        "member", "show", "--fleet-id", str(fleet.fleet_id), "--member-id", str(worker), "--full"
    )
    created = migrated.scalar("SELECT created_at FROM agent_placements WHERE agent_id=?", worker)
    assert out.splitlines() == [
        f"  agent_id:    {worker}",
        "  name:        worker",
        f"  description: {LONG_DESCRIPTION[:60]}…",
        "  status:      active",
        "  kind:        member",
        "  skills:      -",
        "  placement:",
        f"    director_agent_id: {fleet.director}",
        "    coding_agent:      codex",
        "    backend:           tmux",
        "    session:           main",
        f"    window_id:         {tmux.window_id}",
        "    pane_id:           %1",
        f"    created_at:        {created}",
    ]


def test_member_show_full_of_the_director(cli, fleet, tmux):
    lines = cli.ok(
        "member", "show", "--fleet-id", str(fleet.fleet_id), "--member-id", str(fleet.director),
        "--full",
    ).splitlines()  # fmt: skip
    assert "  kind:        director" in lines
    assert "  description: Root Director for this fleet" in lines
    assert "    director_agent_id: -" in lines
    assert f"    pane_id:           {tmux.pane_id}" in lines


def test_member_show_full_without_placement(cli, fleet):
    lines = cli.ok(
        "member", "show", "--fleet-id", str(fleet.fleet_id), "--member-id", str(fleet.admin),
        "--full",
    ).splitlines()  # fmt: skip
    assert lines[4] == "  kind:        administrator"
    assert lines[-1] == "  placement:   none"
    assert len(lines) == 7


def test_member_show_pending_pane_prints_dash(cli, fleet, add_member):
    worker = add_member(fleet, "worker", pane_id=None)
    lines = cli.ok(
        "member", "show", "--fleet-id", str(fleet.fleet_id), "--member-id", str(worker), "--full"
    ).splitlines()
    assert "    pane_id:           -" in lines


def test_member_show_kind_monitor(cli, fleet, add_member):
    watcher = add_member(fleet, "watcher", kind="monitoring-member")
    shown = cli.json(
        "member", "show", "--fleet-id", str(fleet.fleet_id), "--member-id", str(watcher)
    )
    assert shown["kind"] == "monitor"


def test_member_show_json(cli, fleet, add_member, migrated, tmux):
    worker = add_member(fleet, "worker")
    shown = cli.json(
        "member", "show", "--fleet-id", str(fleet.fleet_id), "--member-id", str(worker)
    )
    assert set(shown) == {
        "agent_id", "name", "description", "status", "registered_at", "kind", "skills",
        "placement", "pane_state", "agent_status", "agent_status_since", "agent_status_note",
    }  # fmt: skip
    assert shown["agent_id"] == worker
    assert shown["kind"] == "member"
    assert shown["skills"] == []
    assert shown["pane_state"] == "running"
    row = migrated.row("SELECT * FROM agent_placements WHERE agent_id = ?", worker)
    assert shown["placement"] == {
        "director_agent_id": fleet.director,
        "backend": "tmux",
        "mux_session": "main",
        "mux_window_id": tmux.window_id,
        "mux_pane_id": "%1",
        "coding_agent": "claude",
        "created_at": row["created_at"],
        "ready_at": row["ready_at"],
        "ready_rule": "hook",
        "host": os.uname().nodename,  # no CAFLEET_HOST: the machine's name
        "relay": {"alive": False, "pid": None, "seen_at": None},  # no `cafleet relay` runs
    }
    assert row["host"] == os.uname().nodename
    assert row["ready_at"] is not None
    admin = cli.json(
        "member", "show", "--fleet-id", str(fleet.fleet_id), "--member-id", str(fleet.admin)
    )
    assert admin["placement"] is None
    assert admin["pane_state"] is None
    assert admin["kind"] == "administrator"
    director = cli.json(
        "member", "show", "--fleet-id", str(fleet.fleet_id), "--member-id", str(fleet.director)
    )
    assert director["pane_state"] is None  # only members' panes are looked up
    assert director["placement"]["ready_rule"] == "director"


def test_member_show_hides_foreign_unknown_and_deregistered_agents_alike(
    cli, make_fleet, add_member, migrated
):
    mine, other = make_fleet("mine"), make_fleet("other")
    gone = add_member(mine, "gone")
    migrated.execute("UPDATE agents SET status='deregistered' WHERE agent_id=?", gone)
    for target in (other.director, gone, 4242):
        line = cli.fails(
            "member", "show", "--fleet-id", str(mine.fleet_id), "--member-id", str(target)
        )
        assert line == f"Error: Agent {target} not found"


# --------------------------------------------------------------------------- list


def test_member_list_without_members(cli, fleet):
    assert cli.ok("member", "list", "--fleet-id", str(fleet.fleet_id)) == "0 members.\n"
    assert cli.json("member", "list", "--fleet-id", str(fleet.fleet_id)) == []


def test_member_list_one_member(cli, fleet, add_member, migrated, tmux):
    worker = add_member(fleet, "worker")
    lines = cli.ok("member", "list", "--fleet-id", str(fleet.fleet_id)).splitlines()
    assert lines[0] == "1 member:"
    rows = assert_table(
        lines[1:],
        [
            "agent_id",
            "name",
            "status",
            "agent",
            "coding_agent",
            "session",
            "window_id",
            "pane_id",
            "created_at",
        ],
    )
    created = migrated.scalar("SELECT created_at FROM agent_placements WHERE agent_id=?", worker)
    assert rows == [
        [
            str(worker),
            "worker",
            "active",
            "unknown",
            "claude",
            "main",
            tmux.window_id,
            "%1",
            created,
        ]
    ]


def test_member_list_members_and_monitor_in_id_order(cli, fleet, add_member):
    first = add_member(fleet, "first", coding_agent="opencode")
    pending = add_member(fleet, "pending-one", pane_id=None)
    watcher = add_member(fleet, "watcher", kind="monitoring-member")
    lines = cli.ok("member", "list", "--fleet-id", str(fleet.fleet_id)).splitlines()
    assert lines[0] == "3 members:"
    rows = assert_table(
        lines[1:],
        [
            "agent_id",
            "name",
            "status",
            "agent",
            "coding_agent",
            "session",
            "window_id",
            "pane_id",
            "created_at",
        ],
    )
    assert [r[0] for r in rows] == [str(first), str(pending), str(watcher)]
    assert rows[0][3:5] == ["unknown", "opencode"]  # no launch pad: nothing says
    assert rows[1][3] == "-"  # a pending pane has no agent yet
    assert rows[1][7] == "-"


def test_member_list_excludes_deregistered_members(cli, fleet, add_member, migrated):
    add_member(fleet, "kept")
    gone = add_member(fleet, "gone")
    migrated.execute("UPDATE agents SET status='deregistered' WHERE agent_id=?", gone)
    listed = cli.json("member", "list", "--fleet-id", str(fleet.fleet_id))
    assert [m["name"] for m in listed] == ["kept"]


def test_member_list_json(cli, fleet, add_member):
    worker = add_member(fleet, "worker")
    [listed] = cli.json("member", "list", "--fleet-id", str(fleet.fleet_id))
    assert set(listed) == {
        "agent_id",
        "name",
        "description",
        "status",
        "registered_at",
        "placement",
        "pane_state",
        "agent_status",
        "agent_status_since",
        "agent_status_note",
    }
    assert listed["agent_id"] == worker
    assert listed["placement"]["director_agent_id"] == fleet.director
    assert listed["placement"]["ready_rule"] == "hook"
    assert listed["pane_state"] == "running"


def test_member_list_all(cli, fleet, add_member, tmux):
    worker = add_member(fleet, "worker")
    lines = cli.ok("member", "list", "--fleet-id", str(fleet.fleet_id), "--all").splitlines()
    assert lines[0] == "3 agents:"
    rows = assert_table(
        lines[1:],
        [
            "agent_id", "name", "status", "kind", "agent", "coding_agent", "session", "window_id",
            "pane_id",
            "created_at",
        ],
    )  # fmt: skip
    assert [r[:4] for r in rows] == [
        [str(fleet.director), "Director", "active", "director"],
        [str(fleet.admin), "Administrator", "active", "administrator"],
        [str(worker), "worker", "active", "member"],
    ]
    assert rows[0][4:9] == ["-", "claude", "main", tmux.window_id, tmux.pane_id]
    assert rows[1][4:] == ["-"] * 6


def test_member_list_all_json_adds_kind(cli, fleet):
    listed = cli.json("member", "list", "--fleet-id", str(fleet.fleet_id), "--all")
    assert [(m["agent_id"], m["kind"]) for m in listed] == [
        (fleet.director, "director"),
        (fleet.admin, "administrator"),
    ]
    assert listed[1]["placement"] is None


def test_member_list_all_and_activity_are_exclusive(cli, fleet):
    result = cli("member", "list", "--fleet-id", str(fleet.fleet_id), "--all", "--activity")
    assert result.code == 2
    assert result.stderr.startswith("Usage: cafleet member list")
    assert result.stderr.rstrip().endswith("Error: --all and --activity are mutually exclusive.")


def test_member_list_requires_fleet_id(cli, migrated):
    assert cli.fails("member", "list").startswith("Error: --fleet-id <int> is required")


def test_member_list_of_a_deleted_fleet(cli, fleet):
    cli.ok("fleet", "delete", "--fleet-id", str(fleet.fleet_id))
    lines = cli.ok("member", "list", "--fleet-id", str(fleet.fleet_id)).splitlines()
    assert lines[0].startswith("(fleet deleted ")
    assert lines[0].endswith("; its history is read-only)")
    assert lines[1:] == ["0 members."]


# --------------------------------------------------------------------------- the pane's state


def test_member_whose_pane_was_closed_shows_pane_gone(cli, fleet, add_member, tmux):
    kept = add_member(fleet, "kept")
    closed = add_member(fleet, "closed", coding_agent="codex")
    pane = cli.json(
        "member", "show", "--fleet-id", str(fleet.fleet_id), "--member-id", str(closed)
    )["placement"]["mux_pane_id"]
    tmux.run("kill-pane", "-t", pane)  # behind CAFleet's back
    fid = str(fleet.fleet_id)

    assert cli.ok("member", "show", "--fleet-id", fid, "--member-id", str(closed)) == (
        f"{closed} closed pane-gone\n"
    )
    full = cli.ok("member", "show", "--fleet-id", fid, "--member-id", str(closed), "--full")
    assert "  status:      pane-gone" in full.splitlines()
    rows = assert_table(
        cli.ok("member", "list", "--fleet-id", fid).splitlines()[1:],
        [
            "agent_id",
            "name",
            "status",
            "agent",
            "coding_agent",
            "session",
            "window_id",
            "pane_id",
            "created_at",
        ],
    )
    assert [r[:3] for r in rows] == [
        [str(kept), "kept", "active"],
        [str(closed), "closed", "pane-gone"],
    ]
    assert rows[1][3] == "exited"
    assert rows[1][7] == pane
    activity = assert_table(
        cli.ok("member", "list", "--fleet-id", fid, "--activity").splitlines()[1:],
        ["agent_id", "name", "status", "agent", "last_sent", "last_recv", "last_ack", "idle"],
    )
    assert [r[2] for r in activity] == ["active", "pane-gone"]
    listed = cli.json("member", "list", "--fleet-id", fid)
    assert [(m["status"], m["pane_state"]) for m in listed] == [
        ("active", "running"),
        ("active", "gone"),  # the registry still holds it: only the pane is gone
    ]


def test_member_not_yet_seen_ready_shows_starting(cli, fleet, add_member):
    fid = str(fleet.fleet_id)
    starting = add_member(fleet, "early", ready=False)
    pending = add_member(fleet, "pending", pane_id=None)

    assert cli.ok("member", "show", "--fleet-id", fid, "--member-id", str(starting)) == (
        f"{starting} early starting\n"
    )
    listed = {m["agent_id"]: m for m in cli.json("member", "list", "--fleet-id", fid)}
    assert listed[starting]["pane_state"] == "starting"
    assert (
        listed[starting]["placement"]["ready_at"],
        listed[starting]["placement"]["ready_rule"],
    ) == (None, None)
    # no pane recorded yet: nothing to look up
    assert (listed[pending]["status"], listed[pending]["pane_state"]) == ("active", None)


def test_member_list_without_a_reachable_multiplexer_keeps_the_registry_status(
    cli, fleet, add_member, migrated, tmp_path
):
    worker = add_member(fleet, "worker")
    migrated.execute(
        "UPDATE agent_placements SET mux_socket = ? WHERE agent_id = ?",
        str(tmp_path / "no-such-tmux-socket"),
        worker,
    )
    [listed] = cli.json("member", "list", "--fleet-id", str(fleet.fleet_id))
    assert (listed["status"], listed["pane_state"]) == ("active", None)  # unknown, not gone
    assert (
        cli.ok("member", "show", "--fleet-id", str(fleet.fleet_id), "--member-id", str(worker))
        == f"{worker} worker active\n"
    )


# --------------------------------------------------------------------------- --activity


@pytest.fixture
def activity(cli, fleet, add_member, migrated):
    """Q broadcasts; then the Director sends to W, W acks it and W answers the Director.

    A third member joins after the broadcast and never sends or receives anything.
    """
    fid = str(fleet.fleet_id)
    w = add_member(fleet, "w")
    q = add_member(fleet, "q")

    def msg(*args):
        return cli.json("message", *args[:1], "--fleet-id", fid, *args[1:])

    msg("broadcast", "--agent-id", str(q), "--text", "all hands")
    idle = add_member(fleet, "idle")
    sent = msg("send", "--agent-id", str(fleet.director), "--to", str(w), "--text", "do it")
    msg("ack", "--agent-id", str(w), "--task-id", str(sent["task"]["id"]))
    msg("send", "--agent-id", str(w), "--to", str(fleet.director), "--text", "done")
    tasks = {r["task_id"]: r for r in migrated.rows("SELECT * FROM tasks")}
    return {"w": w, "q": q, "idle": idle, "tasks": tasks, "to_w": sent["task"]["id"]}


def test_member_list_activity_json(cli, fleet, activity):
    listed = cli.json("member", "list", "--fleet-id", str(fleet.fleet_id), "--activity")
    by_id = {m["agent_id"]: m for m in listed}
    assert list(by_id) == [activity["w"], activity["q"], activity["idle"]]
    tasks = activity["tasks"]
    to_w = tasks[activity["to_w"]]
    from_w = max(
        (t for t in tasks.values() if t["from_agent_id"] == activity["w"]),
        key=lambda t: t["task_id"],
    )
    broadcast = [t for t in tasks.values() if t["from_agent_id"] == activity["q"]]
    delivery_to_q_sender = max(t["created_at"] for t in broadcast if t["type"] == "unicast")

    w = by_id[activity["w"]]
    assert w["last_sent"] == from_w["created_at"]
    # received = creation of the newest owned message, not the time it was acknowledged
    assert w["last_recv"] == to_w["created_at"]
    assert w["last_ack"] == to_w["status_timestamp"]
    assert to_w["status_timestamp"] > to_w["created_at"]
    assert type(w["idle"]) is int  # whole seconds, as upstream gives it
    assert 0 <= w["idle"] < 60

    q = by_id[activity["q"]]
    assert q["last_sent"] == delivery_to_q_sender
    assert q["last_recv"] is None  # its own broadcast summary does not count
    assert q["last_ack"] is None

    idle = by_id[activity["idle"]]
    assert (idle["last_sent"], idle["last_recv"], idle["last_ack"], idle["idle"]) == (
        None,
        None,
        None,
        None,
    )
    assert set(idle) == {
        "agent_id", "name", "description", "status", "registered_at", "placement",
        "pane_state", "agent_status", "agent_status_since", "agent_status_note", "last_sent",
        "last_recv", "last_ack", "idle",
    }  # fmt: skip


def test_member_list_activity_text(cli, fleet, activity):
    lines = cli.ok("member", "list", "--fleet-id", str(fleet.fleet_id), "--activity").splitlines()
    assert lines[0] == "3 members:"
    rows = assert_table(
        lines[1:],
        ["agent_id", "name", "status", "agent", "last_sent", "last_recv", "last_ack", "idle"],
    )
    listed = cli.json("member", "list", "--fleet-id", str(fleet.fleet_id), "--activity")
    for row, item in zip(rows, listed, strict=True):
        assert row[:3] == [str(item["agent_id"]), item["name"], "active"]
        for cell, key in zip(row[4:7], ("last_sent", "last_recv", "last_ack"), strict=True):
            assert cell == (hhmmss(item[key]) if item[key] else "-")
            assert cell == "-" or re.fullmatch(HHMMSS, cell)
    assert rows[2][4:] == ["-", "-", "-", "-"]
    assert re.fullmatch(r"\d+[smh]", rows[0][7])


def test_member_list_activity_without_members(cli, fleet):
    assert cli.ok("member", "list", "--fleet-id", str(fleet.fleet_id), "--activity") == (
        "0 members.\n"
    )


def test_member_list_and_show_print_a_name_with_controls_escaped(cli, fleet, add_member):
    # names are free text (member create validates none of this); the text output shows it
    name = "evil\x1b]52;c;cHduZWQ=\x07\rFAKE\u202e"
    worker = add_member(fleet, name)
    listed = cli.ok("member", "list", "--fleet-id", str(fleet.fleet_id))
    shown = cli.ok("member", "show", "--fleet-id", str(fleet.fleet_id), "--member-id", str(worker))
    for out in (listed, shown):
        assert all(line.isprintable() for line in out.split("\n")), repr(out)
        assert "evil\\x1b]52;c;cHduZWQ=\\x07\\rFAKE\\u202e" in out
    assert [m["name"] for m in cli.json("member", "list", "--fleet-id", str(fleet.fleet_id))] == [
        name
    ]

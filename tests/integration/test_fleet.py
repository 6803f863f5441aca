"""`cafleet fleet create/list/show/delete` end to end."""

from __future__ import annotations

import json
import os
import re
from datetime import datetime

import pytest

pytestmark = pytest.mark.both_stores  # and on PostgreSQL (conftest.py)

TS_RE = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00"
OUTSIDE = "Error: cafleet fleet create must be run inside a tmux or herdr session ("


def parse_ts(value: str) -> datetime:
    assert re.fullmatch(TS_RE, value), value
    return datetime.fromisoformat(value)


# --------------------------------------------------------------------------- create


def test_fleet_create_prints_ids(tmux_cli, migrated):
    out = tmux_cli.ok("fleet", "create", "--name", "my-project")
    match = re.fullmatch(r"(\d+) director=(\d+) admin=(\d+)\n", out)
    assert match, out
    fleet_id, director, admin = map(int, match.groups())
    row = migrated.row("SELECT * FROM fleets WHERE fleet_id = ?", fleet_id)
    assert row["name"] == "my-project"
    assert row["director_agent_id"] == director
    assert row["deleted_at"] is None
    assert director != admin


def test_fleet_create_records_the_calling_tmux_pane(tmux_cli, tmux, migrated, fleet):
    placement = migrated.row("SELECT * FROM agent_placements WHERE agent_id = ?", fleet.director)
    assert placement["backend"] == "tmux"
    assert placement["mux_session"] == "main"
    assert placement["mux_window_id"] == tmux.window_id
    assert placement["mux_pane_id"] == tmux.pane_id
    assert placement["mux_socket"] == tmux.socket
    assert placement["director_agent_id"] is None
    assert placement["coding_agent"] == "claude"


def test_fleet_create_bootstraps_director_and_administrator(migrated, fleet):
    director = migrated.row("SELECT * FROM agents WHERE agent_id = ?", fleet.director)
    assert director["fleet_id"] == fleet.fleet_id
    assert director["name"] == "Director"
    assert director["description"] == "Root Director for this fleet"
    assert director["status"] == "active"
    assert json.loads(director["agent_card_json"]) == {
        "name": "Director",
        "description": "Root Director for this fleet",
        "skills": [],
    }
    admin = migrated.row("SELECT * FROM agents WHERE agent_id = ?", fleet.admin)
    assert admin["fleet_id"] == fleet.fleet_id
    assert admin["name"] == "Administrator"
    assert admin["description"] == f"Built-in administrator agent for fleet {fleet.fleet_id}"
    card = json.loads(admin["agent_card_json"])
    assert card["cafleet"] == {"kind": "builtin-administrator"}
    assert migrated.rows("SELECT * FROM agent_placements WHERE agent_id = ?", fleet.admin) == []
    schedules = {
        r["agent_id"]: (r["interval_seconds"], r["enabled"])
        for r in migrated.rows("SELECT * FROM monitor_config")
    }
    assert schedules == {fleet.director: (180, 1)}


def test_fleet_create_declares_the_coding_agent(tmux_cli, migrated):
    made = tmux_cli.json("fleet", "create", "--name", "p", "--coding-agent", "codex")
    assert made["director"]["placement"]["coding_agent"] == "codex"
    placement = migrated.row(
        "SELECT coding_agent FROM agent_placements WHERE agent_id = ?",
        made["director"]["agent_id"],
    )
    assert placement["coding_agent"] == "codex"


def test_fleet_create_full_rendering(tmux_cli, tmux, migrated):
    out = tmux_cli.ok("fleet", "create", "--name", "my-project", "--full")
    lines = out.splitlines()
    assert [line[:18] for line in lines] == [
        "fleet_id:         ",
        "director:         ",
        "name:             ",
        "created_at:       ",
        "director_name:    ",
        "pane:             ",
        "administrator:    ",
    ]
    values = [line[18:] for line in lines]
    assert values[2] == "my-project"
    parse_ts(values[3])
    assert values[4] == "Director"
    assert values[5] == f"main:{tmux.window_id}:{tmux.pane_id}"
    row = migrated.row("SELECT * FROM fleets")
    assert values[0] == str(row["fleet_id"])
    assert values[1] == str(row["director_agent_id"])


@pytest.mark.parametrize("where", ["global", "local"])
def test_fleet_create_json(tmux_cli, tmux, migrated, where):
    args = ["fleet", "create", "--name", "my-project"]
    out = tmux_cli.ok("--json", *args) if where == "global" else tmux_cli.ok(*args, "--json")
    made = json.loads(out)
    assert set(made) == {"fleet_id", "name", "created_at", "administrator_agent_id", "director"}
    assert made["name"] == "my-project"
    director = made["director"]
    assert set(director) == {"agent_id", "name", "description", "registered_at", "placement"}
    assert director["name"] == "Director"
    assert director["description"] == "Root Director for this fleet"
    assert director["placement"] == {
        "director_agent_id": None,
        "backend": "tmux",
        "mux_session": "main",
        "mux_window_id": tmux.window_id,
        "mux_pane_id": tmux.pane_id,
        "coding_agent": "claude",
        "created_at": director["placement"]["created_at"],
        # the Director's own pane is ready from the start: nothing waits for it
        "ready_at": director["placement"]["created_at"],
        "ready_rule": "director",
        "host": os.uname().nodename,
    }
    parse_ts(made["created_at"])
    parse_ts(director["registered_at"])


def test_the_same_pane_may_direct_several_fleets(make_fleet, migrated, tmux):
    first, second = make_fleet("one"), make_fleet("two")
    assert first.fleet_id != second.fleet_id
    panes = migrated.rows(
        "SELECT mux_pane_id FROM agent_placements WHERE agent_id IN (?, ?)",
        first.director,
        second.director,
    )
    assert [r[0] for r in panes] == [tmux.pane_id, tmux.pane_id]


def test_fleet_create_outside_tmux_fails_with_the_cause(cli, migrated):
    result = cli("fleet", "create", "--name", "p")
    assert result.code == 1
    assert result.stdout == ""
    assert result.stderr == (
        OUTSIDE + "no supported multiplexer detected: neither HERDR_ENV nor TMUX is set;"
        " run cafleet inside a tmux or herdr session, or set CAFLEET_MULTIPLEXER)\n"
    )
    assert migrated.count("fleets") == 0
    assert migrated.count("agents") == 0


@pytest.mark.parametrize(
    ("overrides", "cause"),
    [
        ({"TMUX_PANE": None}, "TMUX_PANE is not set; not running inside a tmux pane"),
        (
            {"HERDR_ENV": "1"},
            "ambiguous multiplexer environment: both HERDR_ENV and TMUX are set;"
            " set CAFLEET_MULTIPLEXER to 'tmux' or 'herdr' to disambiguate",
        ),
    ],
    ids=["no-pane", "ambiguous"],
)
def test_fleet_create_resolution_failures_name_their_cause(tmux_cli, migrated, overrides, cause):
    assert tmux_cli.fails("fleet", "create", "--name", "p", env=overrides) == (f"{OUTSIDE}{cause})")
    assert migrated.count("fleets") == 0


def test_fleet_create_with_a_vanished_pane_fails_with_the_tmux_cause(tmux_cli, migrated):
    line = tmux_cli.fails("fleet", "create", "--name", "p", env={"TMUX_PANE": "%999"})
    assert line.startswith(OUTSIDE + "tmux ")
    assert line.endswith(")")
    assert migrated.count("fleets") == 0


def test_fleet_create_with_a_dead_tmux_server_fails_with_the_cause(cli, migrated, tmp_path):
    socket = tmp_path / "no-such-socket"
    line = cli.fails(
        "fleet", "create", "--name", "p", env={"TMUX": f"{socket},0,0", "TMUX_PANE": "%0"}
    )
    assert line.startswith(OUTSIDE)
    assert str(socket) in line
    assert line.endswith(")")
    assert migrated.count("fleets") == 0


def test_fleet_create_requires_a_name(tmux_cli, migrated):
    result = tmux_cli("fleet", "create")
    assert result.code == 2
    assert "Missing option '--name'" in result.stderr


@pytest.mark.sqlite_only  # a database file that does not exist
def test_fleet_create_on_a_missing_database(tmux_cli, db_path):
    line = tmux_cli.fails("fleet", "create", "--name", "p")
    assert line == f"Error: database {db_path} does not exist; run 'cafleet setup' to create it"
    assert not db_path.exists()


# --------------------------------------------------------------------------- list


def test_fleet_list_empty(cli, migrated):
    assert cli.ok("fleet", "list") == "No fleets found.\n"
    assert cli.json("fleet", "list") == []


def test_fleet_list_table_newest_first(cli, make_fleet):
    old = make_fleet("old")
    new = make_fleet("a-much-longer-fleet-name")
    lines = cli.ok("fleet", "list").splitlines()
    assert re.split(r"\s{2,}", lines[0]) == ["FLEET_ID", "DIRECTOR", "NAME", "AGENTS", "CREATED_AT"]
    assert len(lines) == 4
    name_width = len("a-much-longer-fleet-name")
    header_cols = [m.start() for m in re.finditer(r"\S+", lines[0])]
    dash_cols = [m.start() for m in re.finditer(r"-+", lines[1])]
    assert header_cols == dash_cols
    assert [len(d) for d in re.findall(r"-+", lines[1])][2] == name_width
    rows = [re.split(r"\s{2,}", line) for line in lines[2:]]
    assert [int(r[0]) for r in rows] == [new.fleet_id, old.fleet_id]
    assert [int(r[1]) for r in rows] == [new.director, old.director]
    assert [r[2] for r in rows] == ["a-much-longer-fleet-name", "old"]
    assert [r[3] for r in rows] == ["2", "2"]
    for r in rows:
        parse_ts(r[4])
    for line in lines[2:]:
        assert [m.start() for m in re.finditer(r"\S+", line)] == header_cols


@pytest.mark.parametrize("where", ["global", "local"])
def test_fleet_list_json(cli, make_fleet, where):
    first, second = make_fleet("one"), make_fleet("two")
    out = (
        cli.ok("--json", "fleet", "list")
        if where == "global"
        else cli.ok("fleet", "list", "--json")
    )
    assert ", " not in out
    assert '": ' not in out
    rows = json.loads(out)
    assert [(r["fleet_id"], r["director_agent_id"], r["name"], r["agent_count"]) for r in rows] == [
        (second.fleet_id, second.director, "two", 2),
        (first.fleet_id, first.director, "one", 2),
    ]
    assert all(
        set(r)
        == {"fleet_id", "director_agent_id", "name", "created_at", "agent_count", "deleted_at"}
        for r in rows
    )


def test_fleet_list_counts_active_agents_only(cli, fleet, add_member, migrated):
    add_member(fleet, "worker")
    gone = add_member(fleet, "retired")
    migrated.execute("UPDATE agents SET status = 'deregistered' WHERE agent_id = ?", gone)
    [row] = cli.json("fleet", "list")
    assert row["agent_count"] == 3


def test_fleet_list_hides_deleted_fleets(cli, make_fleet):
    keep, drop = make_fleet("keep"), make_fleet("drop")
    cli.ok("fleet", "delete", "--fleet-id", str(drop.fleet_id))
    assert [r["fleet_id"] for r in cli.json("fleet", "list")] == [keep.fleet_id]
    assert [r["fleet_id"] for r in cli.json("fleet", "list", "--all")] == [
        drop.fleet_id,
        keep.fleet_id,
    ]


def test_fleet_json_writes_non_ascii_raw(tmux_cli, migrated):
    out = tmux_cli.ok("--json", "fleet", "create", "--name", "café-αβ")
    assert "café-αβ" in out
    assert "\\u" not in out


# --------------------------------------------------------------------------- show


def test_fleet_show_aligned_labels(cli, fleet):
    lines = cli.ok("fleet", "show", "--fleet-id", str(fleet.fleet_id)).splitlines()
    assert lines[0] == f"fleet_id:   {fleet.fleet_id}"
    assert lines[1] == "name:       proj"
    assert lines[2].startswith("created_at: ")
    parse_ts(lines[2][12:])
    assert len(lines) == 3


@pytest.mark.parametrize("where", ["global", "local"])
def test_fleet_show_json(cli, fleet, where):
    args = ["fleet", "show", "--fleet-id", str(fleet.fleet_id)]
    out = cli.ok("--json", *args) if where == "global" else cli.ok(*args, "--json")
    shown = json.loads(out)
    assert shown == {
        "fleet_id": fleet.fleet_id,
        "name": "proj",
        "created_at": shown["created_at"],
        "deleted_at": None,
        "director_agent_id": fleet.director,
    }


def test_fleet_show_includes_deleted_fleets(cli, fleet):
    cli.ok("fleet", "delete", "--fleet-id", str(fleet.fleet_id))
    lines = cli.ok("fleet", "show", "--fleet-id", str(fleet.fleet_id)).splitlines()
    assert len(lines) == 4
    assert lines[3].startswith("deleted_at: ")
    deleted = parse_ts(lines[3][12:])
    assert deleted >= parse_ts(lines[2][12:])
    shown = cli.json("fleet", "show", "--fleet-id", str(fleet.fleet_id))
    parse_ts(shown["deleted_at"])


def test_fleet_show_missing(cli, migrated):
    assert cli.fails("fleet", "show", "--fleet-id", "99") == "Error: fleet '99' not found."


def test_fleet_show_requires_fleet_id(cli, migrated):
    assert cli.fails("fleet", "show").startswith("Error: --fleet-id <int> is required")


# --------------------------------------------------------------------------- delete


def test_fleet_delete_text(cli, fleet):
    out = cli.ok("fleet", "delete", "--fleet-id", str(fleet.fleet_id))
    assert out == f"Deleted fleet {fleet.fleet_id}. Deregistered 2 agents.\n"


@pytest.mark.parametrize("where", ["global", "local"])
def test_fleet_delete_json(cli, fleet, where):
    args = ["fleet", "delete", "--fleet-id", str(fleet.fleet_id)]
    out = cli.ok("--json", *args) if where == "global" else cli.ok(*args, "--json")
    assert json.loads(out) == {"fleet_id": fleet.fleet_id, "deregistered": 2, "panes": []}


def test_fleet_delete_soft_deletes_in_storage(cli, fleet, migrated):
    migrated.execute(
        "INSERT INTO monitor_runtime (fleet_id, pid, tick_seconds) VALUES (?, NULL, 5)",
        fleet.fleet_id,
    )
    migrated.execute(
        "INSERT INTO tasks (context_id, from_agent_id, to_agent_id, type, created_at,"
        " status_state, status_timestamp, text) VALUES (?, ?, ?, 'unicast', ?, 'input_required',"
        " ?, 'kept')",
        fleet.director,
        fleet.admin,
        fleet.director,
        "2026-01-01T00:00:00.000000+00:00",
        "2026-01-01T00:00:00.000000+00:00",
    )
    cli.ok("fleet", "delete", "--fleet-id", str(fleet.fleet_id))
    fleet_row = migrated.row("SELECT * FROM fleets WHERE fleet_id = ?", fleet.fleet_id)
    deleted_at = parse_ts(fleet_row["deleted_at"])
    agents = migrated.rows("SELECT * FROM agents WHERE fleet_id = ?", fleet.fleet_id)
    assert {a["status"] for a in agents} == {"deregistered"}
    assert {parse_ts(a["deregistered_at"]) for a in agents} == {deleted_at}
    assert migrated.count("agent_placements") == 0
    assert migrated.count("monitor_config") == 0
    assert migrated.count("monitor_runtime") == 0
    assert migrated.count("tasks") == 1


def test_fleet_delete_is_idempotent(cli, fleet):
    cli.ok("fleet", "delete", "--fleet-id", str(fleet.fleet_id))
    again = cli.ok("fleet", "delete", "--fleet-id", str(fleet.fleet_id))
    assert again == f"Deleted fleet {fleet.fleet_id}. Deregistered 0 agents.\n"


def test_fleet_delete_missing(cli, migrated):
    assert cli.fails("fleet", "delete", "--fleet-id", "99") == "Error: fleet '99' not found."


def test_fleet_delete_leaves_the_director_pane_alone(cli, fleet, tmux):
    cli.ok("fleet", "delete", "--fleet-id", str(fleet.fleet_id))
    assert tmux.pane_id in tmux.run("list-panes", "-a", "-F", "#{pane_id}").split()


def test_deleted_fleet_refuses_message_commands(cli, fleet):
    fid = str(fleet.fleet_id)
    cli.ok("fleet", "delete", "--fleet-id", fid)
    expected = f"Error: fleet {fid} is deleted; its history is read-only"
    assert cli.fails(
        "message", "send", "--fleet-id", fid, "--agent-id", str(fleet.admin),
        "--to", str(fleet.director), "--text", "hi",
    ) == expected  # fmt: skip
    assert cli.fails("message", "poll", "--fleet-id", fid, "--agent-id", str(fleet.director)) == (
        expected
    )

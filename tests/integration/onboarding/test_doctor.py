"""`cafleet doctor`: every section printed, exit code by findings, text and JSON (§5.2)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

NO_MUX = (
    "no supported multiplexer detected: neither HERDR_ENV nor TMUX is set; run cafleet inside"
    " a tmux or herdr session, or set CAFLEET_MULTIPLEXER"
)
NO_INSTALLS = "  (no skills install recorded; run 'cafleet setup')"


def section(stdout, name):
    """The indented lines under `<name>:`."""
    lines = stdout.splitlines()
    start = lines.index(f"{name}:") + 1
    block = []
    for line in lines[start:]:
        if not line.startswith("  "):
            break
        block.append(line)
    return block


def skill_row(line):
    """`  claude:      0.1.0 (<iso>) ok` -> ("claude", "0.1.0", "<iso>", "ok")."""
    label, rest = line[:15], line[15:]
    version, stamp, state = rest.split(" ")
    return label.strip().rstrip(":"), version, stamp.strip("()"), state


# --------------------------------------------------------------------------- outside tmux


def test_doctor_outside_a_multiplexer_prints_every_section_and_exits_1(installed, cli_version):
    result = installed.run("doctor")

    assert result.code == 1, result
    assert result.stderr == ""
    assert [line for line in result.lines if not line.startswith("  ")] == [
        "multiplexer:",
        "database:",
        "skills:",
    ]
    assert section(result.stdout, "multiplexer") == [f"  error:         {NO_MUX}"]
    assert section(result.stdout, "database") == [
        f"  url:           sqlite:///{installed.db_path}",
        "  revision:      0002 (head)",
        "  journal_mode:  wal",
        "  pending:       0 deliveries",
    ]
    cli_line, claude_line = section(result.stdout, "skills")
    assert cli_line == f"  cli_version: {cli_version}"
    agent, version, stamp, state = skill_row(claude_line)
    assert (agent, version, state) == ("claude", cli_version, "ok")
    assert datetime.fromisoformat(stamp).tzinfo is not None


def test_doctor_json_outside_a_multiplexer(installed, cli_version):
    result = installed.run("--json", "doctor")

    assert result.code == 1, result
    assert result.stderr == ""
    assert result.stdout.count("\n") == 1
    report = json.loads(result.stdout)
    assert result.stdout == json.dumps(report, separators=(",", ":"), ensure_ascii=False) + "\n"
    assert list(report) == ["ok", "multiplexer", "database", "skills"]
    assert report["ok"] is False
    assert report["multiplexer"] == {
        "backend": None,
        "session": None,
        "window_id": None,
        "pane_id": None,
        "presence_var": None,
        "presence_value": None,
        "error": NO_MUX,
    }
    assert report["database"] == {
        "url": f"sqlite:///{installed.db_path}",
        "revision": "0002",
        "head": "0002",
        "journal_mode": "wal",
        "pending_deliveries": 0,
    }
    assert report["skills"]["cli_version"] == cli_version
    (install,) = report["skills"]["installs"]
    assert list(install) == ["coding_agent", "cafleet_version", "installed_at", "current"]
    assert install["coding_agent"] == "claude"
    assert install["cafleet_version"] == cli_version
    assert install["current"] is True
    assert datetime.fromisoformat(install["installed_at"]).tzinfo is not None


def test_doctor_json_flag_after_the_subcommand_is_a_usage_error(installed):
    result = installed.run("doctor", "--json")

    assert result.code == 2, result
    assert "No such option" in result.stderr


def test_doctor_with_the_database_missing(sandbox, cli_version):
    result = sandbox.run("doctor")

    assert result.code == 1, result
    assert result.stderr == ""
    assert section(result.stdout, "database") == [
        f"  url:           sqlite:///{sandbox.db_path}",
        "  revision:      missing (run 'cafleet setup')",
        "  journal_mode:  -",
        "  pending:       -",
    ]
    assert section(result.stdout, "skills") == [f"  cli_version: {cli_version}", NO_INSTALLS]
    assert not sandbox.db_path.exists()


def test_doctor_json_with_the_database_missing_uses_nulls(sandbox):
    result = sandbox.run("--json", "doctor")

    assert result.code == 1, result
    report = json.loads(result.stdout)
    assert report["ok"] is False
    assert report["database"] == {
        "url": f"sqlite:///{sandbox.db_path}",
        "revision": None,
        "head": "0002",
        "journal_mode": None,
        "pending_deliveries": None,
    }
    assert report["skills"]["installs"] == []


def test_doctor_with_a_database_behind_head(installed):
    installed.sql("UPDATE alembic_version SET version_num = '0001'")

    result = installed.run("doctor")

    assert result.code == 1, result
    assert "  revision:      0001 (behind head 0002)" in result.lines


def test_doctor_with_no_installs_recorded(migrated, cli_version):
    result = migrated.run("doctor")

    assert result.code == 1, result
    assert "  revision:      0002 (head)" in result.lines
    assert section(result.stdout, "skills") == [f"  cli_version: {cli_version}", NO_INSTALLS]


def test_doctor_marks_a_stale_record(installed):
    installed.record_version("0.0.1")

    result = installed.run("doctor")

    assert result.code == 1, result
    _, claude_line = section(result.stdout, "skills")
    agent, version, _, state = skill_row(claude_line)
    assert (agent, version, state) == ("claude", "0.0.1", "STALE")


def test_doctor_json_marks_a_stale_record_not_current(installed):
    installed.record_version("0.0.1")

    report = json.loads(installed.run("--json", "doctor").stdout)

    (install,) = report["skills"]["installs"]
    assert (install["cafleet_version"], install["current"]) == ("0.0.1", False)


def test_doctor_lists_every_install_in_coding_agent_order(migrated):
    migrated.ok("setup", "skill", "--agent", "opencode", "--agent", "claude", "--agent", "codex")
    migrated.record_version("0.0.1", "codex")

    _, *rows = section(migrated.run("doctor").stdout, "skills")

    assert [(agent, state) for agent, _, _, state in map(skill_row, rows)] == [
        ("claude", "ok"),
        ("codex", "STALE"),
        ("opencode", "ok"),
    ]


def seed_deliveries(sandbox, *deliveries):
    """One fleet, one agent, one message per (state, age in seconds) delivery."""
    now = datetime.now(UTC)
    stamp = now.isoformat(timespec="microseconds")
    sandbox.sql("INSERT INTO fleets (fleet_id, name, created_at) VALUES (1, 'f', ?)", stamp)
    sandbox.sql(
        "INSERT INTO agents (agent_id, fleet_id, name, description, status, registered_at,"
        " agent_card_json) VALUES (1, 1, 'a', 'd', 'active', ?, '{}')",
        stamp,
    )
    for task_id, (state, age) in enumerate(deliveries, start=1):
        created = (now - timedelta(seconds=age)).isoformat(timespec="microseconds")
        sandbox.sql(
            "INSERT INTO tasks (task_id, context_id, from_agent_id, to_agent_id, type,"
            " created_at, status_state, status_timestamp, text)"
            " VALUES (?, 1, 1, 1, 'unicast', ?, 'input_required', ?, 'hi')",
            task_id,
            created,
            created,
        )
        sandbox.sql(
            "INSERT INTO deliveries (task_id, recipient_agent_id, state, created_at)"
            " VALUES (?, 1, ?, ?)",
            task_id,
            state,
            created,
        )


def test_doctor_counts_deliveries_pending_for_more_than_a_minute(installed):
    seed_deliveries(installed, ("pending", 600), ("pending", 120), ("pending", 5), ("sent", 600))

    result = installed.run("doctor")

    assert "  pending:       2 deliveries" in result.lines
    report = json.loads(installed.run("--json", "doctor").stdout)
    assert report["database"]["pending_deliveries"] == 2


def test_doctor_validates_settings_first(installed):
    line = installed.fails("doctor", env={"CAFLEET_BROKER_PORT": "70000"})

    assert line == (
        "Error: invalid value for CAFLEET_BROKER_PORT: '70000'"
        " (expected an integer between 1 and 65535)"
    )


# --------------------------------------------------------------------------- inside tmux


@pytest.mark.tmux
def test_doctor_inside_tmux_with_everything_current_exits_0(installed, private_tmux, cli_version):
    tmux_var = private_tmux.env["TMUX"]

    result = installed.run("doctor", env=private_tmux.env)

    assert result.code == 0, result
    assert result.stderr == ""
    assert section(result.stdout, "multiplexer") == [
        "  backend:       tmux",
        "  session:       main",
        f"  window_id:     {private_tmux.window_id}",
        f"  pane_id:       {private_tmux.pane_id}",
        f"  presence:      TMUX={tmux_var}",
    ]
    assert private_tmux.window_id.startswith("@")
    assert private_tmux.pane_id.startswith("%")
    assert "  revision:      0002 (head)" in result.lines
    _, claude_line = section(result.stdout, "skills")
    assert skill_row(claude_line)[3] == "ok"


@pytest.mark.tmux
def test_doctor_json_inside_tmux(installed, private_tmux):
    result = installed.run("--json", "doctor", env=private_tmux.env)

    assert result.code == 0, result
    report = json.loads(result.stdout)
    assert report["ok"] is True
    assert report["multiplexer"] == {
        "backend": "tmux",
        "session": "main",
        "window_id": private_tmux.window_id,
        "pane_id": private_tmux.pane_id,
        "presence_var": "TMUX",
        "presence_value": private_tmux.env["TMUX"],
        "error": None,
    }


@pytest.mark.tmux
def test_doctor_inside_tmux_with_a_stale_record_exits_1(installed, private_tmux):
    installed.record_version("0.0.1")

    result = installed.run("doctor", env=private_tmux.env)

    assert result.code == 1, result
    assert "  backend:       tmux" in result.lines
    assert result.lines[-1].endswith(" STALE")


@pytest.mark.tmux
def test_doctor_inside_tmux_without_installs_exits_1(migrated, private_tmux):
    result = migrated.run("doctor", env=private_tmux.env)

    assert result.code == 1, result
    assert result.lines[-1] == NO_INSTALLS


@pytest.mark.tmux
def test_doctor_inside_tmux_with_the_database_missing_exits_1(sandbox, private_tmux):
    result = sandbox.run("doctor", env=private_tmux.env)

    assert result.code == 1, result
    assert "  backend:       tmux" in result.lines
    assert "  revision:      missing (run 'cafleet setup')" in result.lines


@pytest.mark.tmux
def test_doctor_with_tmux_set_but_no_pane_reports_the_multiplexer_error(installed, private_tmux):
    result = installed.run("doctor", env={"TMUX": private_tmux.env["TMUX"]})

    assert result.code == 1, result
    assert section(result.stdout, "multiplexer") == [
        "  error:         TMUX_PANE is not set; not running inside a tmux pane"
    ]

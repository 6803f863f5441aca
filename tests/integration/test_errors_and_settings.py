"""Settings validation, database errors and the root command."""

from __future__ import annotations

import json

import pytest

from cafleet.adapters.store.sqlite.schema import HEAD_REVISION, migrate

SCHEMA_MISSING = (
    "Error: the database schema is missing or outdated; "
    "run 'cafleet setup' or 'cafleet setup db' first"
)
SEND = ("message", "send", "--fleet-id", "1", "--agent-id", "2", "--to", "1", "--text", "hi")

EVERY_SETTING_INVALID = {
    "CAFLEET_BROKER_PORT": "70000",
    "CAFLEET_WEBUI_TOKEN": "short",
    "CAFLEET_MAX_TEXT_LEN": "abc",
    "CAFLEET_MULTIPLEXER": "bogus",
    "CAFLEET_MONITOR_STALL_INTERVAL": "often",
    "CAFLEET_SUBMIT_DELAY_CLAUDE": "x",
    "CAFLEET_SUBMIT_DELAY_CODEX": "-1",
    "CAFLEET_SUBMIT_DELAY_OPENCODE": "11",
    "CAFLEET_SUBMIT_DELAY_CUSTOM": "soon",
    "CAFLEET_AGENT_COMMANDS_CLAUDE": ",",
    "CAFLEET_AGENT_COMMANDS_CODEX": " , ",
    "CAFLEET_AGENT_COMMANDS_OPENCODE": ",,",
    "CAFLEET_CUSTOM_AGENT_COMMAND": "'unbalanced",
    "CAFLEET_DEBUG": "1",
}


# --------------------------------------------------------------------------- --version / --help


@pytest.fixture(params=["unwritable-path", "unsupported-scheme"])
def hostile_env(request, tmp_path):
    """Every CAFLEET_* setting invalid and a database URL that cannot be used."""
    blocker = tmp_path / "a-regular-file"
    blocker.write_text("not a directory\n")
    url = (
        f"sqlite:///{blocker}/sub/cafleet.db"
        if request.param == "unwritable-path"
        else "mysql://nowhere/cafleet"
    )
    return {**EVERY_SETTING_INVALID, "CAFLEET_DATABASE_URL": url}


def test_version_prints_name_and_version(run_cafleet, env):
    from cafleet import __version__

    assert run_cafleet("--version", env=env) == (0, f"cafleet {__version__}\n", "")


def test_version_ignores_json(cli):
    from cafleet import __version__

    assert cli.ok("--json", "--version") == f"cafleet {__version__}\n"


def test_version_succeeds_with_every_setting_invalid(cli, hostile_env, tmp_path):
    from cafleet import __version__

    assert cli.ok("--version", env=hostile_env) == f"cafleet {__version__}\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-regular-file", "home", "run"]


@pytest.mark.parametrize(
    "args",
    [
        ("--help",),
        ("fleet", "--help"),
        ("fleet", "create", "--help"),
        ("member", "list", "--help"),
        ("message", "--help"),
        ("message", "send", "--help"),
        ("setup", "db", "--help"),
    ],
    ids=" ".join,
)
def test_help_succeeds_with_every_setting_invalid(cli, hostile_env, tmp_path, args):
    out = cli.ok(*args, env=hostile_env)
    assert out.startswith("Usage: cafleet")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-regular-file", "home", "run"]


def test_root_help_first_line(cli):
    lines = cli.ok("--help").splitlines()
    assert "CAFleet — CLI for the message broker and agent registry." in [
        line.strip() for line in lines
    ]


@pytest.mark.parametrize("group", [(), ("message",), ("fleet",), ("member",)], ids=repr)
def test_group_without_subcommand_prints_help_and_exits_2(cli, group):
    result = cli(*group)
    assert result.code == 2
    assert " ".join(("Usage: cafleet", *group)) in result.stdout + result.stderr


def test_json_after_the_subcommand_is_taken_by_every_command(cli):
    result = cli("doctor", "--json")
    assert "No such option" not in result.stderr
    assert "ok" in json.loads(result.stdout)


# --------------------------------------------------------------------------- invalid settings


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("CAFLEET_MAX_TEXT_LEN", "abc", "expected an integer between 1 and 1000000"),
        ("CAFLEET_MAX_TEXT_LEN", "0", "expected an integer between 1 and 1000000"),
        ("CAFLEET_BROKER_PORT", "70000", "expected an integer between 1 and 65535"),
        ("CAFLEET_SUBMIT_DELAY_CODEX", "x", "expected a number of seconds between 0 and 10"),
    ],
)
@pytest.mark.parametrize(
    "args",
    [("setup", "db"), ("fleet", "list"), SEND, ("member", "list", "--fleet-id", "1")],
    ids=lambda a: " ".join(a[:2]),
)
def test_invalid_setting_is_one_line_and_exit_1(migrated, cli, name, value, expected, args):
    line = cli.fails(*args, env={name: value})
    assert line == f"Error: invalid value for {name}: {value!r} ({expected})"


def test_invalid_max_text_len_exact_message(migrated, cli):
    result = cli(*SEND, env={"CAFLEET_MAX_TEXT_LEN": "abc"})
    assert result.code == 1
    assert result.stdout == ""
    assert result.stderr == (
        "Error: invalid value for CAFLEET_MAX_TEXT_LEN: 'abc'"
        " (expected an integer between 1 and 1000000)\n"
    )
    assert migrated.count("tasks") == 0


def test_invalid_setting_does_not_create_the_database(cli, db_path):
    cli.fails("setup", "db", env={"CAFLEET_MAX_TEXT_LEN": "abc"})
    assert not db_path.exists()


def test_invalid_setting_is_reported_before_the_text_file_is_read(migrated, cli, tmp_path):
    missing = tmp_path / "no-such-body.txt"
    line = cli.fails(
        "message", "send", "--fleet-id", "1", "--agent-id", "2", "--to", "1",
        "--text-file", str(missing),
        env={"CAFLEET_MAX_TEXT_LEN": "abc"},
    )  # fmt: skip
    assert line == (
        "Error: invalid value for CAFLEET_MAX_TEXT_LEN: 'abc'"
        " (expected an integer between 1 and 1000000)"
    )


def test_unsupported_database_url_is_one_line(cli):
    url = "mysql://localhost/cafleet"
    line = cli.fails("fleet", "list", env={"CAFLEET_DATABASE_URL": url})
    assert (
        line == f"Error: unsupported database URL '{url}'; "
        "only sqlite:/// and postgresql+psycopg:// URLs are supported"
    )


@pytest.mark.parametrize("args", [("setup", "db"), ("fleet", "list"), ("doctor",)], ids=" ".join)
def test_an_unknown_multiplexer_is_refused_up_front_naming_the_allowed_ones(migrated, cli, args):
    line = cli.fails(*args, env={"CAFLEET_MULTIPLEXER": "screen"})
    assert line == (
        "Error: invalid value for CAFLEET_MULTIPLEXER: 'screen' (expected one of: herdr, tmux)"
    )


@pytest.mark.parametrize("args", [("setup", "db"), ("setup",), ("fleet", "list")], ids=" ".join)
def test_a_database_url_under_tilde_is_a_database_error_and_creates_nothing(cli, tmp_path, args):
    url = "sqlite:///~/cafleet.db"
    line = cli.fails(*args, cwd=tmp_path, env={"CAFLEET_DATABASE_URL": url})
    assert line == (
        f"Error: database URL '{url}' starts its path with '~', which is not expanded inside"
        " a URL; give an absolute path (sqlite:////abs/path.db)"
    )
    assert not (tmp_path / "~").exists()


# --------------------------------------------------------------------------- database state


NO_SKILLS = "Error: no skills install is recorded; run 'cafleet setup' first"
GATED = [
    SEND,
    ("fleet", "list"),
    ("fleet", "show", "--fleet-id", "1"),
    ("member", "list", "--fleet-id", "1"),
    ("message", "poll", "--fleet-id", "1", "--agent-id", "1"),
]


def missing_database(path):
    return f"Error: database {path} does not exist; run 'cafleet setup' to create it"


@pytest.mark.parametrize("args", GATED, ids=lambda a: " ".join(a[:2]))
def test_missing_database_file_stops_team_commands_at_the_gate(cli, tmp_path, args):
    path = tmp_path / "nowhere" / "cafleet.db"
    line = cli.fails(*args, env={"CAFLEET_DATABASE_URL": f"sqlite:///{path}"})
    assert line == missing_database(path)
    assert not path.parent.exists()


def test_missing_database_file_is_reported_by_a_non_gated_command(cli, tmp_path, home):
    path = tmp_path / "nowhere" / "cafleet.db"
    line = cli.fails(
        "setup", "skill", "--agent", "claude", env={"CAFLEET_DATABASE_URL": f"sqlite:///{path}"}
    )
    assert line == missing_database(path)
    assert not path.parent.exists()


def test_missing_database_file_in_existing_directory_is_not_created(cli, db_path):
    assert cli.fails("setup", "skill", "--agent", "claude") == missing_database(db_path)
    assert cli.fails(*SEND) == missing_database(db_path)
    assert not db_path.exists()


def test_empty_database_file_reports_the_missing_schema(cli, db_path):
    db_path.touch()
    assert cli.fails("setup", "skill", "--agent", "claude") == SCHEMA_MISSING
    assert cli.fails(*SEND) == SCHEMA_MISSING


NEWER = (
    "Error: the database schema is at revision 0099, newer than this cafleet knows"
    f" (head {HEAD_REVISION}); upgrade cafleet"
)


@pytest.mark.parametrize("args", [SEND, ("fleet", "list"), ("setup", "db")])
def test_a_database_from_a_newer_cafleet_asks_for_an_upgrade(cli, db, db_path, args):
    migrate(db_path)
    cli.ok("setup", "skill", "--agent", "claude")
    db.execute("UPDATE alembic_version SET version_num = '0099'")

    assert cli.fails(*args) == NEWER
    assert db.count("fleets") == 0


def test_message_send_on_a_populated_0001_database_reports_the_outdated_schema(cli, db, db_path):
    migrate(db_path, target="0001")
    cli.ok("setup", "skill", "--agent", "claude")
    ts = "2026-01-01T00:00:00.000000+00:00"
    card = '{"name":"a","description":"a","skills":[]}'
    db.execute("INSERT INTO fleets (fleet_id, name, created_at) VALUES (1, 'old', ?)", ts)
    for agent_id in (1, 2):
        db.execute(
            "INSERT INTO agents (agent_id, fleet_id, name, description, status, registered_at,"
            " agent_card_json) VALUES (?, 1, 'a', 'a', 'active', ?, ?)",
            agent_id,
            ts,
            card,
        )
    db.execute("UPDATE fleets SET director_agent_id = 1")
    db.execute(
        "INSERT INTO agent_placements (agent_id, mux_session, mux_window_id, mux_pane_id,"
        " created_at) VALUES (1, 'main', '@0', '%0', ?)",
        ts,
    )
    assert cli.fails(*SEND) == SCHEMA_MISSING
    assert db.count("tasks") == 0


def test_message_send_on_an_empty_0001_database_reports_the_outdated_schema(cli, db, db_path):
    migrate(db_path, target="0001")
    cli.ok("setup", "skill", "--agent", "claude")
    assert cli.fails(*SEND) == SCHEMA_MISSING
    assert db.count("tasks") == 0


def test_file_that_is_not_a_database_is_one_line(cli, db_path):
    db_path.write_bytes(b"definitely not sqlite" * 200)
    for args in (("fleet", "list"), ("setup", "skill", "--agent", "claude")):
        line = cli.fails(*args)
        assert line.startswith(f"Error: cannot open database {db_path}: "), args


def test_fleet_id_is_required(migrated, cli):
    line = cli.fails("message", "poll", "--agent-id", "1")
    assert line == (
        "Error: --fleet-id <int> is required for this subcommand unless CAFLEET_FLEET_ID"
        " is set. Create a fleet with 'cafleet fleet create' and pass its id."
    )


def test_non_integer_fleet_id_is_a_usage_error(migrated, cli):
    result = cli("message", "poll", "--fleet-id", "one", "--agent-id", "1")
    assert result.code == 2
    assert result.stderr.startswith("Usage: cafleet message poll")


def test_directory_as_database_path_cannot_be_opened(cli, db_path):
    db_path.mkdir()
    for args in (("fleet", "list"), ("setup", "skill", "--agent", "claude")):
        line = cli.fails(*args)
        assert line == f"Error: cannot open database {db_path}: it is a directory"


def test_setup_db_on_a_directory_cannot_open_the_database(cli, db_path):
    db_path.mkdir()
    line = cli.fails("setup", "db")
    assert line.startswith(f"Error: cannot open database {db_path}: ")


# --------------------------------------------------------------------------- number bounds


LARGEST = str(2**63 - 1)


@pytest.mark.parametrize(
    "args",
    [
        ("message", "send", "--fleet-id", LARGEST, "--agent-id", "1", "--to", "2", "--text", "x"),
        ("message", "send", "--fleet-id", "1", "--agent-id", LARGEST, "--to", "2", "--text", "x"),
        ("message", "ack", "--fleet-id", "1", "--agent-id", "1", "--task-id", LARGEST),
        ("member", "delete", "--fleet-id", LARGEST, "--member-id", LARGEST),
        ("monitor", "config", "--fleet-id", LARGEST, "--member-id", LARGEST, "--interval", "86400"),
    ],
)
def test_the_largest_sqlite_integer_is_an_unknown_id_on_a_real_database(migrated, cli, args):
    result = cli(*args)

    assert result.code == 1
    [line] = result.stderr.splitlines()
    assert line.startswith("Error: ") and "internal error" not in line


@pytest.mark.parametrize("option", ["--fleet-id", "--agent-id", "--to"])
@pytest.mark.parametrize("value", [str(2**63), "0", "-1"])
def test_ids_beyond_sqlite_integers_are_usage_errors(migrated, cli, option, value):
    args = dict.fromkeys(["--fleet-id", "--agent-id", "--to"], "1") | {option: value}

    result = cli("message", "send", *[x for pair in args.items() for x in pair], "--text", "x")

    assert result.code == 2
    assert (
        f"Error: Invalid value for '{option}': '{value}' is not an integer between 1 and"
        " 9223372036854775807." in result.stderr.splitlines()
    )
    assert migrated.count("tasks") == 0


def test_a_monitor_interval_of_2_63_minus_1_is_refused(migrated, cli):
    result = cli("monitor", "config", "--fleet-id", "1", "--member-id", "1", "--interval", LARGEST)

    assert result.code == 2
    assert result.stderr.splitlines()[-1] == (
        f"Error: Invalid value for '--interval': '{LARGEST}' is not an integer between 1 and 86400."
    )


def test_a_body_over_the_limit_is_refused_before_anything_else(migrated, cli, tmp_path):
    body = tmp_path / "body.txt"
    body.write_bytes(b"x" * 1025)

    result = cli.with_env(CAFLEET_MAX_BODY_BYTES="1024")(*SEND[:-2], "--text-file", str(body))

    assert result.code == 1
    assert result.stderr == (
        "Error: message body is 1025 bytes; the limit is 1024 bytes (CAFLEET_MAX_BODY_BYTES)\n"
    )
    assert migrated.count("tasks") == 0


# --------------------------------------------------------------------------- unreadable paths


@pytest.fixture
def locked(tmp_path):
    """A directory nobody but root's override may enter; opened again for the cleanup."""
    path = tmp_path / "locked"
    path.mkdir()
    path.chmod(0o000)
    yield path
    path.chmod(0o700)


def cannot_enter(locked):
    return f"Permission denied (directory {locked} cannot be entered)"


@pytest.mark.parametrize(
    "args", [("setup", "db"), ("setup", "skill"), ("fleet", "list"), SEND], ids=" ".join
)
def test_a_database_in_a_directory_that_cannot_be_entered_is_one_line(
    unprivileged_cli, locked, args
):
    path = locked / "cafleet.db"
    line = unprivileged_cli.fails(*args, env={"CAFLEET_DATABASE_URL": f"sqlite:///{path}"})

    assert line == f"Error: cannot open database {path}: {cannot_enter(locked)}"


def test_bare_setup_names_the_unreadable_database_for_each_half(unprivileged_cli, locked):
    path = locked / "cafleet.db"
    result = unprivileged_cli("setup", env={"CAFLEET_DATABASE_URL": f"sqlite:///{path}"})

    problem = f"cannot open database {path}: {cannot_enter(locked)}"
    assert result.code == 1, result
    assert result.stdout.splitlines() == [
        f"db half failed: {problem}",
        f"skills half failed: {problem}",
    ]
    assert result.stderr == "Error: db and skills half failed\n"


def test_doctor_shows_an_unreadable_database_as_unreadable_not_missing(unprivileged_cli, locked):
    path = locked / "cafleet.db"
    result = unprivileged_cli("doctor", env={"CAFLEET_DATABASE_URL": f"sqlite:///{path}"})

    revision = next(line for line in result.stdout.splitlines() if "revision:" in line)
    assert revision.split(None, 1)[1] == (
        f"unreadable: cannot open database {path}: {cannot_enter(locked)}"
    )


def test_a_text_file_in_a_directory_that_cannot_be_entered_is_one_line(
    unprivileged_cli, migrated, locked
):
    line = unprivileged_cli.fails(*SEND[:-2], "--text-file", str(locked / "body.txt"))

    assert line == f"Error: --text-file {locked / 'body.txt'}: file is not readable."

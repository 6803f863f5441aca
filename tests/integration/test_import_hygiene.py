"""`--version` and `--help` load no heavy stack and touch no database or setting."""

from __future__ import annotations

import json

import pytest

from support.probes import probe_cli
from support.tmux import clean_environment

HEAVY = (
    "sqlalchemy",
    "alembic",
    "fastapi",
    "uvicorn",
    "dependency_injector",
    "pydantic",
    "pydantic_settings",
)
# standard modules a hot command has no use for that cost the most memory: OpenSSL's
# libcrypto (through hashlib, hmac or secrets), and http.client with ssl and email
COSTLY = ("_hashlib", "_ssl", "http", "email")
# cafleet modules that would mean settings were read or the database was reached
CAFLEET_BACKEND = ("cafleet.settings", "cafleet.composition", "cafleet.adapters.store")


def probe(argv: list[str], env: dict[str, str]) -> dict[str, object]:
    ran = probe_cli(argv, env)
    return {
        "code": ran.code,
        "stdout": ran.stdout,
        "stderr": ran.stderr,
        "heavy": ran.loaded(HEAVY),
        "costly": ran.loaded(COSTLY),
        "backend": ran.loaded(prefixes=CAFLEET_BACKEND),
    }


@pytest.fixture
def hostile_env(env, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    return {
        **env,
        "CAFLEET_DATABASE_URL": f"sqlite:///{blocker}/sub/cafleet.db",
        "CAFLEET_MAX_TEXT_LEN": "abc",
        "CAFLEET_BROKER_PORT": "0",
        "CAFLEET_SUBMIT_DELAY_CLAUDE": "x",
        "CAFLEET_MONITOR_STALL_INTERVAL": "x",
        "CAFLEET_MULTIPLEXER": "bogus",
    }


@pytest.mark.parametrize(
    "argv",
    [
        ["--version"],
        ["--help"],
        ["message", "--help"],
        ["message", "send", "--help"],
        ["fleet", "create", "--help"],
        ["member", "list", "--help"],
        ["setup", "db", "--help"],
    ],
    ids=" ".join,
)
def test_version_and_help_import_nothing_heavy(hostile_env, argv):
    result = probe(argv, hostile_env)
    assert result["code"] == 0, result
    assert result["stdout"].startswith("cafleet " if argv == ["--version"] else "Usage: cafleet")
    assert result["stderr"] == ""
    assert result["heavy"] == []
    assert result["backend"] == []


@pytest.mark.tmux
def test_the_hot_commands_run_on_the_standard_library_s_sqlite3(
    env, tmux, fleet, add_member, migrated
):
    """What an agent runs all day never imports SQLAlchemy, Alembic, pydantic, FastAPI or
    dependency-injector: their imports cost more than the rest of the command. Nor OpenSSL
    or the HTTP client, which would be a third of its memory."""
    member = add_member(fleet)
    run_env = {**env, **tmux.env}
    ids = ["--fleet-id", str(fleet.fleet_id)]
    director = [*ids, "--agent-id", str(fleet.director)]
    sent = probe(
        ["--json", "message", "send", *director, "--to", str(member), "--text", "hello"], run_env
    )
    assert sent["code"] == 0, sent
    task = str(json.loads(sent["stdout"])["task"]["id"])
    as_member = [*ids, "--agent-id", str(member)]
    commands = [
        ["message", "poll", *as_member],
        ["message", "show", *as_member, "--task-id", task],
        ["message", "ack", *as_member, "--task-id", task],
        ["member", "list", *ids],
        ["member", "show", *ids, "--member-id", str(member)],
        ["fleet", "list"],
    ]
    for argv in commands:
        result = probe(["--json", *argv], run_env)
        assert result["code"] == 0, (argv, result)
        assert result["heavy"] == [], (argv, result["heavy"])
        assert result["costly"] == [], (argv, result["costly"])
    assert sent["heavy"] == []
    assert sent["costly"] == []
    assert migrated.scalar("SELECT status_state FROM tasks WHERE task_id = ?", int(task)) == (
        "completed"
    )


@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["message", "send", "--help"]])
def test_version_and_help_import_no_settings_database_or_container(argv: list[str]) -> None:
    ran = probe_cli(argv, clean_environment())

    heavy = ("sqlalchemy", "alembic", "dependency_injector", "pydantic")
    light = ("cafleet.settings", "cafleet.composition", "cafleet.composition.components")
    light += ("cafleet.composition.container", "cafleet.container")
    assert ran.loaded(heavy, names=light) == []


@pytest.mark.parametrize(
    "argv",
    [["--help"], ["--version"], ["server", "--help"], ["message", "send", "--help"]],
)
def test_help_never_imports_the_web_stack(argv: list[str]) -> None:
    ran = probe_cli(argv, clean_environment())

    assert ran.loaded(("fastapi", "uvicorn", "starlette", "pydantic", "anyio")) == []

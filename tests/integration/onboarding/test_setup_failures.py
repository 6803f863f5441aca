"""Each half of bare `cafleet setup` fails on its own; `setup skill` fails cleanly."""

from __future__ import annotations

import os

import pytest

SCHEMA_MISSING = (
    "the database schema is missing or outdated; run 'cafleet setup' or 'cafleet setup db' first"
)
UNKNOWN_REVISION = (
    "DB schema is at revision zzzz which is unknown to this version of cafleet."
    " Refusing to downgrade automatically."
)
NO_REVISION = (
    "DB has existing tables but no alembic_version; refusing to migrate an unknown schema."
    " Point CAFLEET_DATABASE_URL at a new file."
)


SKILLS_DIR_SHOWN = {"claude": "~/.claude/skills", "codex": "~/.codex/skills"}


def installed_line(agent, version):
    return (
        f"{agent}: installed cafleet, cafleet-design-doc, cafleet-research (v{version})"
        f" -> {SKILLS_DIR_SHOWN[agent]}"
    )


# --------------------------------------------------------------------------- the skills half


def test_unwritable_skills_dir_fails_the_skills_half_but_not_the_db_half(sandbox):
    sandbox.make_agent_homes("claude")
    blocker = sandbox.skills_dir("claude")
    blocker.write_text("not a directory\n")

    result = sandbox.run("setup")

    assert result.code == 1, result
    created, failure = result.lines
    assert created == f"Created {sandbox.db_path} and applied migrations to head (0012)."
    prefix = f"skills half failed: failed to install skills into {blocker}: "
    assert failure.startswith(prefix), failure
    assert failure.removeprefix(prefix).strip() != ""
    assert result.stderr == "Error: skills half failed\n"
    assert sandbox.sql("SELECT version_num FROM alembic_version") == [("0012",)]
    assert sandbox.installs() == {}
    assert blocker.read_text() == "not a directory\n"


def test_unwritable_skills_dir_fails_setup_skill_with_one_line(migrated):
    migrated.make_agent_homes("claude")
    blocker = migrated.skills_dir("claude")
    blocker.write_text("")

    line = migrated.fails("setup", "skill")

    assert line.startswith(f"Error: failed to install skills into {blocker}: "), line
    assert migrated.installs() == {}


def test_a_failing_home_stops_before_later_homes_and_keeps_earlier_records(migrated, cli_version):
    """Targets are processed in order: the first is installed and recorded, then the failure."""
    migrated.make_agent_homes("codex")
    (migrated.home / ".config").mkdir()
    (migrated.home / ".config" / "opencode").write_text("")

    result = migrated.run("setup", "skill", "--agent", "codex", "--agent", "opencode")

    assert result.code == 1, result
    assert result.lines == [installed_line("codex", cli_version)]
    opencode_skills = migrated.home / ".config" / "opencode" / "skills"
    assert result.stderr.startswith(f"Error: failed to install skills into {opencode_skills}: ")
    assert migrated.installs() == {"codex": cli_version}


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() == 0,
    reason="root ignores permission bits; the regular-file variant covers this case",
)
def test_read_only_agent_home_fails_the_skills_half(sandbox):
    sandbox.make_agent_homes("claude")
    sandbox.agent_home("claude").chmod(0o500)
    try:
        result = sandbox.run("setup")
    finally:
        sandbox.agent_home("claude").chmod(0o700)

    assert result.code == 1, result
    created, failure = result.lines
    assert created.startswith("Created ")
    skills_dir = sandbox.skills_dir("claude")
    assert failure == (
        f"skills half failed: failed to install skills into {skills_dir}: Permission denied"
    )
    assert result.stderr == "Error: skills half failed\n"
    assert sandbox.installs() == {}


def test_reinstall_over_a_symlinked_skill_leaves_no_retired_link(migrated, tmp_path):
    checkout = tmp_path / "checkout" / "cafleet"
    checkout.mkdir(parents=True)
    (checkout / "SKILL.md").write_text("my own copy\n")
    migrated.skills_dir("claude").mkdir(parents=True)
    (migrated.skills_dir("claude") / "cafleet").symlink_to(checkout)

    migrated.ok("setup", "skill", "--agent", "claude")

    assert (checkout / "SKILL.md").read_text() == "my own copy\n"  # never followed
    assert not (migrated.skills_dir("claude") / "cafleet").is_symlink()
    assert migrated.leftovers("claude") == []


# --------------------------------------------------------------------------- the db half


def test_unknown_revision_fails_only_the_db_half(migrated, cli_version):
    migrated.sql("UPDATE alembic_version SET version_num = 'zzzz'")
    migrated.make_agent_homes("claude")

    result = migrated.run("setup")

    assert result.code == 1, result
    assert result.lines == [
        f"db half failed: {UNKNOWN_REVISION}",
        installed_line("claude", cli_version),
    ]
    assert result.stderr == "Error: db half failed\n"
    assert migrated.installs() == {"claude": cli_version}


def test_unknown_schema_fails_the_db_half_and_then_the_skills_half(sandbox):
    """Without its table the skills half cannot record anything, so it fails too."""
    sandbox.sql("CREATE TABLE foreign_stuff (id INTEGER PRIMARY KEY)")
    sandbox.make_agent_homes("claude")

    result = sandbox.run("setup")

    assert result.code == 1, result
    assert result.lines == [
        f"db half failed: {NO_REVISION}",
        f"skills half failed: {SCHEMA_MISSING}",
    ]
    assert result.stderr == "Error: db and skills half failed\n"
    assert not sandbox.skills_dir("claude").exists()


def test_in_memory_database_url_fails_both_halves(sandbox):
    sandbox.make_agent_homes("claude")

    result = sandbox.run("setup", env={"CAFLEET_DATABASE_URL": "sqlite://"})

    assert result.code == 1, result
    assert result.lines == [
        "db half failed: database URL has no file path",
        "skills half failed: database URL has no file path",
    ]
    assert result.stderr == "Error: db and skills half failed\n"


def test_invalid_settings_fail_bare_setup_before_either_half(sandbox):
    sandbox.make_agent_homes("claude")

    line = sandbox.fails("setup", env={"CAFLEET_MAX_TEXT_LEN": "abc"})

    assert (
        line == "Error: invalid value for CAFLEET_MAX_TEXT_LEN: 'abc'"
        " (expected an integer between 1 and 1000000)"
    )
    assert not sandbox.db_path.exists()
    assert not sandbox.skills_dir("claude").exists()


def test_db_path_under_a_regular_file_fails_the_db_half_with_one_line(sandbox):
    blocker = sandbox.home / "blocker"
    blocker.write_text("")
    sandbox.make_agent_homes("claude")

    result = sandbox.run("setup", env={"CAFLEET_DATABASE_URL": f"sqlite:///{blocker}/x.db"})

    assert result.code == 1, result
    db_line, skills_line = result.lines
    assert db_line.startswith("db half failed: "), db_line
    assert skills_line.startswith("skills half failed: "), skills_line
    assert result.stderr == "Error: db and skills half failed\n"


def test_setup_db_under_a_regular_file_reports_cannot_open_database(sandbox):
    blocker = sandbox.home / "blocker"
    blocker.write_text("")
    path = blocker / "x.db"

    line = sandbox.fails("setup", "db", env={"CAFLEET_DATABASE_URL": f"sqlite:///{path}"})

    assert line.startswith(f"Error: cannot open database {path}: "), line

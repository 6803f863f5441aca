"""The skills gate in front of team commands, and reinstalling after an upgrade."""

from __future__ import annotations

import pytest

NOTHING_RECORDED = "Error: no skills install is recorded; run 'cafleet setup' first"
GATED = [
    ("fleet", "list"),
    ("member", "list", "--fleet-id", "1"),
    ("message", "poll", "--fleet-id", "1", "--agent-id", "1"),
    ("monitor", "status", "--fleet-id", "1"),
]


def stale_line(listed, version):
    return (
        f"Error: stale skills detected ({listed}; CLI {version});"
        " run 'cafleet setup skill' to reinstall"
    )


# --------------------------------------------------------------------------- nothing recorded


@pytest.mark.parametrize("command", GATED, ids=lambda c: " ".join(c[:2]))
def test_gated_command_without_a_recorded_install_is_refused(migrated, command):
    assert migrated.fails(*command) == NOTHING_RECORDED


def test_gated_command_without_a_database_is_refused_without_creating_it(sandbox):
    assert sandbox.fails("fleet", "list") == (
        f"Error: database {sandbox.db_path} does not exist; run 'cafleet setup' to create it"
    )
    assert not sandbox.db_path.exists()


def test_gated_command_on_an_empty_database_file_is_refused(sandbox):
    sandbox.db_path.touch()

    assert sandbox.fails("fleet", "list") == (
        "Error: the database schema is missing or outdated; run 'cafleet setup' or"
        " 'cafleet setup db' first"
    )


def test_gate_runs_before_the_fleet_id_check(migrated):
    assert migrated.fails("member", "list") == NOTHING_RECORDED


def test_settings_are_validated_before_the_gate(migrated):
    line = migrated.fails("fleet", "list", env={"CAFLEET_MAX_TEXT_LEN": "abc"})

    assert (
        line == "Error: invalid value for CAFLEET_MAX_TEXT_LEN: 'abc'"
        " (expected an integer between 1 and 1000000)"
    )


# --------------------------------------------------------------------------- bypasses


@pytest.mark.parametrize(
    "command",
    [
        ("fleet", "--help"),
        ("fleet", "list", "--help"),
        ("member", "create", "--help"),
        ("message", "send", "--help"),
        ("monitor", "start", "--help"),
    ],
    ids=" ".join,
)
def test_help_of_gated_commands_bypasses_the_gate(sandbox, command):
    out = sandbox.ok(*command)

    assert out.startswith("Usage: cafleet ")
    assert not sandbox.db_path.exists()


def test_setup_and_doctor_are_not_gated(sandbox):
    doctor = sandbox.run("doctor")
    assert doctor.code == 1, doctor  # findings, not the gate
    assert doctor.stderr == ""
    assert "(no skills install recorded; run 'cafleet setup')" in doctor.stdout

    sandbox.ok("setup", "db")
    sandbox.make_agent_homes("claude")
    sandbox.ok("setup", "skill")


def test_gate_passes_once_skills_are_installed(installed):
    assert installed.ok("fleet", "list") == "No fleets found.\n"


# --------------------------------------------------------------------------- stale records


def test_stale_record_blocks_gated_commands(installed):
    installed.record_version("0.0.1")

    for command in GATED:
        line = installed.fails(*command)
        assert line.startswith("Error: stale skills detected (claude=0.0.1; CLI "), line
        assert line.endswith("); run 'cafleet setup skill' to reinstall"), line


def test_stale_message_names_the_cli_version(installed, cli_version):
    installed.record_version("0.0.1")

    assert installed.fails("fleet", "list") == stale_line("claude=0.0.1", cli_version)


def test_stale_message_lists_every_stale_agent_in_coding_agent_order(migrated, cli_version):
    migrated.ok("setup", "skill", "--agent", "opencode", "--agent", "codex", "--agent", "claude")
    migrated.record_version("0.0.2", "opencode")
    migrated.record_version("0.0.1", "claude")

    line = migrated.fails("fleet", "list")

    assert line == stale_line("claude=0.0.1, opencode=0.0.2", cli_version)


def test_a_newer_recorded_version_is_stale_too(installed, cli_version):
    installed.record_version("99.0.0")

    assert installed.fails("fleet", "list") == stale_line("claude=99.0.0", cli_version)


# --------------------------------------------------------------------------- reinstall


def test_reinstall_after_an_upgrade_replaces_the_old_tree(installed, cli_version, bundle_dir):
    skill = installed.skills_dir("claude") / "cafleet"
    (skill / "OLD.md").write_text("left over from an older release\n")
    with (skill / ".cafleet-files").open("a") as manifest:
        manifest.write("OLD.md\n")  # the older release wrote it
    (skill / "SKILL.md").write_text("---\nname: cafleet\ndescription: old\n---\nold text\n")
    installed.record_version("0.0.1")
    assert installed.fails("fleet", "list") == stale_line("claude=0.0.1", cli_version)

    out = installed.ok("setup", "skill")

    assert out.startswith(
        f"claude: installed cafleet, cafleet-design-doc, cafleet-research (v{cli_version})"
    )
    assert not (skill / "OLD.md").exists()
    assert (skill / "SKILL.md").read_bytes() == (bundle_dir / "cafleet" / "SKILL.md").read_bytes()
    assert installed.leftovers("claude") == []
    assert installed.installs() == {"claude": cli_version}
    assert installed.ok("fleet", "list") == "No fleets found.\n"


def test_reinstall_leaves_unrelated_skills_alone(installed):
    foreign = installed.skills_dir("claude") / "someone-elses-skill"
    foreign.mkdir()
    (foreign / "SKILL.md").write_text("keep me\n")

    installed.ok("setup", "skill")

    assert (foreign / "SKILL.md").read_text() == "keep me\n"
    names = sorted(p.name for p in installed.skills_dir("claude").iterdir())
    assert names == ["cafleet", "cafleet-design-doc", "cafleet-research", "someone-elses-skill"]


def test_bare_setup_also_refreshes_a_stale_record(installed, cli_version):
    installed.record_version("0.0.1")

    out = installed.ok("setup")

    assert out.splitlines()[0] == "Already at head (0012); nothing to do."
    assert installed.installs() == {"claude": cli_version}
    assert installed.ok("fleet", "list") == "No fleets found.\n"


def test_reinstalling_one_agent_leaves_another_stale(migrated, cli_version):
    migrated.ok("setup", "skill", "--agent", "claude", "--agent", "codex")
    migrated.record_version("0.0.1")

    migrated.ok("setup", "skill", "--agent", "claude")

    assert migrated.installs() == {"claude": cli_version, "codex": "0.0.1"}
    assert migrated.fails("fleet", "list") == stale_line("codex=0.0.1", cli_version)


def test_reinstall_keeps_the_users_own_files_and_says_so(installed, cli_version):
    skill = installed.skills_dir("claude") / "cafleet"
    (skill / "MY_NOTES.md").write_text("mine\n")
    (skill / "notes").mkdir()
    (skill / "notes" / "todo.md").write_text("also mine\n")

    out = installed.ok("setup", "skill", "--agent", "claude")

    assert out.splitlines()[1:] == [
        "claude: kept 2 files CAFleet did not write: cafleet/MY_NOTES.md, cafleet/notes/todo.md"
    ]
    assert (skill / "MY_NOTES.md").read_text() == "mine\n"
    assert (skill / "notes" / "todo.md").read_text() == "also mine\n"
    assert installed.leftovers("claude") == []
    assert installed.installs() == {"claude": cli_version}

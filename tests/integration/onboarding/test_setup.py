"""`cafleet setup`, `setup db` and `setup skill` on a temporary HOME and database."""

from __future__ import annotations

from datetime import datetime

import pytest

NO_HOMES = (
    "agents: no coding-agent home found (looked for ~/.claude, ~/.codex, ~/.config/opencode);"
    " Codex and OpenCode read this folder, Claude Code does not: run 'cafleet setup skill'"
    " again after installing an agent"
)
SCHEMA_MISSING = (
    "Error: the database schema is missing or outdated; run 'cafleet setup' or"
    " 'cafleet setup db' first"
)
SKILL_NAMES = ("cafleet", "cafleet-design-doc", "cafleet-research")
DIRECTOR_HINTS = "To run a coding agent as the Director (docs/agents.md):"
SKILLS_DIR_SHOWN = {
    "claude": "~/.claude/skills",
    "codex": "~/.codex/skills",
    "opencode": "~/.config/opencode/skills",
}


def installed_line(agent, version):
    return (
        f"{agent}: installed cafleet, cafleet-design-doc, cafleet-research (v{version})"
        f" -> {SKILLS_DIR_SHOWN[agent]}"
    )


def claude_hint(sandbox):
    """What bare setup says a Claude Code Director needs (a claude home is there)."""
    settings = sandbox.agent_home("claude") / "settings.json"
    return [
        DIRECTOR_HINTS,
        f'  claude: add "Bash(cafleet:*)" to permissions.allow in {settings}',
    ]


def codex_hint(sandbox):
    config = sandbox.agent_home("codex") / "config.toml"
    roots = f'"{sandbox.db_path.parent}", "{sandbox.env["XDG_RUNTIME_DIR"]}/cafleet"'
    return (
        f"  codex: set network_access = true and writable_roots = [{roots}] under"
        f" [sandbox_workspace_write] in {config}"
    )


def assert_skill_trees(sandbox, agent, bundle_dir):
    for name in SKILL_NAMES:
        tree = sandbox.skills_dir(agent) / name
        assert (tree / "SKILL.md").is_file(), tree
        assert (tree / "SKILL.md").read_bytes() == (bundle_dir / name / "SKILL.md").read_bytes()
        bundled = sorted(p.name for p in (bundle_dir / name).iterdir() if p.name != "__pycache__")
        # the bundle's files and the manifest naming them (what a reinstall may remove)
        assert sorted(p.name for p in tree.iterdir()) == sorted([*bundled, ".cafleet-files"])


# --------------------------------------------------------------------------- bare setup


def test_bare_setup_prints_db_line_then_one_line_per_detected_home(
    sandbox, cli_version, bundle_dir
):
    sandbox.make_agent_homes("claude", "opencode")

    result = sandbox.run("setup")

    assert result.code == 0, result
    assert result.stderr == ""
    assert result.lines == [
        f"Created {sandbox.db_path} and applied migrations to head (0012).",
        installed_line("claude", cli_version),
        installed_line("opencode", cli_version),
        *claude_hint(sandbox),
    ]
    assert_skill_trees(sandbox, "claude", bundle_dir)
    assert_skill_trees(sandbox, "opencode", bundle_dir)
    assert not sandbox.agent_home("codex").exists()


def test_bare_setup_records_one_install_row_per_home_at_the_cli_version(sandbox, cli_version):
    sandbox.make_agent_homes("claude", "opencode")

    sandbox.ok("setup")

    rows = sandbox.sql("SELECT coding_agent, cafleet_version, installed_at FROM skill_installs")
    assert sorted((agent, version) for agent, version, _ in rows) == [
        ("claude", cli_version),
        ("opencode", cli_version),
    ]
    for *_, installed_at in rows:
        assert datetime.fromisoformat(installed_at).tzinfo is not None


def test_bare_setup_detects_homes_in_claude_codex_opencode_order(sandbox, cli_version):
    sandbox.make_agent_homes("opencode", "codex", "claude")

    lines = sandbox.ok("setup").splitlines()

    assert lines[1:] == [
        *(installed_line(a, cli_version) for a in ("claude", "codex", "opencode")),
        *claude_hint(sandbox),
        codex_hint(sandbox),
    ]


def test_bare_setup_says_nothing_of_a_director_grant_the_agents_settings_have(sandbox):
    sandbox.make_agent_homes("claude", "codex")
    (sandbox.agent_home("claude") / "settings.json").write_text(
        '{"permissions": {"allow": ["Bash(cafleet:*)"]}}'
    )
    roots = f'["{sandbox.db_path.parent}", "{sandbox.env["XDG_RUNTIME_DIR"]}/cafleet"]'
    (sandbox.agent_home("codex") / "config.toml").write_text(
        f"[sandbox_workspace_write]\nnetwork_access = true\nwritable_roots = {roots}\n"
    )

    assert DIRECTOR_HINTS not in sandbox.ok("setup")


def test_bare_setup_twice_is_idempotent_and_refreshes_the_install_time(sandbox, cli_version):
    sandbox.make_agent_homes("claude")
    sandbox.ok("setup")
    (first,) = sandbox.sql("SELECT installed_at FROM skill_installs")

    second = sandbox.ok("setup")

    assert second.splitlines() == [
        "Already at head (0012); nothing to do.",
        installed_line("claude", cli_version),
        *claude_hint(sandbox),
    ]
    (again,) = sandbox.sql("SELECT installed_at FROM skill_installs")
    assert again >= first
    assert sandbox.installs() == {"claude": cli_version}
    assert sandbox.leftovers("claude") == []


def test_bare_setup_takes_no_options(sandbox):
    result = sandbox.run("setup", "--agent", "claude")

    assert result.code == 2, result
    assert "No such option '--agent'" in result.stderr
    assert not sandbox.db_path.exists()


def test_bare_setup_without_homes_installs_into_the_shared_folder_and_succeeds(
    sandbox, cli_version, bundle_dir
):
    result = sandbox.run("setup")

    assert result.code == 0, result
    assert result.stderr == ""
    assert result.lines == [
        f"Created {sandbox.db_path} and applied migrations to head (0012).",
        f"agents: installed cafleet, cafleet-design-doc, cafleet-research (v{cli_version})"
        " -> ~/.agents/skills",
        NO_HOMES,
    ]
    for name in SKILL_NAMES:
        assert (sandbox.home / ".agents" / "skills" / name / "SKILL.md").read_bytes() == (
            bundle_dir / name / "SKILL.md"
        ).read_bytes()
    assert sandbox.installs() == {"agents": cli_version}
    assert not sandbox.agent_home("claude").exists()


def test_after_setup_without_homes_team_commands_pass_the_gate(sandbox):
    sandbox.ok("setup")

    assert sandbox.ok("fleet", "list") == "No fleets found.\n"


# --------------------------------------------------------------------------- setup skill


def test_setup_skill_with_explicit_agents_drops_duplicates_and_keeps_order(
    migrated, cli_version, bundle_dir
):
    out = migrated.ok("setup", "skill", "--agent", "codex", "--agent", "codex", "--agent", "claude")

    assert out.splitlines() == [
        installed_line("codex", cli_version),
        installed_line("claude", cli_version),
    ]
    assert_skill_trees(migrated, "codex", bundle_dir)
    assert_skill_trees(migrated, "claude", bundle_dir)
    assert not migrated.agent_home("opencode").exists()
    assert migrated.installs() == {"codex": cli_version, "claude": cli_version}


def test_setup_skill_with_explicit_agent_ignores_other_detected_homes(migrated, cli_version):
    migrated.make_agent_homes("claude", "opencode")

    out = migrated.ok("setup", "skill", "--agent", "opencode")

    assert out.splitlines() == [installed_line("opencode", cli_version)]
    assert not migrated.skills_dir("claude").exists()
    assert migrated.installs() == {"opencode": cli_version}


def test_setup_skill_creates_missing_homes_and_skills_dirs_for_explicit_agents(migrated):
    assert not migrated.agent_home("opencode").exists()

    migrated.ok("setup", "skill", "--agent", "opencode")

    assert (migrated.home / ".config" / "opencode" / "skills" / "cafleet" / "SKILL.md").is_file()


def test_setup_skill_rejects_an_unknown_agent_as_a_usage_error(migrated):
    result = migrated.run("setup", "skill", "--agent", "cursor")

    assert result.code == 2, result
    assert "Invalid value for '--agent'" in result.stderr
    assert migrated.installs() == {}


def test_setup_skill_without_homes_or_agents_uses_the_shared_folder(migrated, cli_version):
    assert migrated.ok("setup", "skill").splitlines()[1] == NO_HOMES
    assert [p.name for p in migrated.home.iterdir()] == [".agents"]
    assert migrated.installs() == {"agents": cli_version}


def test_setup_skill_for_the_shared_folder_by_name(migrated, cli_version):
    migrated.make_agent_homes("claude")

    out = migrated.ok("setup", "skill", "--agent", "agents")

    assert out.splitlines() == [
        f"agents: installed cafleet, cafleet-design-doc, cafleet-research (v{cli_version})"
        " -> ~/.agents/skills"
    ]
    assert not migrated.skills_dir("claude").exists()


@pytest.mark.parametrize("agents", [(), ("--agent", "claude")])
def test_setup_skill_before_setup_db_reports_the_missing_database(sandbox, agents):
    sandbox.make_agent_homes("claude")

    assert sandbox.fails("setup", "skill", *agents) == (
        f"Error: database {sandbox.db_path} does not exist; run 'cafleet setup' to create it"
    )
    assert not sandbox.skills_dir("claude").exists()


def test_setup_skill_before_setup_db_on_an_empty_database_file(sandbox):
    sandbox.db_path.touch()
    sandbox.make_agent_homes("claude")

    assert sandbox.fails("setup", "skill") == SCHEMA_MISSING
    assert not sandbox.skills_dir("claude").exists()


# --------------------------------------------------------------------------- setup db


def test_setup_db_creates_the_parent_directory_and_uses_wal(sandbox):
    nested = sandbox.home / "deep" / "er" / "x.db"

    out = sandbox.ok("setup", "db", env={"CAFLEET_DATABASE_URL": f"sqlite:///{nested}"})

    assert out == f"Created {nested} and applied migrations to head (0012).\n"
    sandbox.db_path = nested
    assert sandbox.sql("PRAGMA journal_mode") == [("wal",)]
    assert sandbox.sql("SELECT version_num FROM alembic_version") == [("0012",)]


def test_setup_group_help_does_not_touch_the_database(sandbox):
    out = sandbox.ok("setup", "--help")

    assert "db" in out
    assert "skill" in out
    assert not sandbox.db_path.exists()

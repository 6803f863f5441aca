"""`cafleet setup skill` installs where the agents read: CLAUDE_CONFIG_DIR, CODEX_HOME and
XDG_CONFIG_HOME move the skills out of the default homes under HOME."""

from __future__ import annotations

SKILL_NAMES = ("cafleet", "cafleet-design-doc", "cafleet-research")


def installed_line(agent, version, shown):
    return (
        f"{agent}: installed cafleet, cafleet-design-doc, cafleet-research (v{version}) -> {shown}"
    )


def assert_bundle_copied(skills_dir, bundle_dir):
    for name in SKILL_NAMES:
        tree = skills_dir / name
        assert (tree / "SKILL.md").read_bytes() == (bundle_dir / name / "SKILL.md").read_bytes()
        bundled = sorted(p.name for p in (bundle_dir / name).iterdir() if p.name != "__pycache__")
        # the bundle's files and the manifest naming them (what a reinstall may remove)
        assert sorted(p.name for p in tree.iterdir()) == sorted([*bundled, ".cafleet-files"])


def test_setup_skill_for_codex_follows_codex_home(migrated, cli_version, bundle_dir, tmp_path):
    codex_home = tmp_path / "codex-home"

    out = migrated.ok("setup", "skill", "--agent", "codex", env={"CODEX_HOME": str(codex_home)})

    assert out.splitlines() == [installed_line("codex", cli_version, codex_home / "skills")]
    assert_bundle_copied(codex_home / "skills", bundle_dir)
    assert not (migrated.home / ".codex").exists()
    assert migrated.installs() == {"codex": cli_version}


def test_a_codex_home_inside_home_is_shown_abbreviated(migrated, cli_version, bundle_dir):
    codex_home = migrated.home / "agents" / "codex"

    out = migrated.ok("setup", "skill", "--agent", "codex", env={"CODEX_HOME": str(codex_home)})

    assert out.splitlines() == [installed_line("codex", cli_version, "~/agents/codex/skills")]
    assert_bundle_copied(codex_home / "skills", bundle_dir)


def test_detection_looks_where_the_variables_point(migrated, cli_version, bundle_dir, tmp_path):
    claude_dir, xdg = tmp_path / "claude", tmp_path / "xdg"
    claude_dir.mkdir()
    (xdg / "opencode").mkdir(parents=True)
    migrated.make_agent_homes("codex")  # ~/.codex does not count once CODEX_HOME is set
    env = {
        "CLAUDE_CONFIG_DIR": str(claude_dir),
        "CODEX_HOME": str(tmp_path / "absent-codex"),
        "XDG_CONFIG_HOME": str(xdg),
    }

    out = migrated.ok("setup", "skill", env=env)

    assert out.splitlines() == [
        installed_line("claude", cli_version, claude_dir / "skills"),
        installed_line("opencode", cli_version, xdg / "opencode" / "skills"),
    ]
    assert_bundle_copied(claude_dir / "skills", bundle_dir)
    assert_bundle_copied(xdg / "opencode" / "skills", bundle_dir)
    assert not (tmp_path / "absent-codex").exists()
    assert not (migrated.home / ".codex" / "skills").exists()
    assert migrated.installs() == {"claude": cli_version, "opencode": cli_version}


def test_without_homes_the_note_names_the_resolved_places(migrated, tmp_path, cli_version):
    env = {"CODEX_HOME": str(tmp_path / "x"), "XDG_CONFIG_HOME": str(tmp_path / "y")}

    note = migrated.ok("setup", "skill", env=env).splitlines()[1]

    assert note.startswith(
        f"agents: no coding-agent home found (looked for ~/.claude, {tmp_path / 'x'},"
        f" {tmp_path / 'y' / 'opencode'}); "
    )
    assert migrated.installs() == {"agents": cli_version}


def test_empty_variables_mean_the_defaults(migrated, cli_version):
    migrated.make_agent_homes("codex")
    env = {"CLAUDE_CONFIG_DIR": "", "CODEX_HOME": "", "XDG_CONFIG_HOME": ""}

    out = migrated.ok("setup", "skill", env=env)

    assert out.splitlines() == [installed_line("codex", cli_version, "~/.codex/skills")]
    assert (migrated.home / ".codex" / "skills" / "cafleet" / "SKILL.md").is_file()

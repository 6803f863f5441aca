"""Coding-agent homes follow CLAUDE_CONFIG_DIR, CODEX_HOME and XDG_CONFIG_HOME."""

from __future__ import annotations

from pathlib import Path

import pytest

from cafleet.adapters.agents.skills import FilesystemSkillInstaller
from cafleet.adapters.fake.clock import FakeClock
from cafleet.adapters.fake.store import MemoryStore
from cafleet.application.setup import SkillsService, shown
from cafleet.composition import Components
from cafleet.domain.agents.homes import AgentHomes
from cafleet.domain.skills import SKILL_NAMES, SkillHome
from cafleet.settings import Settings

HOME = Path("/home/u")


def homes(**env: str) -> AgentHomes:
    return AgentHomes.from_environ(env, HOME)


class TestDefaults:
    def test_every_home_under_home(self) -> None:
        resolved = homes()
        assert resolved.config_home(SkillHome.CLAUDE) == HOME / ".claude"
        assert resolved.config_home(SkillHome.CODEX) == HOME / ".codex"
        assert resolved.config_home(SkillHome.OPENCODE) == HOME / ".config" / "opencode"

    def test_skills_dirs(self) -> None:
        resolved = homes()
        assert resolved.skills_dir(SkillHome.CLAUDE) == HOME / ".claude" / "skills"
        assert resolved.skills_dir(SkillHome.CODEX) == HOME / ".codex" / "skills"
        assert resolved.skills_dir(SkillHome.OPENCODE) == HOME / ".config/opencode/skills"

    def test_opencode_preset(self) -> None:
        assert homes().opencode_preset == HOME / ".config/opencode/agents/cafleet.md"


@pytest.mark.parametrize(
    ("variable", "agent", "default"),
    [
        ("CLAUDE_CONFIG_DIR", SkillHome.CLAUDE, HOME / ".claude"),
        ("CODEX_HOME", SkillHome.CODEX, HOME / ".codex"),
    ],
)
class TestHomeVariables:
    def test_set(self, variable: str, agent: SkillHome, default: Path) -> None:
        resolved = homes(**{variable: "/z"})
        assert resolved.config_home(agent) == Path("/z")
        assert resolved.skills_dir(agent) == Path("/z/skills")

    def test_unset(self, variable: str, agent: SkillHome, default: Path) -> None:
        assert homes().config_home(agent) == default

    def test_empty_counts_as_unset(self, variable: str, agent: SkillHome, default: Path) -> None:
        assert homes(**{variable: ""}).config_home(agent) == default

    def test_relative_counts_as_unset(self, variable: str, agent: SkillHome, default: Path) -> None:
        assert homes(**{variable: "relative/dir"}).config_home(agent) == default
        assert homes(**{variable: "~/elsewhere"}).config_home(agent) == default

    def test_only_its_own_agent_moves(self, variable: str, agent: SkillHome, default: Path) -> None:
        resolved = homes(**{variable: "/z"})
        others = [a for a in SkillHome if a is not agent]
        assert [resolved.config_home(a) for a in others] == [homes().config_home(a) for a in others]


class TestXdgConfigHome:
    def test_set(self) -> None:
        resolved = homes(XDG_CONFIG_HOME="/y")
        assert resolved.config_home(SkillHome.OPENCODE) == Path("/y/opencode")
        assert resolved.skills_dir(SkillHome.OPENCODE) == Path("/y/opencode/skills")
        assert resolved.opencode_preset == Path("/y/opencode/agents/cafleet.md")

    def test_does_not_move_claude_or_codex(self) -> None:
        resolved = homes(XDG_CONFIG_HOME="/y")
        assert resolved.config_home(SkillHome.CLAUDE) == HOME / ".claude"
        assert resolved.config_home(SkillHome.CODEX) == HOME / ".codex"

    @pytest.mark.parametrize("value", ["", "relative", "~/.config-elsewhere"])
    def test_empty_or_relative_counts_as_unset(self, value: str) -> None:
        resolved = homes(XDG_CONFIG_HOME=value)
        assert resolved.config_home(SkillHome.OPENCODE) == HOME / ".config" / "opencode"
        assert resolved.opencode_preset == HOME / ".config/opencode/agents/cafleet.md"

    def test_trailing_slash_is_harmless(self) -> None:
        assert homes(XDG_CONFIG_HOME="/y/").opencode_preset == Path("/y/opencode/agents/cafleet.md")


class TestInstallerFollowsTheEnvironment:
    @pytest.mark.parametrize(
        ("variable", "agent", "skills"),
        [
            ("CLAUDE_CONFIG_DIR", SkillHome.CLAUDE, Path("z", "skills")),
            ("CODEX_HOME", SkillHome.CODEX, Path("z", "skills")),
            ("XDG_CONFIG_HOME", SkillHome.OPENCODE, Path("z", "opencode", "skills")),
        ],
    )
    def test_skills_land_in_the_resolved_dir(
        self, tmp_path: Path, variable: str, agent: SkillHome, skills: Path
    ) -> None:
        home = tmp_path / "home"
        home.mkdir()
        installer = FilesystemSkillInstaller(
            AgentHomes.from_environ({variable: str(tmp_path / "z")}, home)
        )

        assert installer.skills_dir(agent) == tmp_path / skills
        assert installer.install(agent).directory == tmp_path / skills
        for name in SKILL_NAMES:
            assert (tmp_path / skills / name / "SKILL.md").is_file()
        assert list(home.iterdir()) == []

    def test_a_home_is_detected_where_its_variable_points(self, tmp_path: Path) -> None:
        home = tmp_path / "home"
        (home / ".codex").mkdir(parents=True)  # ignored: CODEX_HOME points elsewhere
        (tmp_path / "claude").mkdir()
        (tmp_path / "xdg" / "opencode").mkdir(parents=True)
        env = {
            "CLAUDE_CONFIG_DIR": str(tmp_path / "claude"),
            "CODEX_HOME": str(tmp_path / "codex"),
            "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
        }

        detected = FilesystemSkillInstaller(AgentHomes.from_environ(env, home)).detected_homes()

        assert detected == [SkillHome.CLAUDE, SkillHome.OPENCODE]


class TestComposition:
    def test_components_resolve_homes_from_their_environment(self) -> None:
        settings = Settings.from_environ({"CAFLEET_DATABASE_URL": "sqlite://", "HOME": "/h"})
        env = {"HOME": "/h", "CODEX_HOME": "/x", "XDG_CONFIG_HOME": "/y"}
        components = Components(settings, env)

        assert components.agent_homes == AgentHomes(
            claude=Path("/h/.claude"),
            codex=Path("/x"),
            opencode=Path("/y/opencode"),
            shared=Path("/h/.agents"),
        )
        assert components.agent_homes.opencode_preset == Path("/y/opencode/agents/cafleet.md")


class TestShownPaths:
    def test_under_home_is_abbreviated(self) -> None:
        assert shown(HOME / ".codex" / "skills", HOME) == "~/.codex/skills"

    def test_elsewhere_is_absolute(self) -> None:
        assert shown(Path("/x/skills"), HOME) == "/x/skills"

    def test_no_home_known(self) -> None:
        assert shown(HOME / ".codex", None) == "/home/u/.codex"

    def test_without_homes_the_shared_folder_is_used_and_the_places_looked_at_named(
        self, tmp_path: Path
    ) -> None:
        home = tmp_path / "home"
        env = {"CODEX_HOME": "/x", "XDG_CONFIG_HOME": "/y"}
        store = MemoryStore()
        service = SkillsService(
            store,
            FakeClock(),
            FilesystemSkillInstaller(AgentHomes.from_environ(env, home)),
            "1.0",
            user_home=home,
        )

        [done] = service.install()

        assert (done.home, done.directory) == (SkillHome.SHARED, home / ".agents" / "skills")
        assert (home / ".agents" / "skills" / "cafleet" / "SKILL.md").is_file()
        assert done.notes() == [
            "agents: no coding-agent home found (looked for ~/.claude, /x, /y/opencode); Codex"
            " and OpenCode read this folder, Claude Code does not: run 'cafleet setup skill'"
            " again after installing an agent"
        ]
        assert [i.coding_agent for i in service.installs()] == ["agents"]

"""FilesystemSkillInstaller in-process: bundle checks, layout, copy-then-rename swap."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cafleet.adapters.agents import skills as installer_module
from cafleet.adapters.agents.skills import FilesystemSkillInstaller
from cafleet.domain.agents.homes import AgentHomes
from cafleet.domain.errors import CafleetError
from cafleet.domain.skills import SKILL_NAMES, SkillHome

BUNDLE_MISSING = "bundled skills are missing from this installation; reinstall cafleet"


@pytest.fixture
def user_home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


def default_homes(user_home: Path) -> AgentHomes:
    """The homes with none of CLAUDE_CONFIG_DIR, CODEX_HOME, XDG_CONFIG_HOME set."""
    return AgentHomes.from_environ({}, user_home)


@pytest.fixture
def copied_bundle(tmp_path: Path, bundle_dir: Path) -> Path:
    """A private copy of the bundle that a test may damage."""
    path = tmp_path / "bundle"
    shutil.copytree(bundle_dir, path, ignore=shutil.ignore_patterns("__pycache__"))
    return path


def test_empty_bundle_is_reported_as_missing(user_home, tmp_path):
    empty = tmp_path / "empty-bundle"
    empty.mkdir()
    installer = FilesystemSkillInstaller(default_homes(user_home), bundle=empty)

    with pytest.raises(CafleetError) as caught:
        installer.install(SkillHome.CLAUDE)

    assert caught.value.message == BUNDLE_MISSING
    assert list(user_home.iterdir()) == []


def test_absent_bundle_directory_is_reported_as_missing(user_home, tmp_path):
    installer = FilesystemSkillInstaller(default_homes(user_home), bundle=tmp_path / "nowhere")

    with pytest.raises(CafleetError) as caught:
        installer.install(SkillHome.CODEX)

    assert caught.value.message == BUNDLE_MISSING


def test_bundle_with_one_skill_md_missing_is_reported_before_touching_home(
    user_home, copied_bundle
):
    (copied_bundle / "cafleet-research" / "SKILL.md").unlink()
    installer = FilesystemSkillInstaller(default_homes(user_home), bundle=copied_bundle)

    with pytest.raises(CafleetError) as caught:
        installer.install(SkillHome.CLAUDE)

    assert caught.value.message == BUNDLE_MISSING
    assert list(user_home.iterdir()) == []


def test_the_installed_bundle_is_complete(bundle_dir):
    for name in SKILL_NAMES:
        text = (bundle_dir / name / "SKILL.md").read_text(encoding="utf-8")
        assert text.startswith("---\n"), name
        frontmatter = text.split("---\n", 2)[1]
        assert f"name: {name}\n" in frontmatter
        assert "description:" in frontmatter


@pytest.mark.parametrize(
    ("agent", "relative"),
    [
        (SkillHome.CLAUDE, ".claude/skills"),
        (SkillHome.CODEX, ".codex/skills"),
        (SkillHome.OPENCODE, ".config/opencode/skills"),
    ],
)
def test_each_agent_gets_its_own_skills_dir(user_home, agent, relative):
    installer = FilesystemSkillInstaller(default_homes(user_home))

    assert installer.install(agent).directory == user_home / relative
    for name in SKILL_NAMES:
        assert (user_home / relative / name / "SKILL.md").is_file()


def test_detected_homes_are_directories_in_detection_order(user_home):
    (user_home / ".config" / "opencode").mkdir(parents=True)
    (user_home / ".claude").mkdir()
    (user_home / ".codex").write_text("a file is not a home\n")

    detected = FilesystemSkillInstaller(default_homes(user_home)).detected_homes()

    assert detected == [SkillHome.CLAUDE, SkillHome.OPENCODE]


def test_interrupted_copy_keeps_the_old_tree_and_leaves_no_staging(
    user_home, copied_bundle, monkeypatch
):
    installer = FilesystemSkillInstaller(default_homes(user_home), bundle=copied_bundle)
    skills_dir = installer.install(SkillHome.CLAUDE).directory
    old = skills_dir / "cafleet-design-doc"
    (old / "OLD.md").write_text("previous release\n")
    real_copytree = shutil.copytree

    def copy_then_fail(source, destination, **kwargs):
        real_copytree(source, destination, **kwargs)  # a partial staging tree exists now
        if Path(source).name == "cafleet-design-doc":
            raise OSError(28, "No space left on device")
        return destination

    monkeypatch.setattr(installer_module.shutil, "copytree", copy_then_fail)
    (copied_bundle / "cafleet" / "NEW.md").write_text("new release\n")

    with pytest.raises(CafleetError) as caught:
        installer.install(SkillHome.CLAUDE)

    assert caught.value.message == (
        f"failed to install skills into {skills_dir}: No space left on device"
    )
    assert (old / "OLD.md").read_text() == "previous release\n"
    assert (skills_dir / "cafleet" / "NEW.md").is_file()  # skills before the failure swapped
    assert sorted(p.name for p in skills_dir.iterdir()) == sorted(SKILL_NAMES)


def test_an_explicit_install_creates_a_missing_home_named_by_a_variable(user_home, tmp_path):
    codex_home = tmp_path / "elsewhere" / "codex"
    installer = FilesystemSkillInstaller(
        AgentHomes.from_environ({"CODEX_HOME": str(codex_home)}, user_home)
    )

    assert installer.detected_homes() == []
    assert installer.install(SkillHome.CODEX).directory == codex_home / "skills"
    assert installer.detected_homes() == [SkillHome.CODEX]
    assert list(user_home.iterdir()) == []

"""Copies the skills bundled in the package into coding-agent homes.

The homes are the ones the agents themselves use (`AgentHomes`: CLAUDE_CONFIG_DIR, CODEX_HOME,
XDG_CONFIG_HOME, else their defaults under $HOME). Each skill is copied next to its
destination and swapped in by rename, so an interrupted install never leaves half a tree
behind.
"""

from __future__ import annotations

import os
import shutil
import uuid
from pathlib import Path

from cafleet.application.ports import SkillInstaller
from cafleet.domain.agent_homes import AgentHomes
from cafleet.domain.errors import Invalid, Unavailable
from cafleet.domain.skills import SKILL_NAMES, SkillHome

BUNDLE = Path(__file__).resolve().parent.parent.parent / "skills"


class FilesystemSkillInstaller(SkillInstaller):
    def __init__(self, homes: AgentHomes, bundle: Path = BUNDLE) -> None:
        self._homes = homes
        self._bundle = bundle

    def detected_homes(self) -> list[SkillHome]:
        """Agents whose config home is an existing directory."""
        return [agent for agent in SkillHome if self._homes.config_home(agent).is_dir()]

    def skills_dir(self, home: SkillHome) -> Path:
        return self._homes.skills_dir(home)

    def install(self, home: SkillHome) -> Path:
        if not all((self._bundle / name / "SKILL.md").is_file() for name in SKILL_NAMES):
            raise Unavailable(
                "bundled skills are missing from this installation; reinstall cafleet"
            )
        target = self.skills_dir(home)
        try:
            target.mkdir(parents=True, exist_ok=True)
            for name in SKILL_NAMES:
                _swap_in(self._bundle / name, target / name)
        except OSError as exc:
            raise Invalid(
                f"failed to install skills into {target}: {exc.strerror or exc}"
            ) from None
        return target


def _swap_in(source: Path, destination: Path) -> None:
    """Copy beside, then rename into place; the old tree is removed only once the new one
    stands, and put back if the swap fails."""
    tag = uuid.uuid4().hex[:8]
    staging = destination.with_name(f".{destination.name}.new-{tag}")
    retired = destination.with_name(f".{destination.name}.old-{tag}")
    try:
        shutil.copytree(source, staging, ignore=shutil.ignore_patterns("__pycache__"))
        moved_aside = destination.exists() or destination.is_symlink()
        if moved_aside:
            os.rename(destination, retired)
        try:
            os.rename(staging, destination)
        except OSError:
            if moved_aside:
                os.rename(retired, destination)
            raise
    finally:
        _remove(staging)
        _remove(retired)


def _remove(path: Path) -> None:
    if path.is_symlink():
        path.unlink()
    else:
        shutil.rmtree(path, ignore_errors=True)

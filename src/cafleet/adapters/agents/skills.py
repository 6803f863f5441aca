"""Copies the skills bundled in the package into coding-agent homes.

The homes are the ones the agents themselves use (`AgentHomes`: CLAUDE_CONFIG_DIR, CODEX_HOME,
XDG_CONFIG_HOME, else their defaults under $HOME). Each skill is first copied whole beside its
destination, so a failed copy changes nothing. A new skill folder is then renamed into place;
into an existing one each shipped file is renamed over its old copy, files that an earlier
install wrote (listed in the folder's manifest) and the bundle no longer ships are removed, and
every other file is the user's: kept, and reported.
"""

from __future__ import annotations

import os
import shutil
import uuid
from pathlib import Path

import cafleet
from cafleet.application.ports.agents import SkillInstaller
from cafleet.domain.agents.homes import AgentHomes
from cafleet.domain.errors import Invalid, Unavailable
from cafleet.domain.skills import AGENT_HOMES, SKILL_NAMES, SkillHome, SkillsCopied

BUNDLE = Path(cafleet.__file__).resolve().parent / "skills"  # package data
MANIFEST = ".cafleet-files"  # in each installed skill folder: the files CAFleet wrote there


class FilesystemSkillInstaller(SkillInstaller):
    def __init__(self, homes: AgentHomes, bundle: Path = BUNDLE) -> None:
        self._homes = homes
        self._bundle = bundle

    def detected_homes(self) -> list[SkillHome]:
        """Agents whose config home is an existing directory."""
        return [agent for agent in AGENT_HOMES if self._homes.config_home(agent).is_dir()]

    def skills_dir(self, home: SkillHome) -> Path:
        return self._homes.skills_dir(home)

    def install(self, home: SkillHome) -> SkillsCopied:
        if not all((self._bundle / name / "SKILL.md").is_file() for name in SKILL_NAMES):
            raise Unavailable(
                "bundled skills are missing from this installation; reinstall cafleet"
            )
        target = self.skills_dir(home)
        kept: list[str] = []
        try:
            target.mkdir(parents=True, exist_ok=True)
            for name in SKILL_NAMES:
                kept += (
                    f"{name}/{file}" for file in _install_skill(self._bundle / name, target / name)
                )
        except OSError as exc:
            raise Invalid(
                f"failed to install skills into {target}: {exc.strerror or exc}"
            ) from None
        return SkillsCopied(target, tuple(kept))


def _install_skill(source: Path, destination: Path) -> list[str]:
    """Install one skill; the files in its folder that CAFleet did not write."""
    tag = uuid.uuid4().hex[:8]
    staging = destination.with_name(f".{destination.name}.new-{tag}")
    try:
        shutil.copytree(source, staging, ignore=shutil.ignore_patterns("__pycache__"))
        shipped = _files(staging)
        (staging / MANIFEST).write_text("".join(f"{f}\n" for f in shipped), encoding="utf-8")
        if destination.is_dir() and not destination.is_symlink():
            return _merge(staging, destination, shipped)
        _swap_in(staging, destination, tag)  # nothing there, or a link or file in the way
        return []
    finally:
        _remove(staging)


def _merge(staging: Path, destination: Path, shipped: list[str]) -> list[str]:
    earlier = _manifest(destination)
    for file in [*shipped, MANIFEST]:
        (destination / file).parent.mkdir(parents=True, exist_ok=True)
        os.replace(staging / file, destination / file)
    for file in sorted(set(earlier) - set(shipped)):
        path = destination / file
        if path.is_file() or path.is_symlink():
            path.unlink()
            _prune_empty(path, destination)
    return [f for f in _files(destination) if f not in shipped and f != MANIFEST]


def _manifest(folder: Path) -> list[str]:
    """What an earlier install wrote; none of it may point outside the folder."""
    try:
        lines = (folder / MANIFEST).read_text(encoding="utf-8").splitlines()
    except (FileNotFoundError, UnicodeDecodeError):
        return []
    return [
        line for line in lines if line and ".." not in Path(line).parts and not line.startswith("/")
    ]


def _files(folder: Path) -> list[str]:
    return sorted(
        str(path.relative_to(folder))
        for path in folder.rglob("*")
        if path.is_file() or path.is_symlink()
    )


def _prune_empty(removed: Path, top: Path) -> None:
    for parent in removed.parents:
        if parent == top or not parent.is_relative_to(top):
            return
        try:
            parent.rmdir()
        except OSError:
            return  # not empty: something of the user's is there


def _swap_in(staging: Path, destination: Path, tag: str) -> None:
    """Rename into place; what stood there is removed only once the new tree stands, and put
    back if the rename fails."""
    retired = destination.with_name(f".{destination.name}.old-{tag}")
    try:
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
        _remove(retired)


def _remove(path: Path) -> None:
    if path.is_symlink():
        path.unlink()
    else:
        shutil.rmtree(path, ignore_errors=True)

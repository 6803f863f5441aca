"""Skill installs: which coding-agent homes hold our skills, and at which version."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from pathlib import Path

from cafleet.domain.errors import Invalid

SKILL_NAMES = ("cafleet", "cafleet-design-doc", "cafleet-research")


class SkillHome(StrEnum):
    """Where skills are installed: each coding agent's own home, in detection order, and the
    cross-agent `~/.agents` folder (read by Codex and OpenCode, not by Claude Code), which
    `setup` uses when no agent's home exists yet."""

    CLAUDE = "claude"
    CODEX = "codex"
    OPENCODE = "opencode"
    SHARED = "agents"


AGENT_HOMES = (SkillHome.CLAUDE, SkillHome.CODEX, SkillHome.OPENCODE)  # what detection looks for


@dataclass(frozen=True)
class SkillsCopied:
    """One home's install: its skills directory and the files there CAFleet did not write
    (kept, relative to that directory)."""

    directory: Path
    kept: tuple[str, ...] = ()


@dataclass(frozen=True)
class SkillInstall:
    coding_agent: str
    cafleet_version: str
    installed_at: datetime

    def is_current(self, version: str) -> bool:
        return self.cafleet_version == version


def require_current(installs: Sequence[SkillInstall], version: str) -> None:
    """The gate in front of fleet, member, message and monitor commands."""
    if not installs:
        raise Invalid("no skills install is recorded; run 'cafleet setup' first")
    stale = [i for i in sorted(installs, key=lambda i: i.coding_agent) if not i.is_current(version)]
    if stale:
        listed = ", ".join(f"{i.coding_agent}={i.cafleet_version}" for i in stale)
        raise Invalid(
            f"stale skills detected ({listed}; CLI {version}); run 'cafleet setup"
            " skill' to reinstall"
        )

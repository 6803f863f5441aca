"""Where each coding agent keeps its configuration, as its own environment variables say
(each profile's `config_home`, domain/agents/claude.py, codex.py, opencode.py):

- Claude Code: `$CLAUDE_CONFIG_DIR`, else `~/.claude`.
- Codex: `$CODEX_HOME`, else `~/.codex`.
- OpenCode: `$XDG_CONFIG_HOME/opencode`, else `~/.config/opencode`.

Skills live in `<config home>/skills`; the cross-agent folder is `~/.agents` (its skills in
`~/.agents/skills`, which Codex and OpenCode read besides their own). The opencode agent preset in
`<config home>/agents/cafleet.md`. An empty variable counts as unset, and so does a relative
one (the XDG base-directory rule: only an absolute path is a usable value). Nothing here
touches the filesystem.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from cafleet.domain.agents.profile import ConfigHome
from cafleet.domain.agents.registry import PROFILES
from cafleet.domain.placement import CodingAgent
from cafleet.domain.skills import SkillHome

OPENCODE_PRESET_NAME = "cafleet"
SHARED_HOME = ".agents"  # under HOME; no agent variable moves it


@dataclass(frozen=True)
class AgentHomes:
    """Each coding agent's resolved configuration home."""

    claude: Path
    codex: Path
    opencode: Path
    shared: Path

    @classmethod
    def from_environ(cls, env: Mapping[str, str], home: Path) -> AgentHomes:
        def resolved(agent: CodingAgent) -> Path:
            where = PROFILES[agent].config_home
            if where is None:
                raise ValueError(f"{agent.value} has no configuration home")
            return _resolved(where, env, home)

        return cls(
            claude=resolved(CodingAgent.CLAUDE),
            codex=resolved(CodingAgent.CODEX),
            opencode=resolved(CodingAgent.OPENCODE),
            shared=home / SHARED_HOME,
        )

    def config_home(self, agent: SkillHome) -> Path:
        return {
            SkillHome.CLAUDE: self.claude,
            SkillHome.CODEX: self.codex,
            SkillHome.OPENCODE: self.opencode,
            SkillHome.SHARED: self.shared,
        }[agent]

    def skills_dir(self, agent: SkillHome) -> Path:
        return self.config_home(agent) / "skills"

    @property
    def opencode_preset(self) -> Path:
        """The file `opencode --agent cafleet` loads."""
        return self.opencode / "agents" / f"{OPENCODE_PRESET_NAME}.md"


def _resolved(where: ConfigHome, env: Mapping[str, str], home: Path) -> Path:
    base = _absolute(env.get(where.variable)) or home / where.default
    return base / where.subdir if where.subdir else base


def _absolute(value: str | None) -> Path | None:
    if not value:
        return None
    path = Path(value)
    return path if path.is_absolute() else None

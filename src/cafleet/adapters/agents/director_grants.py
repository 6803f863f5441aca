"""Reading the coding agents' own settings for what each needs to run `cafleet` as the
Director (domain/agents/grants.py judges them). Nothing is ever written."""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping
from pathlib import Path

from cafleet.domain.agents.grants import DirectorGrant, claude_grant, codex_grant
from cafleet.domain.agents.homes import AgentHomes


def director_grants(
    env: Mapping[str, str], home: Path, cwd: Path, database_dir: Path | None
) -> list[DirectorGrant]:
    """Claude Code's allow rule (the user's settings, then this project's) and Codex's
    sandbox grants (its config.toml) for `cafleet`."""
    homes = AgentHomes.from_environ(env, home)
    claude_files = [
        homes.claude / "settings.json",
        cwd / ".claude" / "settings.json",
        cwd / ".claude" / "settings.local.json",
    ]
    claude = claude_grant([(str(path), _json(path)) for path in claude_files])
    config = homes.codex / "config.toml"
    # the sandbox lets tools write the workspace and the temporary directory, not these
    runtime = env.get("XDG_RUNTIME_DIR")
    writable = [str(d) for d in (database_dir, runtime and Path(runtime, "cafleet")) if d]
    return [claude, codex_grant(str(config), _toml(config), writable)]


def _json(path: Path) -> object:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _toml(path: Path) -> dict[str, object] | None:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None

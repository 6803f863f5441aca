"""Where the pinned agent CLIs are (installed by `scripts/agents` into `.cache/agents`)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

PINNED = {"claude": "2.1.332", "codex": "0.171.0", "opencode": "1.18.33"}
REPO = Path(__file__).resolve().parents[2]


def agent_bin_dir() -> Path | None:
    """`$CAFLEET_AGENTS_BIN` when set, else the repo's `.cache/agents/node_modules/.bin`."""
    configured = os.environ.get("CAFLEET_AGENTS_BIN")
    found = Path(configured) if configured else REPO / ".cache/agents/node_modules/.bin"
    return found if found.is_dir() else None


def require_agent(name: str) -> str:
    """The agent's binary; skips the test when it is missing (fails instead in CI)."""
    bin_dir = agent_bin_dir()
    binary = bin_dir / name if bin_dir else None
    if binary is not None and os.access(binary, os.X_OK):
        return str(binary)
    reason = f"{name} {PINNED[name]} is not installed; run scripts/agents (needs npm)"
    if os.environ.get("CI") == "true":  # CI must not skip these silently
        pytest.fail(reason)
    pytest.skip(reason)

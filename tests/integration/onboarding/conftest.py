"""Fixtures for the onboarding tests: `cafleet setup`, the skills gate and `cafleet doctor`.

Every CLI call runs the installed `cafleet` script as a subprocess with HOME pointed at a fresh
temporary directory, `CAFLEET_DATABASE_URL` pointed at a temporary SQLite file, and none of the
CAFLEET_* / tmux / herdr variables or the agent-home variables (CLAUDE_CONFIG_DIR, CODEX_HOME,
XDG_CONFIG_HOME) of the outer shell. Tests that need a calling pane get the
shared private tmux server (the `tmux` fixture of tests/support/tmux.py).

Helpers are exposed as fixtures so that test modules never import this file.
"""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from support.cli import CAFLEET, Result, merged, run_cafleet
from support.tmux import clean_environment

AGENT_HOMES = {
    "claude": Path(".claude"),
    "codex": Path(".codex"),
    "opencode": Path(".config", "opencode"),
}
# what moves an agent's home away from HOME; a test sets them per call
AGENT_HOME_VARIABLES = ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "XDG_CONFIG_HOME")
SKILL_NAMES = ("cafleet", "cafleet-design-doc", "cafleet-research")


@dataclass
class Sandbox:
    """A temporary HOME and database file, with `cafleet` bound to them."""

    home: Path
    db_path: Path
    env: dict[str, str]

    # ------------------------------------------------------------------ the CLI

    def run(self, *args: str, env: Mapping[str, str | None] | None = None) -> Result:
        """Run `cafleet args...`; per-call env overrides (None removes a variable)."""
        return run_cafleet(*args, env=merged(self.env, env), cwd=self.home)

    def ok(self, *args: str, **kwargs: Any) -> str:
        """Run, insist on exit 0 and a silent stderr, return stdout."""
        result = self.run(*args, **kwargs)
        assert result.code == 0, result
        assert result.stderr == "", result
        return result.stdout

    def fails(self, *args: str, **kwargs: Any) -> str:
        """Run, insist on exit 1, empty stdout and exactly one stderr line; return that line."""
        result = self.run(*args, **kwargs)
        assert result.code == 1, result
        assert result.stdout == "", result
        lines = result.stderr.splitlines()
        assert len(lines) == 1, result
        return lines[0]

    # ------------------------------------------------------------------ the HOME

    def agent_home(self, agent: str) -> Path:
        return self.home / AGENT_HOMES[agent]

    def skills_dir(self, agent: str) -> Path:
        return self.agent_home(agent) / "skills"

    def make_agent_homes(self, *agents: str) -> None:
        for agent in agents:
            self.agent_home(agent).mkdir(parents=True)

    def leftovers(self, agent: str) -> list[str]:
        """Staging or retired copies (`.cafleet.new-*`, `.cafleet.old-*`) left in a skills dir."""
        directory = self.skills_dir(agent)
        return sorted(p.name for p in directory.iterdir() if p.name.startswith("."))

    # ------------------------------------------------------------------ the database

    def sql(self, query: str, *params: Any) -> list[tuple[Any, ...]]:
        conn = sqlite3.connect(self.db_path, isolation_level=None, timeout=30)
        try:
            return [tuple(row) for row in conn.execute(query, params)]
        finally:
            conn.close()

    def installs(self) -> dict[str, str]:
        """skill_installs as {coding_agent: cafleet_version}."""
        rows = self.sql("SELECT coding_agent, cafleet_version FROM skill_installs")
        return dict(rows)

    def record_version(self, version: str, agent: str | None = None) -> None:
        """Pretend the skills were installed by another cafleet version."""
        if agent is None:
            self.sql("UPDATE skill_installs SET cafleet_version = ?", version)
        else:
            self.sql(
                "UPDATE skill_installs SET cafleet_version = ? WHERE coding_agent = ?",
                version,
                agent,
            )


def _new_sandbox(tmp_path: Path) -> Sandbox:
    home = tmp_path / "home"
    home.mkdir()
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    db_path = tmp_path / "x.db"
    env = clean_environment(
        HOME=str(home),
        CAFLEET_DATABASE_URL=f"sqlite:///{db_path}",
        XDG_RUNTIME_DIR=str(runtime),
    )
    for variable in AGENT_HOME_VARIABLES:  # the agent homes must default to the scratch HOME
        env.pop(variable, None)
    return Sandbox(home=home, db_path=db_path, env=env)


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="session")
def cli_version() -> str:
    """The version the installed script reports (`cafleet --version` -> `cafleet <version>`)."""
    done = subprocess.run(
        [*CAFLEET, "--version"],
        env=clean_environment(),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    name, version = done.stdout.split()
    assert name == "cafleet"
    return version


@pytest.fixture(scope="session")
def bundle_dir() -> Path:
    """The skills shipped inside the installed package."""
    import cafleet

    path = Path(cafleet.__file__).resolve().parent / "skills"
    assert all((path / name / "SKILL.md").is_file() for name in SKILL_NAMES), path
    return path


@pytest.fixture(scope="session")
def migrated_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database file brought to head once per session by the real `cafleet setup db`."""
    sandbox = _new_sandbox(tmp_path_factory.mktemp("template"))
    sandbox.ok("setup", "db")
    assert not sandbox.db_path.with_name("x.db-wal").exists()
    return sandbox.db_path


@pytest.fixture
def sandbox(tmp_path: Path) -> Sandbox:
    """An empty HOME (no coding-agent homes) and a database URL whose file does not exist."""
    return _new_sandbox(tmp_path)


@pytest.fixture
def migrated(sandbox: Sandbox, migrated_template: Path) -> Sandbox:
    """The sandbox with its database at head and no skills installed."""
    shutil.copyfile(migrated_template, sandbox.db_path)
    return sandbox


@pytest.fixture
def installed(migrated: Sandbox) -> Sandbox:
    """The sandbox with its database at head and the skills installed for claude."""
    migrated.make_agent_homes("claude")
    migrated.ok("setup", "skill")
    return migrated

"""The doctor's `next:` line: the first thing a user has to do, from what it saw."""

from __future__ import annotations

from dataclasses import replace

import pytest

from cafleet.application.setup import Readiness, next_step

NOTHING_ON_PATH = {"claude": False, "codex": False, "opencode": False, "cafleet-demo-agent": False}
READY = Readiness(
    multiplexer_ok=True,
    database_current=True,
    skills_current=True,
    skill_homes=frozenset({"agents"}),
    on_path={**NOTHING_ON_PATH, "cafleet-demo-agent": True},
)


@pytest.mark.parametrize(
    "change",
    [{"database_current": False}, {"skills_current": False}],
    ids=["database", "skills"],
)
def test_setup_comes_first(change: dict[str, bool]) -> None:
    assert next_step(replace(READY, multiplexer_ok=False, **change)) == "run 'cafleet setup'"


def test_outside_a_multiplexer_it_says_where_to_run() -> None:
    assert next_step(replace(READY, multiplexer_ok=False)) == (
        "run cafleet inside a tmux (or herdr) pane"
    )


def test_without_a_real_agent_it_points_at_the_demo_agent() -> None:
    line = next_step(READY)

    assert line.startswith("no coding agent on PATH (claude, codex, opencode); try the demo agent")
    assert '--agent-command "cafleet-demo-agent {prompt}"' in line


def test_without_any_agent_it_says_to_install_one() -> None:
    assert next_step(replace(READY, on_path=NOTHING_ON_PATH)) == (
        "no coding agent on PATH: install Claude Code, Codex or OpenCode"
    )


def test_claude_does_not_read_the_shared_folder() -> None:
    seen = replace(READY, on_path={**READY.on_path, "claude": True, "codex": True})

    assert next_step(seen) == (
        "run 'cafleet setup skill --agent claude' so claude finds the skills"
    )


@pytest.mark.parametrize("homes", [{"agents"}, {"codex"}])
def test_an_agent_that_finds_its_skills_is_ready(homes: set[str]) -> None:
    seen = replace(READY, skill_homes=frozenset(homes), on_path={**READY.on_path, "codex": True})

    assert next_step(seen) == "ready: cafleet fleet create --name my-project"

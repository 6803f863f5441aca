"""What each pinned agent sets for its own tools, measured again: a command its shell tool
runs (`sleep`, read from /proc while it runs) against the environment the agent itself was
started with. Every variable it adds or changes must be one its profile names, so that a
member spawned from such a tool never inherits it; a new version that adds one fails here."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from cafleet.domain.agents.registry import PROFILES
from cafleet.domain.placement import CodingAgent
from realagents.director import NOT_SESSION, Director, tool_environment

pytestmark = [pytest.mark.realagent, pytest.mark.tmux, pytest.mark.slow]


@pytest.mark.parametrize("agent", ["claude", "codex", "opencode"])
def test_every_variable_the_agent_sets_for_its_tools_is_in_its_profile(
    agent: str, start_director: Callable[[str], Director]
) -> None:
    director = start_director(agent)
    director.say("RUN: sleep 20")
    tool = tool_environment(director, "sleep", timeout=90)
    started = director.started_with()

    added = {k: v for k, v in tool.items() if started.get(k) != v and k not in NOT_SESSION}
    session = PROFILES[CodingAgent(agent)].session
    assert session.runs(tool)
    assert sorted(k for k in added if not session.owns(k) and k != "PATH") == []
    # what a member gets instead: what the agent was started with, for each of them
    handed = session.handed_on(tool, started)
    assert {k: handed.get(k) for k in added} == {k: started.get(k) for k in added}

"""Each real agent CLI starts offline in a tmux pane, runs one scripted tool call and exits.

This proves the scratch home, the model server's wire formats and the tmux set-up before any
CAFleet behaviour is tested with these agents.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest

from realagents.installed import require_agent
from realagents.model_server import ScriptedModelServer

# How each TUI starts interactively with a first prompt and no dialog. Claude as root refuses
# bypassPermissions, and dontAsk denies Bash without a rule, so the test allows Bash itself.
ARGV: dict[str, Callable[[str, str], list[str]]] = {
    "claude": lambda b, p: [b, "--permission-mode", "dontAsk", "--allowedTools", "Bash", "--", p],
    # --no-daemon: else a shared app-server daemon outlives the TUI.
    "codex": lambda b, p: [b, "--no-daemon", "-a", "never", "-s", "danger-full-access", p],
    "opencode": lambda b, p: [b, "--prompt", p],
}
# OpenCode needs 10-15 s to its first request on 2 busy cores; the others about 1 s.
RUN_TIMEOUT = 90.0


@pytest.mark.realagent
@pytest.mark.tmux
@pytest.mark.parametrize("agent", sorted(ARGV))
def test_agent_runs_a_scripted_tool_offline_and_exits(
    agent: str, model_server: ScriptedModelServer, agent_home: Any, agent_tmux: Any
) -> None:
    binary = require_agent(agent)
    marker = agent_home.workdir / "marker.txt"
    command = f"echo ok-{agent} > {marker}"
    since = len(model_server.requests)

    pane = agent_tmux.spawn(ARGV[agent](binary, f"RUN: {command}"), agent_home.workdir)

    deadline = time.monotonic() + RUN_TIMEOUT
    while not (marker.exists() and marker.read_text().strip() == f"ok-{agent}"):
        assert time.monotonic() < deadline, (
            f"{agent} did not run the tool within {RUN_TIMEOUT}s:\n{agent_tmux.capture(pane)}"
        )
        time.sleep(0.2)

    def saw_result(record: dict[str, Any]) -> bool:
        return any(i["kind"] == "tool" and i["command"] == command for i in record["new"])

    answered = model_server.wait_for(saw_result, timeout=30, since=since)
    assert answered["decision"]["rule"] == "done"
    # The final answer on screen means the turn is over, so /exit is a command, not a message.
    agent_tmux.wait_for_screen(pane, "FAKE-DONE", timeout=30)

    agent_tmux.type_line(pane, "/exit")

    assert agent_tmux.wait_gone(pane, timeout=20), agent_tmux.capture(pane)
    left = agent_tmux.wait_no_leftovers(timeout=10)
    assert not left, f"{agent} left processes behind: {left}"

"""A Director that is a coding agent runs `cafleet` as one of its tools, in a shell the agent
started with the variables of its session added. A member spawned from there must get the
environment the user gave the agent, not the agent's session (measured variables of the
pinned versions: see tests/unit/domain/agents/test_session_variables.py and tests/realagents)."""

from __future__ import annotations

import shlex
import subprocess
from collections.abc import Mapping

import pytest
from panes_support import CAFLEET, DEMO_AGENT, PaneFleet, Result
from test_panes_spawn import exec_to_file, parse_env

from cafleet.domain.placement import CodingAgent

pytestmark = pytest.mark.tmux

# what the user exported before starting the agent
USER = {"PAGER": "less", "GIT_EDITOR": "vim", "USER_ONLY": "kept"}
# what each agent's shell tool had on top of it (Claude Code 2.1.332, Codex 0.171.0,
# OpenCode 1.18.33)
TOOLS = {
    CodingAgent.CLAUDE: {
        "CLAUDECODE": "1",
        "CLAUDE_CODE_ENTRYPOINT": "cli",
        "CLAUDE_CODE_SESSION_ID": "3125912a-26dc-48da-8629-7b86a15412ee",
        "CLAUDE_CODE_CHILD_SESSION": "1",
        "CLAUDE_CODE_MESSAGING_SOCKET": "/tmp/cc-socks/11599.sock",
        "CLAUDE_CODE_MESSAGING_TOKEN": "c000750e7070f126ee3ef953da5a9909",
        "CLAUDE_PID": "11599",
        "AI_AGENT": "claude-code_2-1-332_agent",
        "GIT_EDITOR": "true",
    },
    CodingAgent.CODEX: {
        "CODEX_THREAD_ID": "01a251ea-4ff2",
        "CODEX_SESSION_ID": "01a251ea-4ff2",
        "CODEX_TOOL_CALL_ID": "call_000003",
        "CODEX_CI": "1",
        "NO_COLOR": "1",
        "PAGER": "cat",
        "LC_ALL": "C.UTF-8",
    },
    CodingAgent.OPENCODE: {"OPENCODE": "1", "OPENCODE_PID": "25449", "AGENT": "1"},
}


def without_agents(env: Mapping[str, str]) -> dict[str, str]:
    """`env` without the agents' variables (the tests may themselves run under an agent)."""
    return {k: v for k, v in env.items() if not any(k in tool for tool in TOOLS.values())}


def users(fleet: PaneFleet) -> dict[str, str]:
    """What the user started the agent with."""
    return without_agents(fleet.environment()) | USER


def run_as_a_tool(fleet: PaneFleet, tool: Mapping[str, str], *args: str) -> Result:
    """`cafleet ...` from a shell standing for the agent: started with the user's
    environment, it exports the session's variables and runs the command as its child."""
    exports = "".join(f"export {k}={shlex.quote(v)}; " for k, v in tool.items())
    script = f"{exports}{shlex.join([*CAFLEET, *args])}; status=$?; exit $status"
    done = subprocess.run(
        ["/bin/sh", "-c", script],
        env=users(fleet),
        cwd=fleet.tmp,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return Result(done.returncode, done.stdout, done.stderr)


@pytest.mark.parametrize("agent", list(TOOLS), ids=lambda a: a.value)
def test_a_member_gets_what_the_user_gave_the_agent_not_its_session(
    pane_fleet: PaneFleet, agent: CodingAgent
) -> None:
    fleet = pane_fleet
    log = fleet.tmp / "worker.jsonl"
    created = run_as_a_tool(
        fleet,
        TOOLS[agent] | {"CAFLEET_DEMO_LOG": str(log)},
        "member", "create", "--fleet-id", str(fleet.fleet_id), "--agent-id", str(fleet.director),
        "--name", "worker", "--description", "worker", *fleet.custom_options(DEMO_AGENT),
        "--text", "You are a demo member.",
    )  # fmt: skip
    assert created.code == 0, created
    member_id = int(created.stdout.split()[0])

    env = parse_env(exec_to_file(fleet, member_id, "env", fleet.tmp / "member.env"))

    # each variable the agent set is back as the user had it (PAGER, GIT_EDITOR), or gone
    started = users(fleet)
    assert {k: env.get(k) for k in TOOLS[agent]} == {k: started.get(k) for k in TOOLS[agent]}
    assert env["USER_ONLY"] == "kept"

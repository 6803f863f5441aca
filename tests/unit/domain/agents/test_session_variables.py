"""What each agent sets for its own tools, and what a member spawned from one of its tools
gets instead: the value the user started the agent with, or nothing.

The tool environments below were measured with the pinned versions (each agent's shell tool
ran `env`, started from USER_ENV in a tmux pane); tests/realagents measures them again."""

from __future__ import annotations

import pytest

from cafleet.domain.agents.profile import SessionVariables
from cafleet.domain.agents.registry import PROFILES, agent_sessions
from cafleet.domain.placement import CodingAgent

CLAUDE, CODEX, OPENCODE = (PROFILES[a].session for a in list(CodingAgent)[:3])

USER_ENV = {
    "HOME": "/home/me",
    "PATH": "/home/me/.local/bin:/usr/bin:/bin",
    "LANG": "C.UTF-8",
    "LC_ALL": "POSIX",
    "LC_CTYPE": "POSIX",
    "PAGER": "less",
    "GIT_PAGER": "less -R",
    "GH_PAGER": "less",
    "COLORTERM": "truecolor",
    "EDITOR": "vi",
    "TERM": "tmux-256color",
    "SHELL": "/bin/bash",
    "CODEX_HOME": "/home/me/.codex",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",  # the user's own setting
    "OPENCODE_DISABLE_AUTOUPDATE": "1",
}
# what each agent's shell tool saw on top of USER_ENV (Claude Code 2.1.332, Codex 0.171.0
# from its npm wrapper in the workspace-write sandbox, OpenCode 1.18.33)
ADDED = {
    CodingAgent.CLAUDE: {
        "AI_AGENT": "claude-code_2-1-332_agent",
        "CLAUDECODE": "1",
        "CLAUDE_CODE_CHILD_NOTES_DIR": "/tmp/claude-0/-work/3125912a/sta",
        "CLAUDE_CODE_CHILD_SESSION": "1",
        "CLAUDE_CODE_ENTRYPOINT": "cli",
        "CLAUDE_CODE_EXECPATH": "/opt/claude-code/bin/claude.exe",
        "CLAUDE_CODE_MESSAGING_SOCKET": "/tmp/cc-socks/11599.sock",
        "CLAUDE_CODE_MESSAGING_TOKEN": "c000750e7070f126ee3ef953da5a9909",
        "CLAUDE_CODE_SESSION_ATTENDED": "1",
        "CLAUDE_CODE_SESSION_ID": "3125912a-26dc-48da-8629-7b86a15412ee",
        "CLAUDE_EFFORT": "medium",
        "CLAUDE_PID": "11599",
        "COREPACK_ENABLE_AUTO_PIN": "0",
        "GIT_EDITOR": "true",
        "NoDefaultCurrentDirectoryInExePath": "1",
    },
    CodingAgent.CODEX: {
        "CODEX_APPLY_PATCH_PRESERVE_LINE_ENDINGS": "1",
        "CODEX_CI": "1",
        "CODEX_MANAGED_BY_NPM": "1",
        "CODEX_MANAGED_PACKAGE_ROOT": "/opt/npm/node_modules/@openai/codex",
        "CODEX_SANDBOX_NETWORK_DISABLED": "1",
        "CODEX_SESSION_ID": "01a251ea-4ff2-7da2-b5c2-a8885b6ca0bf",
        "CODEX_THREAD_ID": "01a251ea-4ff2-7da2-b5c2-a8885b6ca0bf",
        "CODEX_TOOL_CALL_ID": "call_000003",
        "CODEX_VERSION": "0.171.0",
        "COLORTERM": "",
        "GH_PAGER": "cat",
        "GIT_PAGER": "cat",
        "LC_ALL": "C.UTF-8",
        "LC_CTYPE": "C.UTF-8",
        "NO_COLOR": "1",
        "PAGER": "cat",
        "PATH": "/opt/npm/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/"
        "codex-path:/home/me/.local/bin:/usr/bin:/bin",
        "TERM": "dumb",
    },
    CodingAgent.OPENCODE: {
        "AGENT": "1",
        "OPENCODE": "1",
        "OPENCODE_PID": "25449",
        "npm_config_user_agent": "npm/undefined node/v24.3.0 linux x64 workspaces/false",
    },
}
# what the agent's own process was started with: the npm wrapper runs before Codex
STARTED = {
    CodingAgent.CLAUDE: USER_ENV,
    CodingAgent.CODEX: USER_ENV
    | {k: v for k, v in ADDED[CodingAgent.CODEX].items() if k.startswith("CODEX_MANAGED_")},
    CodingAgent.OPENCODE: USER_ENV,
}
AGENTS = [CodingAgent.CLAUDE, CodingAgent.CODEX, CodingAgent.OPENCODE]


def tool_env(agent: CodingAgent) -> dict[str, str]:
    return USER_ENV | ADDED[agent]


@pytest.mark.parametrize("agent", AGENTS)
def test_a_tool_environment_is_recognised_as_its_agents(agent: CodingAgent) -> None:
    assert agent_sessions(tool_env(agent)) == (PROFILES[agent].session,)
    assert agent_sessions(USER_ENV) == ()


@pytest.mark.parametrize("agent", AGENTS)
def test_the_user_gets_back_exactly_what_they_started_the_agent_with(agent: CodingAgent) -> None:
    session = PROFILES[agent].session

    assert session.handed_on(tool_env(agent), STARTED[agent]) == USER_ENV


@pytest.mark.parametrize("agent", AGENTS)
def test_an_agent_started_without_them_leaves_none_of_its_variables(agent: CodingAgent) -> None:
    """PAGER, LC_ALL, NO_COLOR... the user never exported are dropped, not kept as the
    agent set them for its tools."""
    bare = {"HOME": "/home/me", "PATH": "/usr/bin:/bin"}
    tool = bare | {name: value for name, value in ADDED[agent].items() if name != "PATH"}

    handed = PROFILES[agent].session.handed_on(tool, bare)

    assert handed == bare


@pytest.mark.parametrize("agent", AGENTS)
def test_where_the_start_is_unknown_every_variable_of_the_agent_is_dropped(
    agent: CodingAgent,
) -> None:
    session = PROFILES[agent].session

    handed = session.handed_on(tool_env(agent), None)

    assert not any(session.owns(name) for name in handed)
    assert handed["PATH"] == USER_ENV["PATH"]  # the agent's own entries removed, no more
    assert {k: v for k, v in USER_ENV.items() if not session.owns(k)}.items() <= handed.items()


def test_a_variable_the_user_exported_in_the_agents_family_is_kept() -> None:
    started = USER_ENV | {"CLAUDE_CODE_SESSION_NAME": "my-own", "CLAUDE_EFFORT": "high"}
    tool = tool_env(CodingAgent.CLAUDE) | {"CLAUDE_CODE_SESSION_NAME": "my-own"}

    handed = CLAUDE.handed_on(tool, started)

    assert handed["CLAUDE_CODE_SESSION_NAME"] == "my-own"
    assert handed["CLAUDE_EFFORT"] == "high"  # not the session's "medium"


def test_what_the_agents_launcher_set_before_it_started_is_never_handed_on() -> None:
    handed = CODEX.handed_on(tool_env(CodingAgent.CODEX), STARTED[CodingAgent.CODEX])

    assert not any(name.startswith("CODEX_MANAGED_") for name in handed)


def test_nested_agents_each_give_back_what_they_were_started_with() -> None:
    """Claude Code started from a Codex tool: its own start holds Codex's tool settings."""
    codex_tool = tool_env(CodingAgent.CODEX)
    claude_tool = codex_tool | ADDED[CodingAgent.CLAUDE]

    env = dict(claude_tool)
    for session in agent_sessions(env):
        started = codex_tool if session is CLAUDE else STARTED[CodingAgent.CODEX]
        env = session.handed_on(env, started)

    assert env == USER_ENV


def test_the_users_own_settings_of_the_same_names_family_are_not_the_agents() -> None:
    users = [
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
        "CLAUDE_CONFIG_DIR",
        "CODEX_HOME",
        "OPENCODE_DISABLE_AUTOUPDATE",
        "ANTHROPIC_API_KEY",
        "CAFLEET_DATABASE_URL",
    ]
    for name in users:
        assert not any(s.owns(name) for s in (CLAUDE, CODEX, OPENCODE)), name


def test_a_path_entry_is_removed_only_where_its_last_name_is_the_agents() -> None:
    session = SessionVariables(markers=("M",), path_entries=("codex-path",))
    path = "/opt/x/codex-path:/home/me/codex-path-tools:/opt/x/codex-path/:/usr/bin"

    assert session.handed_on({"PATH": path, "M": "1"}, None) == {
        "PATH": "/home/me/codex-path-tools:/usr/bin"
    }

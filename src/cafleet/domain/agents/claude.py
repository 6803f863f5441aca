"""Claude Code: its profile, its command line (dontAsk with the floor's rules) and its hooks,
which report its state and hand it mail."""

from __future__ import annotations

import json
import shlex
from collections.abc import Sequence

from cafleet.domain.agents.profile import (
    AgentProfile,
    ConfigHome,
    LaunchContext,
    ReadyRule,
    SessionVariables,
    model_option,
    unless_given,
)
from cafleet.domain.agents.screen import ExitQuestion
from cafleet.domain.agents.status import AgentStatus
from cafleet.domain.delivery import Channel
from cafleet.domain.placement import CodingAgent

ALLOW_CAFLEET = "Bash(cafleet:*)"
# the usual test and build runners, which run the project's own commands
TEST_RUNNERS = (
    "pytest", "python -m pytest", "python3 -m pytest", "uv run pytest", "tox",
    "python -m unittest", "python3 -m unittest", "npm test", "npm run", "pnpm test",
    "pnpm run", "yarn test", "yarn run", "make", "cargo test", "cargo build", "cargo check",
    "go test", "go build", "go vet",
)  # fmt: skip
# A Claude Code member's floor (docs/agents.md, "What a member may do by default"): under
# dontAsk whatever no rule allows is refused, never asked. A path rule for Edit covers the
# file tools and the shell's redirections alike; the file commands are those Claude Code's
# own acceptEdits mode runs, and it checks their paths against the working directory itself.
# Git reads and other read-only commands need no rule.
CLAUDE_FLOOR = (
    ALLOW_CAFLEET,
    "Edit(./**)",
    *(f"Bash({command}:*)" for command in ("mkdir", "touch", "cp", "mv", "rm", "rmdir", "sed")),
    *(f"Bash(git {verb}:*)" for verb in ("add", "commit", "mv", "rm")),
    *(f"Bash({runner}:*)" for runner in TEST_RUNNERS),
)

# Claude Code hook events recorded in a member's event file; "prompt" means the agent took a
# prompt, which is what readiness waits for.
CLAUDE_HOOK_EVENTS = {
    "SessionStart": "session",
    "UserPromptSubmit": "prompt",
    "Stop": "idle",
    "Notification": "waiting",
}
PROMPT_TAKEN = "prompt"
MAIL_HANDED = "handed"  # the waiting hook handed mail over (`handed:<task ids>`)
# events whose detail lists the previews the agent took in (`prompt:12,13`)
RECEIPT_EVENTS = (PROMPT_TAKEN, MAIL_HANDED)
WAITER_EVENTS = ("UserPromptSubmit", "Stop")
MAIL_WAIT_SECONDS = 86400  # how long a waiting Stop hook may live (Claude's hook timeout)


def claude_argv(launch: LaunchContext) -> list[str]:
    # dontAsk refuses, never asks, what no rule allows; the floor's rules add to the user's own
    # (a deny rule of theirs still wins). The user's own mode flag replaces dontAsk.
    mode = ("--dangerously-skip-permissions", "--permission-mode")
    settings = ["--settings", launch.hook_settings] if launch.hook_settings else []
    return [
        launch.binary,
        *unless_given(launch.extra_args, mode, "dontAsk"),
        "--allowedTools",
        ",".join(CLAUDE_FLOOR),
        "--name",
        launch.name,
        *settings,
        *model_option(launch.model),
        *launch.extra_args,
        "--",
        launch.prompt,
    ]


def hook_settings(
    channels: tuple[Channel, ...], record_command: Sequence[str], wait_command: Sequence[str]
) -> str:
    """Settings to hand Claude Code at launch so it reports its own state and, with the
    hook channel among `channels`, waits for mail when it stops.

    `record_command` is the argv that appends one event to the member's event file (the
    event name is added as its last argument); `wait_command` waits for mail and hands
    it over by exiting 2, which wakes the session (Claude Code's `asyncRewake`).
    """
    hooks: dict[str, list[dict[str, object]]] = {
        event: [{"hooks": [{"type": "command", "command": shlex.join([*record_command, tag])}]}]
        for event, tag in CLAUDE_HOOK_EVENTS.items()
    }
    if Channel.CLAUDE_HOOK in channels:
        waiter = {
            "type": "command",
            "command": shlex.join(wait_command),
            "asyncRewake": True,
            "timeout": MAIL_WAIT_SECONDS,
        }
        # one waits from each turn's start (so a turn begun by the hook itself has one)
        # and from each stop; a second waiter leaves at once
        for event in WAITER_EVENTS:
            hooks[event].append({"hooks": [waiter]})
    return json.dumps({"hooks": hooks}, indent=2)


PROFILE = AgentProfile(
    CodingAgent.CLAUDE,
    foreground_names=("claude",),
    submit_delay=0.05,  # Enter right after the paste was taken in every trial; verified
    ready_rules=(ReadyRule.HOOK, ReadyRule.SCREEN, ReadyRule.WAIT),
    wait_fallback_seconds=20.0,
    dialog_signs=(
        "trust this folder",
        "use this api key",
        "do you want to proceed",
        "esc to cancel",
    ),
    composer_marks=("❯",),  # the composer's row: `❯ TEXT`
    session=SessionVariables(
        markers=("CLAUDECODE",),
        names=(
            "AI_AGENT",
            "CLAUDE_CODE_ENTRYPOINT",
            "CLAUDE_CODE_EXECPATH",
            "CLAUDE_CODE_INVOKED_SKILLS",
            "CLAUDE_CODE_SSE_PORT",
            "CLAUDE_CODE_STARTER_MAY_HOLD_CONNECTOR_FILE",
            "CLAUDE_CODE_TMPDIR",
            "CLAUDE_EFFORT",
            "CLAUDE_PID",
            "TRACEPARENT",
        ),
        prefixes=("CLAUDE_CODE_SESSION_", "CLAUDE_CODE_CHILD_", "CLAUDE_CODE_MESSAGING_"),
        tool_settings=(
            "BUN_OPTIONS",
            "COREPACK_ENABLE_AUTO_PIN",
            "GIT_CONFIG_PARAMETERS",
            "GIT_EDITOR",
            "NoDefaultCurrentDirectoryInExePath",
            "SHELL",
            "TEMP",
            "TMP",
            "TMPDIR",
            "TMPPREFIX",
        ),
    ),
    notes="dontAsk with the floor's rules (cafleet, edits, tests, commits); hooks take mail",
    exit_questions=(ExitQuestion("background work is running", "exit and stop tasks"),),
    channels=(Channel.CLAUDE_HOOK,),
    hook_statuses={
        "prompt": AgentStatus.WORKING,
        "handed": AgentStatus.WORKING,  # the waiting hook woke it with mail
        "idle": AgentStatus.IDLE,
        "waiting": AgentStatus.WAITING,  # a permission prompt or a question
        "waiting:idle_prompt": AgentStatus.IDLE,  # the reminder after a minute idle
    },
    config_home=ConfigHome("CLAUDE_CONFIG_DIR", ".claude"),
    herdr_agent="claude",
    command_line=claude_argv,
    hook_config=hook_settings,
)

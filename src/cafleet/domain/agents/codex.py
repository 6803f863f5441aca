"""Codex: its profile and its command line (no daemon, no login shell, a workspace-write
sandbox that reaches the multiplexer, the database and the git directories)."""

from __future__ import annotations

from cafleet.domain.agents.profile import (
    AgentProfile,
    ConfigHome,
    LaunchContext,
    ReadyRule,
    SessionVariables,
    model_option,
    unless_given,
)
from cafleet.domain.delivery import Channel
from cafleet.domain.placement import CodingAgent


def codex_argv(launch: LaunchContext) -> list[str]:
    # --no-daemon: a shared app-server would run every member's tools with the environment of
    # whichever member started it, and outlive them all. allow_login_shell=false keeps the
    # member's PATH (a login shell resets it). The sandbox must reach the multiplexer's Unix
    # socket (network_access) and write the database's directory, the runtime directory
    # (send locks, launch pads, mailboxes; `$XDG_RUNTIME_DIR` is not among Codex's own) and
    # the repository's git directories, which workspace-write keeps read-only (else no
    # `git commit`). The user's own approval or sandbox flag replaces CAFleet's (codex
    # refuses a flag twice).
    added = dict.fromkeys(
        path for path in (launch.database_dir, launch.runtime_dir, *launch.git_dirs) if path
    )
    writable = [word for path in added for word in ("--add-dir", path)]
    return [
        launch.binary,
        "--no-daemon",
        *unless_given(launch.extra_args, ("-a", "--ask-for-approval"), "never"),
        *unless_given(launch.extra_args, ("-s", "--sandbox"), "workspace-write"),
        "-c",
        "allow_login_shell=false",
        "-c",
        "sandbox_workspace_write.network_access=true",
        *writable,
        *model_option(launch.model),
        *launch.extra_args,
        "--",
        launch.prompt,
    ]


PROFILE = AgentProfile(
    CodingAgent.CODEX,
    foreground_names=("codex", "node"),  # `codex` on PATH is a node wrapper
    submit_delay=0.05,  # as for claude: the composer is checked after Enter
    ready_rules=(ReadyRule.SCREEN, ReadyRule.WAIT),
    wait_fallback_seconds=20.0,
    script_names=("codex.js",),  # the package's script, run by node directly
    dialog_signs=(
        "trust this folder",
        "sign in with chatgpt",
        "hooks need review",
        "incompatible feature settings",
        "press enter to confirm or esc to cancel",  # a command, edit or permission approval
    ),
    composer_marks=("›",),  # `› TEXT`, or its placeholder `› Ask Codex to do anything`
    session=SessionVariables(
        markers=("CODEX_THREAD_ID", "CODEX_SESSION_ID"),
        names=(
            "CODEX_APPLY_PATCH_PRESERVE_LINE_ENDINGS",
            "CODEX_CI",
            "CODEX_TOOL_CALL_ID",
            "CODEX_VERSION",
        ),
        prefixes=("CODEX_SANDBOX",),
        tool_settings=(
            "COLORTERM",
            "GH_PAGER",
            "GIT_PAGER",
            "LC_ALL",
            "LC_CTYPE",
            "NO_COLOR",
            "PAGER",
            "TERM",
        ),
        launcher_prefixes=("CODEX_MANAGED_",),  # its npm wrapper's
        path_entries=("codex-path",),  # its helper programs, first on the tools' PATH
    ),
    notes="no daemon, no login shell; workspace-write that reaches tmux, the db and .git",
    channels=(Channel.CODEX_QUEUE,),
    config_home=ConfigHome("CODEX_HOME", ".codex"),
    dialogs_tell_waiting=True,
    herdr_agent="codex",
    command_line=codex_argv,
)

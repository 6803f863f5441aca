"""OpenCode: its profile, its command line (CAFleet's agent preset, its own HTTP server) and
what that server is asked."""

from __future__ import annotations

from cafleet.domain.agents.profile import (
    AgentProfile,
    ConfigHome,
    LaunchContext,
    ReadyRule,
    SessionVariables,
    model_option,
)
from cafleet.domain.agents.screen import ComposerBox
from cafleet.domain.agents.server import HttpFacts
from cafleet.domain.delivery import Channel
from cafleet.domain.placement import CodingAgent

OPENCODE_AGENT = "cafleet"  # the preset `cafleet setup skill --agent opencode` writes


def opencode_argv(launch: LaunchContext) -> list[str]:
    # opencode's --prompt takes the next word whole, so no `--` is needed; --port opens its
    # HTTP server (password-protected through the member's environment) on loopback
    port = [] if launch.http_port is None else ["--port", str(launch.http_port)]
    return [
        launch.binary,
        "--agent",
        OPENCODE_AGENT,
        *port,
        *model_option(launch.model),
        *launch.extra_args,
        "--prompt",
        launch.prompt,
    ]


PROFILE = AgentProfile(
    CodingAgent.OPENCODE,
    foreground_names=("opencode", "node", "bun"),
    # a margin over the 0 s that worked in every idle trial; checked after Enter, as
    # under load in a busy turn the pinned opencode once left a text in its composer
    submit_delay=0.1,
    composer_box=ComposerBox("┃", "╹"),  # `┃ TEXT` rows over `╹▀▀▀`
    # not SCREEN: opencode shows the spawn prompt in its composer before it takes it
    ready_rules=(ReadyRule.HTTP, ReadyRule.WAIT),
    wait_fallback_seconds=45.0,
    shell_busy_signs=("esc interrupt", "esc again to interrupt"),
    # its permission dialog: "△ Permission required" ... "Allow once  Allow always  Reject"
    dialog_signs=("permission required", "allow always"),
    session=SessionVariables(
        markers=("OPENCODE_PID",),
        names=(
            "AGENT",
            "OPENCODE",
            "OPENCODE_LOG_LEVEL",
            "OPENCODE_PRINT_LOGS",
            "OPENCODE_PURE",
        ),
        tool_settings=("npm_config_user_agent",),
    ),
    notes="the cafleet agent preset holds the permission floor; its HTTP server says busy",
    http=HttpFacts(
        "OPENCODE_SERVER_PASSWORD",
        "opencode",
        "/session/status",
        "/session/{session}/prompt_async",
        OPENCODE_AGENT,
        "/permission",
        shell_path="/session/{session}/shell",
    ),
    channels=(Channel.OPENCODE_HTTP,),
    config_home=ConfigHome("XDG_CONFIG_HOME", ".config", "opencode"),
    herdr_agent="opencode",
    command_line=opencode_argv,
)

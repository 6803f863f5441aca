"""What the product knows about panes, independent of any multiplexer."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from enum import StrEnum

from cafleet.domain.errors import NotFound

SHELL_NAMES = frozenset({
    "sh", "bash", "zsh", "fish", "dash", "ksh", "mksh", "ash", "tcsh", "csh",
    "nu", "xonsh", "elvish", "pwsh", "busybox", "login",
})  # fmt: skip


class Key(StrEnum):
    ENTER = "enter"
    ESCAPE = "escape"


class PromptAnswer(StrEnum):
    """What a multiplexer answered when asked to prompt the agent it detected in a pane
    (type the text and press Enter itself, as one step)."""

    TAKEN = "taken"  # typed, and Enter pressed by the multiplexer
    BLOCKED = "blocked"  # the agent waits at an approval or question dialog: nothing typed
    NO_AGENT = "no-agent"  # no agent detected in the pane (or no such pane): nothing typed
    NO_METHOD = "no-method"  # this server does not know the request (an older version)
    NO_PROMPT = "no-prompt"  # the multiplexer has no prompt of its own (tmux)


@dataclass(frozen=True)
class PaneInfo:
    """One pane as the multiplexer reports it: alive or dead, and what runs in front.

    `command` is empty when the multiplexer cannot tell. `agent` is the coding agent the
    multiplexer itself detected in the pane (herdr only; None when unknown).
    """

    pane_id: str
    dead: bool
    command: str
    agent: str | None = None


class PaneGone(NotFound):
    def __init__(self, pane_id: str) -> None:
        super().__init__(f"pane {pane_id} not found")
        self.pane_id = pane_id


_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")


def without_escapes(text: str) -> str:
    """Drop CSI and OSC escape sequences."""
    return _ESCAPES.sub("", text)


def strip_ansi(text: str) -> str:
    """Drop escape sequences; of each line keep what follows its last carriage return."""
    return "\n".join(line.rsplit("\r", 1)[-1] for line in without_escapes(text).split("\n"))


def is_shell(command: str) -> bool:
    return os.path.basename(command).lstrip("-") in SHELL_NAMES


def agent_check(
    info: PaneInfo | None, accepted: tuple[str, ...], coding_agent: str | None = None
) -> str | None:
    """None when the pane may be typed into, else the skip reason (§7.3 tests A and B).

    A multiplexer that detected `coding_agent` itself (herdr) passes the pane; otherwise the
    foreground command decides, and an unknown one gives `agent-not-detected`.
    """
    if info is None or info.dead:
        return "pane-gone"
    if coding_agent and info.agent and info.agent.lower() == coding_agent.lower():
        return None
    command = os.path.basename(info.command).lstrip("-")
    if not command:
        return "agent-not-detected"
    if is_shell(command) or (accepted and command not in accepted):
        return f"not-agent:{command}"
    return None

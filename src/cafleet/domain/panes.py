"""What the product knows about panes, independent of any multiplexer."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from cafleet.domain.errors import NotFound, Unavailable

SHELL_NAMES = frozenset({
    "sh", "bash", "zsh", "fish", "dash", "ksh", "mksh", "ash", "tcsh", "csh",
    "nu", "xonsh", "elvish", "pwsh", "busybox", "login",
})  # fmt: skip
# Programs that run whatever script they are given (a REPL without one): in front of a pane
# they say nothing about which program runs, so their command line must show the agent's.
RUNTIME_NAMES = frozenset({
    "node", "nodejs", "bun", "deno", "python", "python2", "python3", "pypy", "pypy3",
    "ruby", "perl", "php", "lua", "luajit", "java", "tclsh", "osascript",
})  # fmt: skip
_VERSIONED_RUNTIME = re.compile(r"(?:python|pypy|ruby|perl|php|lua)[0-9][0-9.]*")
# runtime options whose next word (or the rest) is code, not a script: a REPL or a one-liner
_CODE_OPTIONS = frozenset({"-e", "--eval", "-p", "--print", "-i", "--interactive", "-c", "-"})
_SUBCOMMANDS = frozenset({"run"})  # `bun run x`, `deno run x`


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
    multiplexer itself detected in the pane (herdr only; None when unknown). `argv` is the
    command line of the foreground process, None when it could not be read. `identity` is
    what tells this pane from a later one given the same id (see `ours`); None when the
    report cannot tell (herdr's listing). `title` is the title CAFleet gave the pane (tmux's
    `@cafleet-title`, herdr's label), None when it has none or the report does not say.
    """

    pane_id: str
    dead: bool
    command: str
    agent: str | None = None
    argv: tuple[str, ...] | None = None
    identity: str | None = None
    title: str | None = None


class PaneGone(NotFound):
    def __init__(self, pane_id: str) -> None:
        super().__init__(f"pane {pane_id} not found")
        self.pane_id = pane_id


class ServerGone(Unavailable):
    """The multiplexer server that had the pane is not running (no socket, or nobody listens
    at it): the pane went with it. A server that is slow or refuses this process is not."""


class PaneElsewhere(Unavailable):
    """A pane recorded on another machine: its pane id means nothing on this one."""

    def __init__(self, host: str, here: str) -> None:
        super().__init__(
            f"the pane is on host {host!r}, not this one ({here!r}); run the command there"
        )
        self.host = host


def ours(info: PaneInfo | None, identity: str | None) -> PaneInfo | None:
    """The pane as reported, or None when it is not the pane recorded with `identity`.

    A multiplexer server that restarted hands the old ids (`%1`, `%2`...) to unrelated panes;
    such a pane is as good as gone and must never be typed into, read or closed. Without a
    recorded identity (a placement from before identities were kept) or a reported one (a
    listing that cannot tell), the pane is taken as reported.
    """
    if info is None or identity is None or info.identity is None:
        return info
    return info if info.identity == identity else None


_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")


def without_escapes(text: str) -> str:
    """Drop CSI and OSC escape sequences."""
    return _ESCAPES.sub("", text)


def strip_ansi(text: str) -> str:
    """Drop escape sequences; of each line keep what follows its last carriage return."""
    return "\n".join(line.rsplit("\r", 1)[-1] for line in without_escapes(text).split("\n"))


def is_shell(command: str) -> bool:
    return os.path.basename(command).lstrip("-") in SHELL_NAMES


def is_runtime(command: str) -> bool:
    name = os.path.basename(command).lstrip("-")
    return name in RUNTIME_NAMES or _VERSIONED_RUNTIME.fullmatch(name) is not None


def runtime_script(argv: Sequence[str]) -> str | None:
    """What a runtime's command line runs: its script's base name (python's `-m` module);
    None for a REPL or inline code."""
    words = list(argv[1:])
    while words:
        word = words.pop(0)
        if word == "-m":
            return words[0] if words else None
        if word in _CODE_OPTIONS or word.startswith(("--eval=", "--print=")):
            return None
        if word == "--":
            return os.path.basename(words[0]) if words else None
        if not word.startswith("-") and word not in _SUBCOMMANDS:
            return os.path.basename(word)
    return None


def runs_agent(argv: Sequence[str] | None, programs: Sequence[str]) -> bool:
    """Whether a runtime's command line runs one of `programs` (script base names or
    modules); runtime names themselves never count."""
    script = runtime_script(argv) if argv else None
    return script is not None and not is_runtime(script) and script in programs


def agent_check(
    info: PaneInfo | None,
    accepted: tuple[str, ...],
    coding_agent: str | None = None,
    scripts: tuple[str, ...] = (),
) -> str | None:
    """None when the pane may be typed into, else the skip reason: no shell, the agent in front.

    A multiplexer that detected `coding_agent` itself (herdr) passes the pane; otherwise the
    foreground command decides, and an unknown one gives `agent-not-detected`. A runtime in
    front (node, python...) passes only when its command line runs one of the accepted
    programs or `scripts`: a bare REPL would run the text as code.
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
    if is_runtime(command) and not runs_agent(info.argv, (*accepted, *scripts)):
        return f"not-agent:{command}"
    return None

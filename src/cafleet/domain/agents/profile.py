"""What CAFleet knows about a coding agent, as one profile: the types.

A profile says how to start the agent as a member (argv, the permission set-up that lets it
run `cafleet` and no more than its mode allows), which foreground command names mean "the
agent is running", how to tell that it has taken its first prompt, which screens are dialogs
that typed text must never answer, the variables it sets for its own tools (a member gets
the user's own values instead), how long to wait between a paste and Enter, and how it
exits (with the question it may ask first, which the exit confirms).

Each agent's own profile, argv and hook events are in its module (claude.py, codex.py,
opencode.py, custom.py); registry.py holds them all. Pure data and small functions: writing
hook files, reading screens and waiting happen in adapters and services. The facts behind
each value, measured with the versions in docs/agents.md, are in that page.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime
from enum import StrEnum

from cafleet.domain.agents.screen import (
    COMPOSER_MARK_LENGTH,
    DIALOG_ROWS,
    TYPING_DIALOG_ROWS,
    ComposerBox,
    ExitQuestion,
    composer_row,
    letters_and_digits,
    sign_at_bottom,
)
from cafleet.domain.agents.server import HttpFacts
from cafleet.domain.agents.status import AgentStatus, HookEvent, StatusReport
from cafleet.domain.delivery import Channel
from cafleet.domain.placement import CodingAgent


class ReadyRule(StrEnum):
    """How a member's agent was seen ready for text, most trustworthy first."""

    HOOK = "hook"  # the agent's own hook reported that it took the spawn prompt
    HTTP = "http"  # the agent's own HTTP server reported a busy session (OpenCode)
    SCREEN = "screen"  # the agent runs in front and its screen shows the spawn prompt
    WAIT = "wait"  # no signal: the agent stayed in front, with no dialog, for a while


SESSION_FILE = "agent-session"  # in the launch pad: the agent's own session id, once known
TRANSCRIPT_FILE = "agent-transcript"  # in the launch pad: where the agent logs that session
SPAWN_FILE = "spawn.json"  # in the launch pad: what finds the session later (prompt, cwd)


@dataclass(frozen=True)
class LaunchContext:
    """The facts of one spawn that a profile turns into an argv."""

    binary: str  # absolute path of the agent's program
    name: str
    prompt: str
    model: str | None = None
    http_port: int | None = None  # the agent's own server, where the profile has one
    database_dir: str | None = None  # must stay writable from the agent's tool sandbox
    runtime_dir: str | None = None  # CAFleet's runtime directory: the same
    # the working directory's git directories, which a sandbox keeps read-only unless told
    git_dirs: tuple[str, ...] = ()
    hook_settings: str | None = None  # a file the profile's hook settings were written to
    extra_args: tuple[str, ...] = ()  # the user's own flags (CAFLEET_AGENT_ARGS_<AGENT>)


@dataclass(frozen=True)
class ConfigHome:
    """Where the agent keeps its configuration (and so its skills): `$variable/subdir`, or
    `~/default/subdir` when the variable is unset, empty or relative."""

    variable: str
    default: str  # relative to the user's home
    subdir: str = ""


@dataclass(frozen=True)
class SessionVariables:
    """What the agent puts into the environment of its own tools, measured with the pinned
    version (its shell tool's `env` against the environment the agent was started with).

    A member must not inherit any of it from a Director (or relay) run under the agent: the
    session's own variables (its ids, pid, sockets, markers) or the ordinary settings it
    overrides for its tools (PAGER=cat, NO_COLOR, LC_ALL). Each gets the value the agent
    itself was started with, i.e. what the user exported, or is dropped where that is unset
    or cannot be read; PATH loses only the entries the agent added.
    """

    # in every tool's environment and never in the agent's own start: a caller holding one
    # runs under the agent, and the nearest ancestor process without them is the agent
    markers: tuple[str, ...] = ()
    names: tuple[str, ...] = ()  # the session's own variables
    prefixes: tuple[str, ...] = ()  # families of them
    tool_settings: tuple[str, ...] = ()  # ordinary variables it overrides for its tools
    # set by the agent's own launcher before it starts (so its start holds them too)
    launcher_prefixes: tuple[str, ...] = ()
    path_entries: tuple[str, ...] = ()  # last names of the PATH entries it adds

    def runs(self, env: Mapping[str, str]) -> bool:
        """Whether `env` is the environment of one of the agent's tools."""
        return any(marker in env for marker in self.markers)

    def owns(self, name: str) -> bool:
        return (
            name in self.markers
            or name in self.names
            or name in self.tool_settings
            or name.startswith(self.prefixes + self.launcher_prefixes)
        )

    def handed_on(
        self, env: Mapping[str, str], started_with: Mapping[str, str] | None
    ) -> dict[str, str]:
        """`env` less this agent's variables, each back at the value in `started_with` (the
        agent's own start environment; None: unknown, so dropped)."""
        kept = {name: value for name, value in env.items() if not self.owns(name)}
        if started_with is not None:
            kept |= {
                name: value
                for name, value in started_with.items()
                if self.owns(name) and not name.startswith(self.launcher_prefixes)
            }
        if "PATH" in kept:
            entries = kept["PATH"].split(":")
            own = [e for e in entries if e.rstrip("/").rpartition("/")[2] in self.path_entries]
            kept["PATH"] = ":".join(e for e in entries if e not in own)
        return kept


# What the pane's multiplexer offers whatever agent runs there (herdr's own prompt): not a
# fact of any agent, so no profile lists it; each is tried only on its multiplexer's panes.
PANE_CHANNELS: tuple[Channel, ...] = (Channel.HERDR_PROMPT,)


@dataclass(frozen=True)
class AgentProfile:
    coding_agent: CodingAgent
    foreground_names: tuple[str, ...]
    submit_delay: float
    ready_rules: tuple[ReadyRule, ...]
    wait_fallback_seconds: float  # after this long alive and in front, WAIT counts as ready
    # when a runtime (node...) is in front: the script names, besides the foreground names,
    # that mean it runs the agent (`node .../@openai/codex/bin/codex.js`)
    script_names: tuple[str, ...] = ()
    # the agent enables bracketed paste, so a pasted line break does not submit; without it
    # a preview is typed as one line
    bracketed_paste: bool = True
    dialog_signs: tuple[str, ...] = ()  # lower-case screen text of dialogs (a fallback check)
    # lower-case bottom-row text of a running turn, for an agent that drops a `!` shell
    # command typed then (the others queue it or run it at once)
    shell_busy_signs: tuple[str, ...] = ()
    # the pause before Enter after a typed `!` command: its first key switches the composer to
    # shell mode, and the pinned Codex dropped an Enter that followed 0.05 s later
    shell_submit_delay: float = 0.3
    # what starts the composer's row (after any border), so a text still waiting there after
    # Enter can be told from the same text submitted above it; empty: cannot tell
    composer_marks: tuple[str, ...] = ()
    # or the box the composer is drawn in, for an agent whose transcript uses the same border
    composer_box: ComposerBox | None = None
    session: SessionVariables = SessionVariables()  # what it sets for its tools
    extra_args: tuple[str, ...] = ()
    exit_text: str = "/exit"
    # what the agent may ask before it exits; the exit was asked for, so it is confirmed
    exit_questions: tuple[ExitQuestion, ...] = ()
    notes: str = ""  # one line for `cafleet doctor`
    http: HttpFacts | None = None  # the agent's own HTTP server, where it has one
    # how a message reaches the agent without keystrokes, tried in order before `keys`
    channels: tuple[Channel, ...] = ()
    # the multiplexer's own ways in, tried after the agent's and before `keys`
    pane_channels: tuple[Channel, ...] = PANE_CHANNELS
    # what each hook event (`kind` or `kind:detail`) says the agent is doing
    hook_statuses: Mapping[str, AgentStatus] = field(default_factory=dict)
    config_home: ConfigHome | None = None  # None: the agent has no skills home
    # the agent tells nobody that it asks a person (its turn just stays open), so a dialog
    # on screen during a turn is what says `waiting`
    dialogs_tell_waiting: bool = False
    # the name herdr detects this agent by, handed to a member on herdr as HERDR_AGENT so
    # herdr knows it behind CAFleet's launcher too
    herdr_agent: str | None = None
    # the member's command line for one spawn; None: a custom agent's comes from its
    # command template
    command_line: Callable[[LaunchContext], list[str]] | None = None
    # the settings that make the agent's hooks report its state and, with its hook channel,
    # wait for mail: from the channels in use, the record command and the wait command
    hook_config: Callable[[tuple[Channel, ...], Sequence[str], Sequence[str]], str] | None = None

    @property
    def uses_hooks(self) -> bool:
        return ReadyRule.HOOK in self.ready_rules or Channel.CLAUDE_HOOK in self.channels

    @property
    def server(self) -> HttpFacts | None:
        """The agent's own HTTP server, when a readiness rule or a channel asks it (else
        not opened)."""
        wanted = ReadyRule.HTTP in self.ready_rules or Channel.OPENCODE_HTTP in self.channels
        return self.http if wanted else None

    @property
    def ladder(self) -> tuple[Channel, ...]:
        """Every channel a message tries, in order: the agent's, the multiplexer's, keys."""
        return (*self.channels, *self.pane_channels, Channel.KEYS)

    @property
    def possible_rules(self) -> tuple[ReadyRule, ...]:
        """The rules this agent can satisfy: its own signal (if any), screen and wait."""
        own = [ReadyRule.HOOK] if self.coding_agent is CodingAgent.CLAUDE else []
        own += [ReadyRule.HTTP] if self.http is not None else []
        return (*own, ReadyRule.SCREEN, ReadyRule.WAIT)

    @property
    def signal_rule(self) -> ReadyRule | None:
        """The rule by which the agent itself says it took a prompt, if it has one."""
        return next((r for r in self.ready_rules if r in (ReadyRule.HOOK, ReadyRule.HTTP)), None)

    def argv(self, launch: LaunchContext) -> list[str]:
        """The member's command line; the prompt always comes last, after `--` where the
        CLI takes it, so a prompt starting with `-` is never read as an option."""
        if self.command_line is None:
            raise ValueError("a custom agent's argv comes from its command template")
        return self.command_line(replace(launch, extra_args=self.extra_args + launch.extra_args))

    def dialog_on(self, screen: str, ignoring: str = "", rows: int = DIALOG_ROWS) -> str | None:
        """The dialog sign found in the last `rows` non-blank rows of `screen`, if any.

        Only the bottom counts: the TUIs draw their dialogs there, while the transcript
        above may quote any text (a file the agent read, a message). A sign that `ignoring`
        (the text being typed, shown in the composer) contains is not a dialog's.
        """
        return sign_at_bottom(self.dialog_signs, screen, ignoring, rows)

    def exit_key(self, screen: str) -> str | None:
        """The key confirming the exit one of the agent's exit questions on `screen` asks
        about, if one does."""
        return next(filter(None, (q.key(screen) for q in self.exit_questions)), None)

    def pause_before_enter(self, shell: bool) -> float:
        """The submit delay for this text: a typed `!` command waits at least the longer one."""
        return max(self.submit_delay, self.shell_submit_delay) if shell else self.submit_delay

    @property
    def checks_submit(self) -> bool:
        """Whether the sender can read this agent's composer after Enter (and press again)."""
        return bool(self.composer_marks) or self.composer_box is not None

    def composer_holds(self, screen: str, text: str) -> bool:
        """Whether the composer (its box, or else the lowest row that starts with a composer
        mark among the last COMPOSER_ROWS non-blank rows) still shows the start of `text`:
        Enter was lost."""
        mark = letters_and_digits(text)[:COMPOSER_MARK_LENGTH]
        if not mark:
            return False
        if self.composer_box is not None:
            return mark in letters_and_digits(self.composer_box.text(screen))
        row = composer_row(screen, self.composer_marks)
        return row is not None and mark in letters_and_digits(row)

    def busy_for_shell(self, screen: str) -> bool:
        """Whether the screen shows a turn during which the agent drops a shell command."""
        return sign_at_bottom(self.shell_busy_signs, screen, "", TYPING_DIALOG_ROWS) is not None

    def hooks_off(self, events: Sequence[HookEvent]) -> bool:
        """Whether this agent's hooks report nothing for the member (Claude Code's
        `disableAllHooks`): it would use them, yet not one event came, not even the one
        its `SessionStart` hook records at once when it starts. Then no hook waits for mail
        and nothing records what it took in."""
        return self.uses_hooks and not events

    def status_from_events(self, events: Sequence[HookEvent]) -> StatusReport | None:
        """The status the latest telling hook event gives, or None when none tells."""
        for event in reversed(events):
            status = self.hook_statuses.get(event.name) or self.hook_statuses.get(event.kind)
            if status is not None:
                return StatusReport(status, event.at)
        return None

    def hook_settings(
        self, record_command: Sequence[str], wait_command: Sequence[str]
    ) -> str | None:
        """Settings to hand the agent at launch so it reports its own state and, with the
        hook channel, waits for mail when it stops; or None.

        `record_command` is the argv that appends one event to the member's event file (the
        event name is added as its last argument); `wait_command` waits for mail and hands
        it over by exiting 2, which wakes the session (Claude Code's `asyncRewake`).
        """
        if self.hook_config is None or not self.uses_hooks:
            return None
        return self.hook_config(self.channels, record_command, wait_command)


@dataclass(frozen=True)
class SpawnFacts:
    """What a member's pad keeps of its start, to find the agent's own session later."""

    prompt: str
    cwd: str
    home: str  # Codex's configuration home, as the member saw it ("" for OpenCode)
    binary: str
    started_at: datetime

    def text(self) -> str:
        return json.dumps({**asdict(self), "started_at": self.started_at.isoformat()})

    @staticmethod
    def parse(text: str | None) -> SpawnFacts | None:
        try:
            data = json.loads(text or "")
            data["started_at"] = datetime.fromisoformat(data["started_at"])
            return SpawnFacts(**data)
        except (ValueError, TypeError, KeyError):
            return None


def model_option(model: str | None) -> list[str]:
    return [] if model is None else ["--model", model]


def unless_given(args: Sequence[str], names: tuple[str, ...], value: str) -> list[str]:
    """`--name value` (the long name), unless `args` already set that option."""
    given = any(arg in names or arg.startswith(tuple(f"{n}=" for n in names)) for arg in args)
    return [] if given else [names[-1], value]

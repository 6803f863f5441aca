"""What CAFleet knows about each coding agent, one profile per agent.

A profile says how to start the agent as a member (argv, the permission set-up that lets it
run `cafleet` and no more than its mode allows), which foreground command names mean "the
agent is running", how to tell that it has taken its first prompt, which screens are dialogs
that typed text must never answer, the variables it sets for its own tools (a member gets
the user's own values instead), how long to wait between a paste and Enter, and how it
exits (with the question it may ask first, which the exit confirms).

Pure data and small functions: writing hook files, reading screens and waiting happen in
adapters and services. The facts behind each value, measured with the versions in
docs/agents.md, are in that page.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from enum import StrEnum
from typing import TypeVar

from cafleet.domain.agents.status import AgentStatus, HookEvent, StatusReport
from cafleet.domain.delivery import Channel
from cafleet.domain.placement import CodingAgent
from cafleet.domain.preview import previewed_tasks

T = TypeVar("T")


class ReadyRule(StrEnum):
    """How a member's agent was seen ready for text, most trustworthy first."""

    HOOK = "hook"  # the agent's own hook reported that it took the spawn prompt
    HTTP = "http"  # the agent's own HTTP server reported a busy session (OpenCode)
    SCREEN = "screen"  # the agent runs in front and its screen shows the spawn prompt
    WAIT = "wait"  # no signal: the agent stayed in front, with no dialog, for a while


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
DIALOG_ROWS = 15  # a start-up screen: the whole dialog
EXIT_QUESTION_ROWS = 40  # a question on exit, with the list it asks about
# While the agent works, a dialog ends the screen with its keys line ("Esc to cancel"), and
# the messages CAFleet typed stay above the composer: only the last rows may count.
TYPING_DIALOG_ROWS = 3
# the composer sits at the bottom, under at most a few status rows
COMPOSER_ROWS = 6
COMPOSER_MARK_LENGTH = 16  # letters and digits of a text's start: "[cafleet msg 12 from 3"
_BORDERS = " \t│┃|"

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
SESSION_FILE = "agent-session"  # in the launch pad: the agent's own session id, once known
TRANSCRIPT_FILE = "agent-transcript"  # in the launch pad: where the agent logs that session
SPAWN_FILE = "spawn.json"  # in the launch pad: what finds the session later (prompt, cwd)
SESSION_CLOCK_SLACK_SECONDS = 5.0  # a session found later started at most this much before
OPENCODE_AGENT = "cafleet"  # the preset `cafleet setup skill --agent opencode` writes
WAITER_EVENTS = ("UserPromptSubmit", "Stop")
MAIL_WAIT_SECONDS = 86400  # how long a waiting Stop hook may live (Claude's hook timeout)


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


def _session_messages(answer: str | None) -> list[tuple[str, float, str]]:
    """(role, creation time in ms, text) of each message of an opencode session listing."""
    try:
        listed = json.loads(answer) if answer else []
    except ValueError:
        return []
    facts = [_message_facts(m) for m in listed] if isinstance(listed, list) else []
    return [(role, created, text) for role, created, text in facts if created is not None]


def _message_facts(message: object) -> tuple[str, float | None, str]:
    """(role, creation time in ms, text) of one message of an opencode session listing."""
    info = message.get("info") if isinstance(message, dict) else None
    parts = message.get("parts") if isinstance(message, dict) else None
    if not isinstance(info, dict):
        return "", None, ""
    times = info.get("time")
    created = times.get("created") if isinstance(times, dict) else None
    texts = [p.get("text") for p in parts if isinstance(p, dict)] if isinstance(parts, list) else []
    text = "".join(t for t in texts if isinstance(t, str))
    number = float(created) if isinstance(created, int | float) else None
    return str(info.get("role", "")), number, text


@dataclass(frozen=True)
class ComposerBox:
    """A composer drawn as a run of rows starting with `side`, right above a row starting
    with `floor`, near the bottom of the screen (OpenCode's `┃ TEXT` rows over `╹▀▀▀`). The
    transcript's boxes use the same side but end in a blank row, so they are not counted."""

    side: str
    floor: str

    def text(self, screen: str) -> str:
        """The composer's rows (text and footer), joined; empty when no box is found."""
        rows = [row.strip() for row in screen.splitlines()]
        filled = [n for n, row in enumerate(rows) if row]
        floors = [n for n in filled[-COMPOSER_ROWS:] if rows[n].startswith(self.floor)]
        if not floors:
            return ""
        inside: list[str] = []
        for row in reversed(rows[: floors[-1]]):
            if not row.startswith(self.side):
                break
            inside.append(row.removeprefix(self.side))
        return " ".join(reversed(inside))


@dataclass(frozen=True)
class HttpFacts:
    """How to ask an agent's own HTTP server whether it took a prompt, and how to post one."""

    password_variable: str  # the agent protects its server with this variable's value
    user: str
    status_path: str  # answers a JSON object with an entry per busy session of this process
    prompt_path: str  # `{session}` is replaced; queues the prompt when the session is busy
    agent: str  # the agent preset every prompt runs under
    permission_path: str  # answers a JSON list of the permission requests awaiting a person
    # `{session}` is replaced; answers the session's newest messages, oldest first
    messages_path: str = "/session/{session}/message?limit=40"
    # answers the sessions of the server's project that no other session started
    sessions_path: str = "/session?roots=true"
    history_path: str = "/session/{session}/message"  # all its messages, oldest first
    # `{session}` is replaced; runs a shell command in the session (what the TUI's own shell
    # mode does), answering when it ends, or `busy_status` at once while a turn runs
    shell_path: str | None = None
    busy_status: int = 409

    def listed(self, answer: str | None) -> set[int]:
        """The CAFleet messages a user prompt of the session carries (queued ones too)."""
        return {
            task
            for role, _, text in _session_messages(answer)
            if role == "user"
            for task in previewed_tasks(text)
        }

    def taken(self, answer: str | None) -> dict[int, datetime]:
        """The CAFleet messages a user prompt of the session carried whose turn has begun:
        a prompt is listed at once, even while queued behind a running step, so it counts as
        taken when an answer of the model started after it. The time is that answer's."""
        prompts: list[tuple[float, list[int]]] = []
        taken: dict[int, datetime] = {}
        for role, created, text in _session_messages(answer):
            if role == "user" and (tasks := previewed_tasks(text)):
                prompts.append((created, tasks))
            elif role == "assistant":
                for task in (t for at, tasks in prompts if at <= created for t in tasks):
                    taken.setdefault(task, datetime.fromtimestamp(created / 1000, UTC))
                prompts = [(at, tasks) for at, tasks in prompts if at > created]
        return taken

    @staticmethod
    def sessions_since(answer: str | None, directory: str, since: datetime) -> tuple[str, ...]:
        """The sessions a listing shows started in `directory` at or after `since`, oldest
        first (the server lists every session of its project, other processes' too)."""
        try:
            listed = json.loads(answer) if answer else []
        except ValueError:
            return ()
        found = []
        for entry in listed if isinstance(listed, list) else []:
            info = entry if isinstance(entry, dict) else {}
            times = info.get("time")
            created = times.get("created") if isinstance(times, dict) else None
            if (
                info.get("directory") == directory
                and isinstance(info.get("id"), str)
                and isinstance(created, int | float)
                and created >= (since.timestamp() - SESSION_CLOCK_SLACK_SECONDS) * 1000
            ):
                found.append((float(created), str(info["id"])))
        return tuple(session for _, session in sorted(found))

    @staticmethod
    def begun_with(answer: str | None, prompt: str) -> bool:
        """Whether a session's history (all its messages) begins with a user message that
        carries `prompt` (its text, and whatever parts OpenCode adds to it)."""
        users = [text for role, _, text in _session_messages(answer) if role == "user"]
        return bool(users) and users[0].strip().startswith(prompt.strip())

    def prompt_taken(self, answer: str | None) -> bool:
        return bool(self.busy_sessions(answer))

    @staticmethod
    def busy_sessions(answer: str | None) -> tuple[str, ...]:
        try:
            sessions = json.loads(answer) if answer else None
        except ValueError:
            return ()
        return tuple(str(s) for s in sessions) if isinstance(sessions, dict) else ()

    def status(self, session: str, busy: str | None, asking: str | None) -> AgentStatus | None:
        """The session's status from the status and permission answers; None when the
        server did not answer."""
        if busy is None:
            return None
        try:
            requests = json.loads(asking) if asking else []
        except ValueError:
            requests = []
        if isinstance(requests, list) and requests:
            return AgentStatus.WAITING
        return AgentStatus.WORKING if session in self.busy_sessions(busy) else AgentStatus.IDLE

    def prompt(self, session: str, text: str) -> tuple[str, dict[str, object]]:
        """The path and JSON body that hand `text` to `session` as a user prompt."""
        body: dict[str, object] = {"agent": self.agent, "parts": [{"type": "text", "text": text}]}
        return self.prompt_path.format(session=session), body

    def shell(self, session: str, command: str) -> tuple[str, dict[str, object]] | None:
        """The path and JSON body that run `command` in `session`; None where the server
        has no such route."""
        if self.shell_path is None:
            return None
        return self.shell_path.format(session=session), {"agent": self.agent, "command": command}


@dataclass(frozen=True)
class ExitQuestion:
    """A question the agent asks on its exit command before it leaves, and the option that
    confirms the exit (Claude Code's "Background work is running", "1. Exit and stop tasks")."""

    title: str  # lower-case words of the dialog
    choice: str  # lower-case start of the option that exits

    def key(self, screen: str) -> str | None:
        """The key that chooses the exit: the number the screen shows before `choice`,
        while the dialog is at the bottom of the screen (it lists every background task,
        hence the larger window); else None."""
        if _sign_at_bottom((self.title,), screen, "", EXIT_QUESTION_ROWS) is None:
            return None
        rows = [row for row in screen.lower().splitlines() if row.strip()][-EXIT_QUESTION_ROWS:]
        for row in rows:
            option = _NUMBERED_OPTION.search(row)
            if option and " ".join(option.group(2).split()).startswith(self.choice):
                return option.group(1)
        return None


_NUMBERED_OPTION = re.compile(r"(\d+)\.\s+(\S.*)")


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
    def possible_channels(self) -> tuple[Channel, ...]:
        """The channels this agent can take a message through: its own, the multiplexer's,
        then keys."""
        return (*PROFILES[self.coding_agent].channels, *PANE_CHANNELS, Channel.KEYS)

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
        context = replace(launch, extra_args=self.extra_args + launch.extra_args)
        match self.coding_agent:
            case CodingAgent.CLAUDE:
                return _claude_argv(context)
            case CodingAgent.CODEX:
                return _codex_argv(context)
            case CodingAgent.OPENCODE:
                return _opencode_argv(context)
            case CodingAgent.CUSTOM:
                raise ValueError("a custom agent's argv comes from its command template")

    def dialog_on(self, screen: str, ignoring: str = "", rows: int = DIALOG_ROWS) -> str | None:
        """The dialog sign found in the last `rows` non-blank rows of `screen`, if any.

        Only the bottom counts: the TUIs draw their dialogs there, while the transcript
        above may quote any text (a file the agent read, a message). A sign that `ignoring`
        (the text being typed, shown in the composer) contains is not a dialog's.
        """
        return _sign_at_bottom(self.dialog_signs, screen, ignoring, rows)

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
        if not self.composer_marks:
            return False
        rows = [row.strip(_BORDERS) for row in screen.splitlines() if row.strip(_BORDERS)]
        for row in reversed(rows[-COMPOSER_ROWS:]):
            if row.startswith(self.composer_marks):
                return mark in letters_and_digits(row)
        return False

    def busy_for_shell(self, screen: str) -> bool:
        """Whether the screen shows a turn during which the agent drops a shell command."""
        return _sign_at_bottom(self.shell_busy_signs, screen, "", TYPING_DIALOG_ROWS) is not None

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
        if self.coding_agent is not CodingAgent.CLAUDE or not self.uses_hooks:
            return None
        hooks: dict[str, list[dict[str, object]]] = {
            event: [{"hooks": [{"type": "command", "command": shlex.join([*record_command, tag])}]}]
            for event, tag in CLAUDE_HOOK_EVENTS.items()
        }
        if Channel.CLAUDE_HOOK in self.channels:
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


def _sign_at_bottom(signs: Sequence[str], screen: str, ignoring: str, rows: int) -> str | None:
    kept = [row for row in screen.lower().splitlines() if row.strip()]
    bottom = " ".join(" ".join(kept[-rows:]).split())
    own = " ".join(ignoring.lower().split())
    return next((sign for sign in signs if sign in bottom and sign not in own), None)


def _model_option(model: str | None) -> list[str]:
    return [] if model is None else ["--model", model]


def _claude_argv(launch: LaunchContext) -> list[str]:
    # dontAsk refuses, never asks, what no rule allows; the floor's rules add to the user's own
    # (a deny rule of theirs still wins). The user's own mode flag replaces dontAsk.
    mode = ("--dangerously-skip-permissions", "--permission-mode")
    settings = ["--settings", launch.hook_settings] if launch.hook_settings else []
    return [
        launch.binary,
        *_unless_given(launch.extra_args, mode, "dontAsk"),
        "--allowedTools",
        ",".join(CLAUDE_FLOOR),
        "--name",
        launch.name,
        *settings,
        *_model_option(launch.model),
        *launch.extra_args,
        "--",
        launch.prompt,
    ]


def _codex_argv(launch: LaunchContext) -> list[str]:
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
        *_unless_given(launch.extra_args, ("-a", "--ask-for-approval"), "never"),
        *_unless_given(launch.extra_args, ("-s", "--sandbox"), "workspace-write"),
        "-c",
        "allow_login_shell=false",
        "-c",
        "sandbox_workspace_write.network_access=true",
        *writable,
        *_model_option(launch.model),
        *launch.extra_args,
        "--",
        launch.prompt,
    ]


def _unless_given(args: Sequence[str], names: tuple[str, ...], value: str) -> list[str]:
    """`--name value` (the long name), unless `args` already set that option."""
    given = any(arg in names or arg.startswith(tuple(f"{n}=" for n in names)) for arg in args)
    return [] if given else [names[-1], value]


def _opencode_argv(launch: LaunchContext) -> list[str]:
    # opencode's --prompt takes the next word whole, so no `--` is needed; --port opens its
    # HTTP server (password-protected through the member's environment) on loopback
    port = [] if launch.http_port is None else ["--port", str(launch.http_port)]
    return [
        launch.binary,
        "--agent",
        OPENCODE_AGENT,
        *port,
        *_model_option(launch.model),
        *launch.extra_args,
        "--prompt",
        launch.prompt,
    ]


PROFILES: Mapping[CodingAgent, AgentProfile] = {
    CodingAgent.CLAUDE: AgentProfile(
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
    ),
    CodingAgent.CODEX: AgentProfile(
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
    ),
    CodingAgent.OPENCODE: AgentProfile(
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
    ),
    CodingAgent.CUSTOM: AgentProfile(
        CodingAgent.CUSTOM,
        foreground_names=(),  # computed at spawn from the command's program and shebang
        submit_delay=0.2,
        ready_rules=(ReadyRule.WAIT,),
        wait_fallback_seconds=0.5,
        bracketed_paste=False,  # unknown: a preview goes as one line
        notes="any terminal program; ready once it has stayed in front for a moment",
    ),
}


def agent_sessions(env: Mapping[str, str]) -> tuple[SessionVariables, ...]:
    """The sessions of the agents whose tool `env` is (one, or nested ones)."""
    return tuple(p.session for p in PROFILES.values() if p.session.runs(env))


# --- the spawn prompt on screen ------------------------------------------------------------

_NOT_ALNUM = re.compile(r"[\W_]+")
PROMPT_MARK_LENGTH = 24


def letters_and_digits(text: str) -> str:
    """`text` as screen matching compares it: lower case, letters and digits only. TUIs
    wrap lines, draw borders and render Markdown (`- x` becomes `• x`), but keep the words."""
    return _NOT_ALNUM.sub("", text.lower())


def prompt_mark(prompt: str) -> str:
    """What of the spawn prompt must show on screen for the SCREEN rule."""
    return letters_and_digits(prompt)[:PROMPT_MARK_LENGTH]


def screen_shows(screen: str, mark: str) -> bool:
    return bool(mark) and mark in letters_and_digits(screen)


@dataclass(frozen=True)
class ProfileOverrides:
    """The user's settings for one agent; None keeps the profile's value."""

    submit_delay: float | None = None
    foreground_names: tuple[str, ...] | None = None
    extra_args: tuple[str, ...] = ()
    ready_rules: tuple[ReadyRule, ...] | None = None
    # the agent's own and the multiplexer's, in any order; keys always comes last
    channels: tuple[Channel, ...] | None = None


@dataclass(frozen=True)
class AgentProfiles:
    """The profiles with the user's overrides applied."""

    profiles: Mapping[CodingAgent, AgentProfile] = field(default_factory=lambda: dict(PROFILES))

    @staticmethod
    def resolved(overrides: Mapping[CodingAgent, ProfileOverrides]) -> AgentProfiles:
        resolved = {}
        for agent, profile in PROFILES.items():
            change = overrides.get(agent, ProfileOverrides())
            resolved[agent] = replace(
                profile,
                submit_delay=_pick(change.submit_delay, profile.submit_delay),
                foreground_names=_pick(change.foreground_names, profile.foreground_names),
                extra_args=change.extra_args,
                ready_rules=_pick(change.ready_rules, profile.ready_rules),
                channels=_pick(_listed(change.channels, pane=False), profile.channels),
                pane_channels=_pick(_listed(change.channels, pane=True), profile.pane_channels),
            )
        return AgentProfiles(resolved)

    def __getitem__(self, agent: CodingAgent) -> AgentProfile:
        return self.profiles[agent]


def _listed(channels: tuple[Channel, ...] | None, *, pane: bool) -> tuple[Channel, ...] | None:
    """Of the channels a user listed, the multiplexer's (`pane`) or the agent's own."""
    if channels is None:
        return None
    return tuple(c for c in channels if (c in PANE_CHANNELS) is pane)


def _pick(value: T | None, default: T) -> T:
    return default if value is None else value

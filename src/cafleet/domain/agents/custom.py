"""A custom agent: any terminal program, started from the user's `--agent-command` template.

Also the `{name}` placeholders that template and every spawn prompt share, and the names a
custom member's pane may show in front. Pure: resolving the program on PATH and reading a
script's first line happen in adapters.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from cafleet.domain.agents.profile import AgentProfile, ReadyRule
from cafleet.domain.errors import Invalid, UsageProblem
from cafleet.domain.panes import is_runtime, runtime_script
from cafleet.domain.placement import CodingAgent

PROMPT_PLACEHOLDERS = ("fleet_id", "agent_id", "director_agent_id", "coding_agent")
COMMAND_PLACEHOLDERS = ("prompt", "name", "model", *PROMPT_PLACEHOLDERS)

# Every agent takes its spawn prompt as one argv word, and Linux caps one word at 128 KiB
# (MAX_ARG_STRLEN); the margin leaves room for the placeholders and a template's own words.
MAX_PROMPT_BYTES = 120 * 1024
_BRACE_HINT = "Double literal braces ({{, }}) to keep them as text."
_TOKEN = re.compile(r"\{\{|\}\}|\{([^{}]*)\}|[{}]")


# --- placeholder syntax shared by spawn prompts and custom command templates ---------------


@dataclass(frozen=True)
class Placeholder:
    """A `{name}` field; the name is everything between the braces, taken literally."""

    name: str


Segment = str | Placeholder


class _StrayBrace(Exception):
    """A single `{` or `}` that is neither doubled nor part of a `{name}` field."""

    def __init__(self, brace: str) -> None:
        super().__init__(brace)
        self.brace = brace


def _segments(text: str) -> tuple[Segment, ...]:
    """Split text into literal runs and placeholders.

    Plain substitution, not str.format: there is no attribute access, indexing, conversion or
    format spec, so `{fleet_id.real}` or `{0}` are just names that are not supported.
    """
    parts: list[Segment] = []
    literal: list[str] = []
    position = 0
    for match in _TOKEN.finditer(text):
        literal.append(text[position : match.start()])
        position = match.end()
        token = match.group()
        if token in ("{{", "}}"):
            literal.append(token[0])
        elif match.group(1) is not None:
            _flush(literal, parts)
            parts.append(Placeholder(match.group(1)))
        else:
            raise _StrayBrace(token)
    literal.append(text[position:])
    _flush(literal, parts)
    return tuple(parts)


def _flush(literal: list[str], parts: list[Segment]) -> None:
    text = "".join(literal)
    literal.clear()
    if text:
        parts.append(text)


def _fill(segments: Iterable[Segment], values: Mapping[str, str]) -> str:
    return "".join(s if isinstance(s, str) else values[s.name] for s in segments)


def _supported(names: Iterable[str]) -> str:
    return ", ".join("{" + name + "}" for name in names)


# --- spawn prompt ------------------------------------------------------------------------------


def check_prompt(template: str) -> None:
    """Reject a spawn prompt that cannot be rendered or passed, before anything is registered."""
    size = len(template.encode("utf-8", errors="surrogatepass"))
    if size > MAX_PROMPT_BYTES:
        raise Invalid(
            f"spawn prompt is {size} bytes; the limit is {MAX_PROMPT_BYTES} bytes (the agent"
            " takes it as one command-line argument); put the long part in a file and name"
            " the file in the prompt"
        )
    _prompt_segments(template)


def render_prompt(template: str, values: Mapping[str, str]) -> str:
    """Substitute the identity placeholders; `values` must map every name in PROMPT_PLACEHOLDERS."""
    return _fill(_prompt_segments(template), values)


def _prompt_segments(template: str) -> tuple[Segment, ...]:
    try:
        segments = _segments(template)
    except _StrayBrace as stray:
        raise UsageProblem(
            f"Malformed custom prompt: Single '{stray.brace}' encountered in format string."
            f" {_BRACE_HINT}"
        ) from None
    for segment in segments:
        if isinstance(segment, Placeholder) and segment.name not in PROMPT_PLACEHOLDERS:
            raise UsageProblem(
                f"Unknown placeholder '{segment.name}' in custom prompt."
                f" Supported placeholders: {_supported(PROMPT_PLACEHOLDERS)}. {_BRACE_HINT}"
            )
    return segments


@dataclass(frozen=True)
class SpawnIdentity:
    """The ids a new member learns through placeholders; known only after registration."""

    fleet_id: int
    agent_id: int
    director_agent_id: int

    def placeholders(self, coding_agent: CodingAgent) -> dict[str, str]:
        """Values for every name in PROMPT_PLACEHOLDERS."""
        return {
            "fleet_id": str(self.fleet_id),
            "agent_id": str(self.agent_id),
            "director_agent_id": str(self.director_agent_id),
            "coding_agent": coding_agent.value,
        }


# --- custom backend command template ---------------------------------------------------------


def _invalid_command(reason: str) -> UsageProblem:
    return UsageProblem(f"--agent-command is not a valid command line: {reason}.")


Word = tuple[Segment, ...]


@dataclass(frozen=True)
class CustomCommand:
    """A parsed `--agent-command` template: a program and argument words with placeholders.

    Parsed once at validation time so that every error surfaces before registration; the
    placeholders are filled in only when the member's ids exist.
    """

    template: str
    program: str  # the first word, resolved on PATH; never holds a placeholder
    arguments: tuple[Word, ...]

    @staticmethod
    def parse(template: str) -> CustomCommand:
        try:
            texts = shlex.split(template, posix=True)
        except ValueError as exc:
            reason = str(exc)
            raise _invalid_command(reason[:1].lower() + reason[1:]) from None
        if not texts:
            raise _invalid_command("it names no program")
        first, *rest = (_command_word(text) for text in texts)
        if len(first) != 1 or not isinstance(first[0], str):
            raise _invalid_command("the first word must be the program name, without placeholders")
        return CustomCommand(template, first[0], tuple(rest))

    @property
    def leading_words(self) -> tuple[str, ...]:
        """The arguments before the first one with a placeholder, as written."""
        words: list[str] = []
        for word in self.arguments:
            if not all(isinstance(segment, str) for segment in word):
                break
            words.append("".join(str(segment) for segment in word))
        return tuple(words)

    @property
    def uses_model(self) -> bool:
        return any(Placeholder("model") in word for word in self.arguments)

    @property
    def has_prompt_word(self) -> bool:
        return _PROMPT_WORD in self.arguments

    def render(
        self, *, binary: str, prompt: str, model: str | None, values: Mapping[str, str]
    ) -> list[str]:
        """The argv: `binary` first, then the arguments, the prompt always one of them.

        Without a model, words mentioning `{model}` disappear whole, so `--model={model}` is the
        way to make a flag optional. `values` maps name, fleet_id, agent_id, director_agent_id
        and coding_agent.
        """
        filled = dict(values) if model is None else {**values, "model": model}
        argv = [binary]
        for word in self.arguments:
            if word == _PROMPT_WORD:
                argv.append(prompt)
            elif model is not None or Placeholder("model") not in word:
                argv.append(_fill(word, filled))
        if not self.has_prompt_word:
            argv.append(prompt)
        return argv


_PROMPT_WORD: Word = (Placeholder("prompt"),)


def _command_word(text: str) -> Word:
    try:
        word = _segments(text)
    except _StrayBrace as stray:
        raise _invalid_command(
            f"single '{stray.brace}' in {text!r}; double literal braces ({{{{, }}}}) to keep them"
            " as text"
        ) from None
    for segment in word:
        if not isinstance(segment, Placeholder):
            continue
        if segment.name not in COMMAND_PLACEHOLDERS:
            raise UsageProblem(
                f"Unknown placeholder '{segment.name}' in --agent-command."
                f" Supported placeholders: {_supported(COMMAND_PLACEHOLDERS)}."
            )
        if segment.name == "prompt" and word != _PROMPT_WORD:
            raise _invalid_command(f"{{prompt}} must be a whole word, not part of {text!r}")
    return word


def custom_command_for(
    coding_agent: CodingAgent, *, agent_command: str | None, default_agent_command: str | None
) -> CustomCommand | None:
    """Step 2 of `member create`: the custom template, from the option or the setting."""
    if coding_agent is not CodingAgent.CUSTOM:
        if agent_command is not None:
            raise UsageProblem("--agent-command is only valid with --coding-agent custom.")
        return None
    template = agent_command if agent_command is not None else default_agent_command
    if template is None:
        raise UsageProblem(
            "--coding-agent custom needs --agent-command or CAFLEET_CUSTOM_AGENT_COMMAND."
        )
    return CustomCommand.parse(template)


# --- accepted foreground names (what the agent check lets through) ---------------------------

_ENV_OPTIONS_WITH_VALUE = frozenset({"-u", "--unset", "-C", "--chdir", "-P"})


def accepted_commands(
    resolved_argv0: str, first_line_of_file: str | None, arguments: Sequence[str] = ()
) -> tuple[str, ...]:
    """Names a custom member's pane may show as its foreground command.

    A script started through a shebang shows up as its interpreter, so that name counts too
    (the agent check then wants the script in the interpreter's argv). A runtime given a
    script (`node agent.js`, `python -m agent`) adds the script, which its argv must run.
    """
    names = [posixpath.basename(resolved_argv0)]
    interpreter = _shebang_program(first_line_of_file)
    if interpreter:
        names.append(posixpath.basename(interpreter))
    if is_runtime(resolved_argv0):
        names.append(runtime_script([resolved_argv0, *arguments]) or "")
    return tuple(dict.fromkeys(name for name in names if name))


def _shebang_program(first_line: str | None) -> str | None:
    if first_line is None or not first_line.startswith("#!"):
        return None
    words = first_line[2:].split()
    if not words:
        return None
    if posixpath.basename(words[0]) == "env":
        return _env_program(words[1:])
    return words[0]


def _env_program(args: Sequence[str]) -> str | None:
    """The program `env` would run, past its options (`-S` included) and NAME=VALUE pairs."""
    pending = list(args)
    while pending:
        arg = pending.pop(0)
        if arg == "--":
            return pending[0] if pending else None
        if arg in _ENV_OPTIONS_WITH_VALUE:
            pending = pending[1:]
        elif arg.startswith("--split-string="):
            pending.insert(0, arg.partition("=")[2])
        elif arg.startswith("-S") and len(arg) > 2:
            pending.insert(0, arg[2:])
        elif not arg.startswith("-") and "=" not in arg:
            return arg
    return None


# the built-in demo agent (cafleet.demo.agent) runs as a custom agent with these flags
DEMO_AGENT = "cafleet-demo-agent"
DEMO_AGENT_FLAGS = f'--coding-agent custom --agent-command "{DEMO_AGENT} {{prompt}}"'


PROFILE = AgentProfile(
    CodingAgent.CUSTOM,
    foreground_names=(),  # computed at spawn from the command's program and shebang
    submit_delay=0.2,
    ready_rules=(ReadyRule.WAIT,),
    wait_fallback_seconds=0.5,
    bracketed_paste=False,  # unknown: a preview goes as one line
    notes="any terminal program; ready once it has stayed in front for a moment",
)

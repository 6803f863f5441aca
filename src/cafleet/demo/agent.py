"""cafleet-demo-agent: a tiny terminal "coding agent" without a model.

It behaves like the prompt of a coding-agent TUI (Claude Code, Codex, OpenCode) as far as
CAFleet is concerned, which makes the ping-pong demonstration runnable offline and gives the
end-to-end tests a deterministic agent to drive.

Usage::

    cafleet-demo-agent [--rounds N] [--hold] [--slow-composer MS] [--permission-menu]
                       [--prompt-mark MARK] [--dialog-on WORD] [PROMPT ...]
    python -m cafleet.demo.agent ...

Identity comes from ``CAFLEET_FLEET_ID`` and ``CAFLEET_AGENT_ID`` (set by ``member create``);
when either is missing or not a positive integer it prints one line to stderr and exits 2.
The prompt is the last positional argument (optional); its first line is shown at start.

Terminal
    The input side of the terminal is put in raw mode (no echo, no line editing, no signal
    keys, CR not translated) and bracketed paste is enabled with ``ESC[?2004h``; output keeps
    the usual LF -> CRLF translation. Both are restored on exit. When stdin is not a terminal
    (a pipe), bytes are read as they come and the terminal setup is skipped.

Keys
    - printable text is added to the composer and echoed on a ``> `` line (``--prompt-mark``
      draws another mark: ``❯`` is Claude Code's);
    - ``ESC[200~ ... ESC[201~`` (bracketed paste) is added as one piece; CR, LF and CRLF
      inside it become line breaks, so a multi-line paste cannot submit early;
    - CR or LF outside a paste submits the composer (an empty composer is not submitted);
    - Esc outside a paste is ignored apart from being logged; other escape sequences
      (arrows, function keys) are ignored;
    - Backspace (DEL or BS) deletes one character, Ctrl-U clears the composer;
    - Ctrl-C exits with status 130.

Submissions
    Each one prints ``SUBMIT:<text>`` on its own line (line breaks shown as ``\\n``) and then:

    - ``/exit``: exit 0;
    - ``!<cmd>``: run ``<cmd>`` with ``sh -c`` and print its output;
    - a message preview (starting ``[cafleet msg <T> from <S> <TS>]``) or a line starting
      with ``cafleet message poll``: run ``cafleet message poll`` for its own identity (the
      CLI of this installation: ``python -m cafleet`` with the same interpreter, literal ids)
      and, for every pending message, oldest first: ACK it; ``ping <n>`` -> send ``pong <n>``
      to the sender; ``pong <n>`` with n < ``--rounds`` -> send ``ping <n+1>``;
    - a line starting with ``[monitor] wake``: print ``WAKE`` and nothing else;
    - anything else: nothing.

Options
    ``--rounds N`` (default 3): the last ``pong`` that is answered with a ``ping``.
    ``--hold`` (or env ``CAFLEET_DEMO_HOLD=1``): a message preview is only shown, as
    ``HOLD <T> from <S>: poll and ack it as agent <A>``; nothing is polled, acknowledged or
    answered, so the user can walk through ``message poll`` and ``message ack`` by hand.

Log
    ``CAFLEET_DEMO_LOG=<file>`` appends one JSON object per line, flushed after each line:
    ``{"event":"ready","fleet_id":F,"agent_id":A}``, ``{"event":"submit","text":...}``,
    ``{"event":"esc"}``, ``{"event":"ack","task_id":T,"from":S}``,
    ``{"event":"reply","to":S,"text":...}``, ``{"event":"error","text":...}``,
    ``{"event":"exit","code":N}`` and the emulation events below.

Test emulation
    ``--slow-composer MS`` (or env ``CAFLEET_DEMO_SLOW_COMPOSER_MS``; the option wins):
        like the paste-burst guard of Codex, an Enter that arrives less than MS milliseconds
        after the last typed or pasted character is dropped (logged as
        ``{"event":"enter-dropped"}``); the text stays in the composer, and an Enter sent
        after the delay submits it. 0 (the default) disables the guard.
    ``--permission-menu``:
        at start and after each submission, show ``Do you want to proceed? 1. Yes 2. No``
        (logged as ``{"event":"menu"}``). While it is up, Esc dismisses it (logged as
        ``{"event":"menu-dismissed"}`` after the ``esc`` event) and an Enter approves it
        (logged as ``{"event":"menu-approved"}``: a stray approval, which CAFleet's dialog
        check prevents for agents whose profile knows the dialog) instead of submitting; text
        typed meanwhile stays in the composer.
    ``--dialog-on WORD``:
        a submission containing WORD opens a permission dialog drawn in the composer's place,
        worded like Claude Code's (``Do you want to proceed?`` ... ``Esc to cancel``; logged
        as ``{"event":"dialog"}``). ``1`` or Enter approves it, ``3`` or Esc rejects it
        (``dialog-approved``, ``dialog-rejected``); anything else that arrives while it is
        up reaches the dialog, not the composer, and is logged as
        ``{"event":"into-dialog","text":...}``. The composer's text is kept and shown again
        once the dialog closes.
"""

from __future__ import annotations

import argparse
import codecs
import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import termios
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from types import FrameType
from typing import Any, TextIO

# --------------------------------------------------------------------------- input decoding

ESC = "\x1b"
PASTE_BEGIN = "200~"  # CSI parameters + final byte of ESC[200~
PASTE_END = "\x1b[201~"
MAX_CSI = 32  # longer "sequences" are garbage and are dropped


@dataclass(frozen=True)
class Text:
    """Typed characters (several keys may be grouped into one event)."""

    text: str


@dataclass(frozen=True)
class Paste:
    """The content of one bracketed paste; line breaks normalised to LF."""

    text: str


@dataclass(frozen=True)
class Submit:
    """CR or LF outside a paste (Enter)."""


@dataclass(frozen=True)
class Esc:
    """A lone Esc key."""


@dataclass(frozen=True)
class CtrlC:
    """Ctrl-C (ETX)."""


@dataclass(frozen=True)
class Backspace:
    """DEL or BS."""


@dataclass(frozen=True)
class ClearLine:
    """Ctrl-U."""


Event = Text | Paste | Submit | Esc | CtrlC | Backspace | ClearLine


class InputDecoder:
    """Turns terminal input bytes into key events; no I/O, no clock.

    A lone ESC is ambiguous until the next byte arrives: ``ESC [`` starts a CSI sequence (the
    paste markers among them), ``ESC O`` an SS3 key, anything else means the Esc key was
    pressed. When no byte follows, the caller decides after a short wait (``pending_escape``)
    and calls ``flush()`` to turn the held ESC into an ``Esc`` event.
    """

    def __init__(self) -> None:
        self._utf8 = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._state = "ground"  # ground | esc | csi | ss3 | paste
        self._csi = ""
        self._paste: list[str] = []
        self._paste_tail = ""
        self._text: list[str] = []
        self._events: list[Event] = []
        self._after_cr = False

    @property
    def pending_escape(self) -> bool:
        """An ESC was read and nothing after it yet."""
        return self._state == "esc"

    @property
    def in_paste(self) -> bool:
        return self._state == "paste"

    def feed(self, data: bytes) -> list[Event]:
        for char in self._utf8.decode(data):
            self._step(char)
        return self._take()

    def flush(self) -> list[Event]:
        """No byte followed a lone ESC in time: it was the Esc key."""
        if self._state == "esc":
            self._state = "ground"
            self._emit(Esc())
        return self._take()

    # -- internals

    def _take(self) -> list[Event]:
        self._flush_text()
        events, self._events = self._events, []
        return events

    def _flush_text(self) -> None:
        if self._text:
            self._events.append(Text("".join(self._text)))
            self._text = []

    def _emit(self, event: Event) -> None:
        self._flush_text()
        self._events.append(event)

    def _step(self, char: str) -> None:
        state = self._state
        if state == "paste":
            self._paste_char(char)
        elif state == "esc":
            self._escape_char(char)
        elif state == "csi":
            self._csi_char(char)
        elif state == "ss3":
            self._state = "ground"
            if char < " ":
                self._ground(char)
        else:
            self._ground(char)

    def _ground(self, char: str) -> None:
        after_cr, self._after_cr = self._after_cr, False
        if char == ESC:
            self._state = "esc"
        elif char == "\r":
            self._after_cr = True
            self._emit(Submit())
        elif char == "\n":
            if not after_cr:  # CRLF is one Enter
                self._emit(Submit())
        elif char == "\x03":
            self._emit(CtrlC())
        elif char in ("\x7f", "\x08"):
            self._emit(Backspace())
        elif char == "\x15":
            self._emit(ClearLine())
        elif char == "\t" or (char >= " " and not "\x80" <= char <= "\x9f"):
            self._text.append(char)
        # any other control character is ignored

    def _escape_char(self, char: str) -> None:
        if char == "[":
            self._state = "csi"
            self._csi = ""
        elif char == "O":
            self._state = "ss3"
        else:
            self._state = "ground"
            self._emit(Esc())
            self._ground(char)

    def _csi_char(self, char: str) -> None:
        if " " <= char <= "?":  # parameter and intermediate bytes
            self._csi += char
            if len(self._csi) > MAX_CSI:
                self._state = "ground"
        elif "@" <= char <= "~":  # final byte
            self._state = "ground"
            if self._csi + char == PASTE_BEGIN:
                self._state = "paste"
                self._paste = []
                self._paste_tail = ""
            # ESC[201~ without a paste, arrows, focus events...: ignored
        else:  # broken sequence: drop it, keep the byte
            self._state = "ground"
            self._ground(char)

    def _paste_char(self, char: str) -> None:
        tail = self._paste_tail + char
        if tail == PASTE_END:
            self._state = "ground"
            self._paste_tail = ""
            text = _normalise_paste("".join(self._paste))
            if text:
                self._emit(Paste(text))
        elif PASTE_END.startswith(tail):
            self._paste_tail = tail
        elif char == ESC:  # what was held is content; a new end marker may start here
            self._paste.append(self._paste_tail)
            self._paste_tail = ESC
        else:
            self._paste.append(tail)
            self._paste_tail = ""


def _normalise_paste(text: str) -> str:
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return "".join(c for c in text if c in "\n\t" or (c >= " " and c != "\x7f"))


# --------------------------------------------------------------------------- screen and log

PROMPT = "> "
MENU_LINE = "Do you want to proceed? 1. Yes 2. No"


def dialog_rows(command: str) -> list[str]:
    """A permission dialog as Claude Code 2.1.332 draws one for a Bash command."""
    return [
        " Bash command",
        f"   {_printable(command)}",
        " Do you want to proceed?",
        " ❯ 1. Yes",
        "   2. Yes, and don't ask again for this command",
        "   3. No",
        " Esc to cancel · Tab to amend",
    ]


class Screen:
    """Output lines above a one-line composer (`> text`), or a dialog in its place, redrawn
    after every change."""

    def __init__(
        self, out: TextIO, columns: Callable[[], int] | None = None, prompt: str = PROMPT
    ) -> None:
        self._out = out
        self._columns = columns or (lambda: shutil.get_terminal_size((80, 24)).columns)
        self._prompt = prompt
        self._shown = ""  # what the bottom currently displays (composer or dialog)
        self._dialog: list[str] = []
        self._composer = ""

    def line(self, text: str) -> None:
        """Print one line of output; the composer is redrawn below it."""
        bottom = self._shown
        self._erase()
        self._out.write(text + "\n")
        self._draw(bottom)

    def composer(self, text: str) -> None:
        self._composer = self._prompt + text.replace("\n", "⏎").replace("\t", " ")
        self._redraw()

    def dialog(self, rows: Sequence[str]) -> None:
        """Draw `rows` in the composer's place; no rows: the composer again."""
        self._dialog = list(rows)
        self._redraw()

    def close(self) -> None:
        self._erase()

    def _redraw(self) -> None:
        self._erase()
        self._draw("\n".join(self._dialog) if self._dialog else self._composer)

    def _draw(self, shown: str) -> None:
        self._out.write(shown)
        self._out.flush()
        self._shown = shown

    def _erase(self) -> None:
        if not self._shown:
            return
        width = max(1, self._columns())
        rows = sum((max(1, len(row)) - 1) // width + 1 for row in self._shown.split("\n"))
        up = f"\x1b[{rows - 1}A" if rows > 1 else ""
        self._out.write(f"\r{up}\x1b[J")
        self._shown = ""


class EventLog:
    """JSON lines appended to CAFLEET_DEMO_LOG (a no-op without it)."""

    def __init__(self, path: str | None) -> None:
        self._path = path

    def write(self, event: str, **fields: Any) -> None:
        if not self._path:
            return
        record = json.dumps({"event": event, **fields}, ensure_ascii=False, separators=(",", ":"))
        with open(self._path, "a", encoding="utf-8") as handle:
            handle.write(record + "\n")
            handle.flush()


# --------------------------------------------------------------------------- the agent

PREVIEW_RE = re.compile(r"\[cafleet msg (\d+) from (\d+) (\S+)\]")
PING_PONG_RE = re.compile(r"(ping|pong) (\d+)")
POLL_LINE = "cafleet message poll"
WAKE_LINE = "[monitor] wake"
CLI_TIMEOUT = 60.0

Runner = Callable[[Sequence[str]], subprocess.CompletedProcess[str]]


def run_command(argv: Sequence[str]) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            list(argv),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=CLI_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return subprocess.CompletedProcess(list(argv), 127, "", str(exc))


@dataclass(frozen=True)
class Options:
    fleet_id: str
    agent_id: str
    prompt: str = ""
    rounds: int = 3
    slow_composer_ms: int = 0
    permission_menu: bool = False
    hold: bool = False  # leave messages for the user to poll and ack
    dialog_on: str = ""  # a submission containing it opens a permission dialog


class DemoAgent:
    """What the agent does with each key event; `handle` returns an exit status to stop."""

    def __init__(
        self,
        options: Options,
        screen: Screen,
        log: EventLog,
        run: Runner = run_command,
        cli: Sequence[str] = (sys.executable, "-m", "cafleet"),
    ) -> None:
        self.options = options
        self.screen = screen
        self.log = log
        self._run = run
        self._cli = list(cli)
        self.composer = ""
        self.menu_up = False
        self.dialog_up = False
        self._last_input_at: float | None = None

    def start(self) -> None:
        opts = self.options
        self.screen.composer("")
        self.screen.line(f"cafleet demo agent {opts.agent_id} ready")
        first = opts.prompt.strip().split("\n", 1)[0].strip()
        if first:
            self.screen.line(first)
        self.log.write("ready", fleet_id=int(opts.fleet_id), agent_id=int(opts.agent_id))
        self._show_menu()

    def handle(self, event: Event, now: float) -> int | None:
        if self.dialog_up and not isinstance(event, CtrlC):
            self._answer(event)
            return None
        match event:
            case Text(text) | Paste(text):
                self.composer += text
                self._last_input_at = now
                self.screen.composer(self.composer)
            case Backspace():
                self.composer = self.composer[:-1]
                self.screen.composer(self.composer)
            case ClearLine():
                self.composer = ""
                self.screen.composer(self.composer)
            case Esc():
                self.log.write("esc")
                if self.menu_up:
                    self.menu_up = False
                    self.log.write("menu-dismissed")
                    self.screen.line("(menu dismissed)")
            case CtrlC():
                return 130
            case Submit():
                return self._enter(now)
        return None

    # -- Enter

    def _enter(self, now: float) -> int | None:
        if self.menu_up:
            self.menu_up = False
            self.log.write("menu-approved")
            self.screen.line("(approved: 1. Yes)")
            return None
        if not self.composer.strip():
            return None
        limit = self.options.slow_composer_ms / 1000
        if limit > 0 and self._last_input_at is not None and now - self._last_input_at < limit:
            self.log.write("enter-dropped")
            return None
        text, self.composer = self.composer, ""
        self.screen.composer("")
        self.screen.line("SUBMIT:" + text.replace("\n", "\\n"))
        self.log.write("submit", text=text)
        status = self.act(text)
        if status is None:
            self._show_menu()
        word = self.options.dialog_on
        if status is None and word and word in text:
            self.dialog_up = True
            self.screen.dialog(dialog_rows(text))
            self.log.write("dialog")
        return status

    def _answer(self, event: Event) -> None:
        """A key while the permission dialog is up: it answers the dialog or is dropped."""
        match event:
            case Text("1") | Submit():
                self._close_dialog("dialog-approved", "(approved)")
            case Text("3") | Esc():
                self._close_dialog("dialog-rejected", "(rejected)")
            case Text(text) | Paste(text):
                self.log.write("into-dialog", text=text)
            case _:
                self.log.write("into-dialog", text=type(event).__name__)

    def _close_dialog(self, event: str, shown: str) -> None:
        self.dialog_up = False
        self.log.write(event)
        self.screen.dialog([])
        self.screen.line(shown)

    def _show_menu(self) -> None:
        if self.options.permission_menu:
            self.menu_up = True
            self.screen.line(MENU_LINE)
            self.log.write("menu")

    # -- submissions

    def act(self, text: str) -> int | None:
        stripped = text.strip()
        first = stripped.split("\n", 1)[0].strip()
        if stripped == "/exit":
            return 0
        if stripped.startswith("!"):
            self._shell(stripped[1:].strip())
        elif (preview := PREVIEW_RE.match(first)) and self.options.hold:
            task, sender = preview.group(1), preview.group(2)
            self.log.write("hold", task_id=int(task), **{"from": int(sender)})
            self.screen.line(
                f"HOLD {task} from {sender}: poll and ack it as agent {self.options.agent_id}"
            )
        elif preview or first.startswith(POLL_LINE):
            self.poll()
        elif first.startswith(WAKE_LINE):
            self.screen.line("WAKE")
        return None

    def _shell(self, command: str) -> None:
        done = self._run(["sh", "-c", command])
        for line in (done.stdout + done.stderr).splitlines():
            self.screen.line(line)
        if done.returncode:
            self.screen.line(f"[exit {done.returncode}]")

    def poll(self) -> None:
        """ACK every pending message and answer the ping-pong ones."""
        done = self._cafleet("poll", "--full", as_json=True)
        if done is None:
            return
        try:
            pending = _messages(json.loads(done.stdout))
        except (ValueError, TypeError, KeyError) as exc:
            self._error(f"unexpected poll output: {exc}")
            return
        if not pending:
            self.screen.line("no pending messages")
        for task_id, sender, body in sorted(pending):
            if self._cafleet("ack", "--task-id", str(task_id)) is None:
                continue  # someone else took it; do not answer twice
            self.log.write("ack", task_id=task_id, **{"from": sender})
            self.screen.line(f"ACK {task_id} from {sender}: {_printable(body)}")
            reply = self.reply_for(body)
            if reply is None:
                continue
            sent = self._cafleet("send", "--to", str(sender), "--text", reply)
            if sent is not None:
                self.log.write("reply", to=sender, text=reply)
                self.screen.line(f"REPLY to {sender}: {reply}")

    def reply_for(self, body: str) -> str | None:
        match = PING_PONG_RE.fullmatch(body.strip())
        if match is None:
            return None
        word, number = match.group(1), int(match.group(2))
        if word == "ping":
            return f"pong {number}"
        if number < self.options.rounds:
            return f"ping {number + 1}"
        return None

    def _cafleet(
        self, verb: str, *extra: str, as_json: bool = False
    ) -> subprocess.CompletedProcess[str] | None:
        """`cafleet message <verb>` as this agent; None (after reporting) when it failed."""
        argv = [
            *self._cli,
            *(["--json"] if as_json else []),
            "message",
            verb,
            "--fleet-id",
            self.options.fleet_id,
            "--agent-id",
            self.options.agent_id,
            *extra,
        ]
        done = self._run(argv)
        if done.returncode != 0:
            reason = done.stderr.strip() or done.stdout.strip() or f"exit {done.returncode}"
            self._error(f"cafleet message {verb} failed: {reason.splitlines()[-1]}")
            return None
        return done

    def _error(self, text: str) -> None:
        self.log.write("error", text=text)
        self.screen.line(f"ERROR: {text}")


def _printable(text: str) -> str:
    """One display line: line breaks as ⏎, other control characters as U+FFFD."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\n", "⏎")
    return "".join("\ufffd" if c < " " or "\x7f" <= c <= "\x9f" else c for c in text)


def _messages(data: object) -> list[tuple[int, int, str]]:
    """(task_id, from_agent_id, text) of each entry of `poll --full --json`."""
    if not isinstance(data, list):
        raise TypeError("not a list")
    found = []
    for item in data:
        if not isinstance(item, dict):
            raise TypeError("entry is not an object")
        found.append((int(item["task_id"]), int(item["from_agent_id"]), str(item["text"])))
    return found


# --------------------------------------------------------------------------- terminal and loop

ESC_WAIT = 0.05  # seconds to wait for the rest of an escape sequence


@contextmanager
def terminal(fd: int, out: TextIO) -> Iterator[None]:
    """Raw input and bracketed paste for the duration; restored even on errors."""
    try:
        saved = termios.tcgetattr(fd)
    except termios.error:  # not a terminal
        yield
        return
    mode = termios.tcgetattr(fd)
    mode[0] &= ~(
        termios.BRKINT
        | termios.ICRNL
        | termios.INLCR
        | termios.IGNCR
        | termios.INPCK
        | termios.ISTRIP
        | termios.IXON
    )
    mode[2] |= termios.CS8
    mode[3] &= ~(termios.ECHO | termios.ICANON | termios.IEXTEN | termios.ISIG)
    mode[6][termios.VMIN] = 1
    mode[6][termios.VTIME] = 0
    termios.tcsetattr(fd, termios.TCSANOW, mode)
    out.write("\x1b[?2004h")
    out.flush()
    try:
        yield
    finally:
        with suppress(OSError, ValueError):
            out.write("\x1b[?2004l")
            out.flush()
        with suppress(termios.error, OSError):
            termios.tcsetattr(fd, termios.TCSADRAIN, saved)


def run_loop(fd: int, agent: DemoAgent, clock: Callable[[], float]) -> int:
    decoder = InputDecoder()
    while True:
        timeout = ESC_WAIT if decoder.pending_escape else None
        ready, _, _ = select.select([fd], [], [], timeout)
        now = clock()
        if ready:
            try:
                data = os.read(fd, 4096)
            except OSError:  # the terminal went away
                return 0
            if not data:
                return 0
            events = decoder.feed(data)
        else:
            events = decoder.flush()
        for event in events:
            status = agent.handle(event, now)
            if status is not None:
                return status


def _parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="cafleet-demo-agent",
        description="A terminal stand-in for a coding agent; plays ping-pong over cafleet.",
    )
    parser.add_argument("--rounds", type=_positive, default=3, help="ping-pong rounds (3)")
    parser.add_argument(
        "--hold",
        action="store_true",
        help="show message previews but leave the messages for you to poll and ack",
    )
    parser.add_argument(
        "--slow-composer",
        type=_non_negative,
        default=None,
        metavar="MS",
        help="drop an Enter arriving less than MS ms after the last typed or pasted text",
    )
    parser.add_argument(
        "--permission-menu",
        action="store_true",
        help="show a permission menu that a stray Enter approves and Esc dismisses",
    )
    parser.add_argument(
        "--prompt-mark",
        default=PROMPT.strip(),
        metavar="MARK",
        help="the mark the composer's row starts with ('>'; Claude Code's is '❯')",
    )
    parser.add_argument(
        "--dialog-on",
        default="",
        metavar="WORD",
        help="open a permission dialog after a submission containing WORD",
    )
    parser.add_argument("prompt", nargs="*", help="the spawn prompt (the last one counts)")
    return parser.parse_args(argv)


def _positive(value: str) -> int:
    number = _non_negative(value)
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1: {value!r}")
    return number


def _non_negative(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {value!r}") from None
    if number < 0:
        raise argparse.ArgumentTypeError(f"must not be negative: {value!r}")
    return number


def _identity() -> tuple[str, str] | str:
    """(fleet_id, agent_id), or the error line."""
    values = []
    for name in ("CAFLEET_FLEET_ID", "CAFLEET_AGENT_ID"):
        value = os.environ.get(name, "").strip()
        if not value:
            return f"{name} is not set; run me as a cafleet member"
        if not (value.isascii() and value.isdigit()) or int(value) < 1:
            return f"{name} is not a positive integer: {value!r}"
        values.append(str(int(value)))
    return values[0], values[1]


def _on_signal(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse_args(argv)
    identity = _identity()
    if isinstance(identity, str):
        print(f"cafleet-demo-agent: {identity}", file=sys.stderr)
        return 2
    slow = args.slow_composer
    if slow is None:
        raw = os.environ.get("CAFLEET_DEMO_SLOW_COMPOSER_MS", "").strip() or "0"
        try:
            slow = _non_negative(raw)
        except argparse.ArgumentTypeError as exc:
            print(f"cafleet-demo-agent: CAFLEET_DEMO_SLOW_COMPOSER_MS {exc}", file=sys.stderr)
            return 2
    options = Options(
        fleet_id=identity[0],
        agent_id=identity[1],
        prompt=args.prompt[-1] if args.prompt else "",
        rounds=args.rounds,
        slow_composer_ms=slow,
        permission_menu=args.permission_menu,
        hold=args.hold or os.environ.get("CAFLEET_DEMO_HOLD", "") not in ("", "0"),
        dialog_on=args.dialog_on,
    )
    log = EventLog(os.environ.get("CAFLEET_DEMO_LOG") or None)
    out = sys.stdout
    screen = Screen(out, prompt=f"{args.prompt_mark} ")
    agent = DemoAgent(options, screen, log)
    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGHUP, _on_signal)
    fd = sys.stdin.fileno()
    status = 1
    with terminal(fd, out):
        try:
            agent.start()
            status = run_loop(fd, agent, time.monotonic)
        except SystemExit as exc:
            status = exc.code if isinstance(exc.code, int) else 1
        except KeyboardInterrupt:  # SIGINT when stdin is not a terminal
            status = 130
        finally:
            with suppress(OSError, ValueError):
                screen.close()
                out.write("\n")
                out.flush()
            log.write("exit", code=status)
    return status


if __name__ == "__main__":
    sys.exit(main())

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
How the terminal is set up and what each key does: see terminal.py.

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

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from contextlib import suppress
from types import FrameType
from typing import Any

from cafleet.demo.options import Options, options_from, parse_args
from cafleet.demo.terminal import (
    Backspace,
    ClearLine,
    CtrlC,
    Esc,
    Event,
    Paste,
    Screen,
    Submit,
    Text,
    dialog_rows,
    printable,
    raw_terminal,
    run_loop,
)

MENU_LINE = "Do you want to proceed? 1. Yes 2. No"


# --------------------------------------------------------------------------- log


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
            self.screen.line(f"ACK {task_id} from {sender}: {printable(body)}")
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


# --------------------------------------------------------------------------- main


def _on_signal(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    options = options_from(args)
    if isinstance(options, str):
        print(f"cafleet-demo-agent: {options}", file=sys.stderr)
        return 2
    log = EventLog(os.environ.get("CAFLEET_DEMO_LOG") or None)
    out = sys.stdout
    screen = Screen(out, prompt=f"{args.prompt_mark} ")
    agent = DemoAgent(options, screen, log)
    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGHUP, _on_signal)
    fd = sys.stdin.fileno()
    status = 1
    with raw_terminal(fd, out):
        try:
            agent.start()
            status = run_loop(fd, agent.handle, time.monotonic)
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

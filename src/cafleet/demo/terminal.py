"""The demo agent's terminal: raw input decoded into key events, and the screen it draws.

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
"""

from __future__ import annotations

import codecs
import os
import select
import shutil
import termios
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from typing import TextIO

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


# --------------------------------------------------------------------------- screen

PROMPT = "> "


def dialog_rows(command: str) -> list[str]:
    """A permission dialog as Claude Code 2.1.332 draws one for a Bash command."""
    return [
        " Bash command",
        f"   {printable(command)}",
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


def printable(text: str) -> str:
    """One display line: line breaks as ⏎, other control characters as U+FFFD."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\n", "⏎")
    return "".join("\ufffd" if c < " " or "\x7f" <= c <= "\x9f" else c for c in text)


# ---------------------------------------------------------------- raw mode and the read loop

ESC_WAIT = 0.05  # seconds to wait for the rest of an escape sequence


@contextmanager
def raw_terminal(fd: int, out: TextIO) -> Iterator[None]:
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


def run_loop(
    fd: int, handle: Callable[[Event, float], int | None], clock: Callable[[], float]
) -> int:
    """Feed each key event read from `fd` to `handle` until it returns an exit status."""
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
            status = handle(event, now)
            if status is not None:
                return status

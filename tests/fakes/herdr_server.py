"""A fake herdr server: herdr's socket protocol on a Unix socket, served from a thread.

Wire format as herdr's: newline-delimited JSON, one request per connection (read one line of
at most 1 MiB within 5 s, write one line, close); `{"id","result":{"type",...}}` on success,
`{"id","error":{"code","message"}}` on failure. State: workspaces -> tabs -> panes with ids
that are never reused (`w1`, `w1:t1`, `w1:p1`), a binary split tree per tab from which
`pane.layout` computes rectangles, an agent state per pane (`unknown` until a test sets
another), a log of every byte written into each pane, and its screen.

Methods: ping, workspace.create/list, tab.create, pane.current/get/list/split/close/focus,
pane.send_text/send_keys/send_input, pane.read, pane.wait_for_output, pane.layout, pane.resize,
layout.set_split_ratio, pane.process_info, agent.prompt, pane.rename (the label shows as
PaneInfo's `label`), notification.show (recorded in `notifications`; always shown),
events.subscribe. Anything else is answered with `invalid_request`.

`events.subscribe {subscriptions: [...]}` follows herdr (`src/api/server.rs`
`stream_subscriptions`, `src/api/subscriptions.rs`, `src/api/schema/events.rs`): an entry
of an unknown type fails the whole request as herdr's parser does (`invalid_request`, empty
id); `{"type":"pane.agent_status_changed","pane_id",...}` probes its pane (gone:
`{"id":"<rid>:sub:<i>:probe","error":{"code":"pane_not_found"}}` and the connection
closes) and, with an `agent_status` filter the pane already matches, sends that state
first. Then `{"id","result":{"type":"subscription_started"}}`, and every `event_poll`
seconds (herdr: 100 ms) at most one line per entry: status entries send
`{"event":"pane.agent_status_changed","data":{pane_id, workspace_id, agent_status,
agent?}}` for changes after the subscription; lifecycle entries (`pane.closed`,
`pane.exited`, `pane.created`, ...) start at the beginning of the event ring (512 events)
and send `{"event":"pane_closed","data":{"type":"pane_closed","pane_id","workspace_id"}}`.
A status change is an event (`set_agent_status`); `pane.close` is `pane_closed`, a pane
whose process ended `pane_exited`. The stream ends when the client goes away, the server
stops, or a test calls `drop_subscriptions()`.

`agent.prompt {target, text}` follows herdr 0.8.2 (`src/app/api/agents.rs`): the target is
a pane id whose pane has a detected agent (`set_agent`; else `agent_not_found`, also for a
pane that is gone), a `blocked` agent is refused with `agent_blocked` before anything is
written, and otherwise the text is written (bracketed when the program enabled that) and
Enter follows `prompt_enter_delay` seconds later as a write of its own. Agent names as
targets and the `wait` option are not modelled.

Two modes:

- plain (default): a pane is a record. What is typed is logged, the screen is whatever a
  test sets, `pane.process_info` reports what a test sets (a shell by default).
- pty (`pty=True`): every pane runs a real shell (`/bin/sh`) on a pseudo-terminal with the
  split's cwd and env plus HERDR_ENV, HERDR_PANE_ID, HERDR_TAB_ID, HERDR_WORKSPACE_ID and
  HERDR_SOCKET_PATH. Typed bytes reach the process; its output is rendered by a small
  terminal model (enough for line-oriented programs and simple cursor movement) that also
  tracks whether the program enabled bracketed paste; `pane.process_info` reads the
  foreground process group from /proc (Linux), and a `HERDR_AGENT=<name>` in the
  environment of that group's leader names the pane's `agent`, herdr's agent-identity hint
  (`src/platform/linux.rs`). As in herdr, a pane whose process exits is closed.

`pane.read` follows herdr's rules (`src/pane/terminal.rs`, `src/app/api_helpers.rs`): rows
are rendered rows (a line wider than the pane takes several), `lines` is capped at 1000,
trailing blank rows are dropped and `truncated` says whether older rows were left out; a
text read of an idle detected agent on the alternate screen that asks more rows than the
screen has is held back as herdr's wheel-scrolling history harvest would
(`harvest_row_seconds` per row beyond the screen). Agent states follow herdr's seen rule:
a turn that ends in the active tab is reported `idle`, elsewhere `done`.

Test controls (Python methods, not on the wire): set_agent_status, focus_tab, move_pane,
set_client_focus, set_agent, set_screen, set_alternate_screen, screen_text, inputs / typed,
set_processes, set_bracketed_paste, fail, exit_pane, requests, pane_ids, rects,
drop_subscriptions, subscribers.
"""

from __future__ import annotations

import codecs
import contextlib
import fcntl
import itertools
import json
import math
import os
import re
import select
import shutil
import signal
import socket
import socketserver
import struct
import subprocess
import sys
import tempfile
import termios
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

PROTOCOL = 20
VERSION = "0.8.2"
HEADLESS_COLUMNS, HEADLESS_ROWS = 120, 40  # herdr's virtual terminal with no client attached
RATIO_RANGE = (0.1, 0.9)  # herdr clamps every split ratio to this
MAX_REQUEST_BYTES = 1024 * 1024
READ_TIMEOUT_SECONDS = 5.0
AGENT_STATES = ("idle", "working", "blocked", "done", "unknown")
READ_SOURCES = ("visible", "recent", "recent_unwrapped", "detection")
DEFAULT_RECENT_LINES = 80
MAX_READ_LINES = 1000  # herdr caps `lines` of pane.read
SCROLLBACK_LINES = 10_000
PROMPT_ENTER_DELAY = 0.3  # herdr's AGENT_PROMPT_SUBMIT_DELAY
# herdr scrolls an idle alternate-screen agent with wheel events to harvest rows beyond its
# screen before answering a text read (up to 15 s, and 5 s more to scroll back)
HARVEST_ROW_SECONDS = 0.02
HARVEST_MAX_SECONDS = 20.0
EVENT_POLL = 0.1  # herdr's CONNECTION_POLL_INTERVAL for subscriptions
EVENT_RING = 512  # herdr's EventHub capacity
LIFECYCLE_EVENTS = {
    f"{noun}.{verb}": f"{noun}_{verb}"
    for noun, verbs in (
        ("workspace", ("created", "updated", "closed", "renamed", "focused")),
        ("tab", ("created", "closed", "renamed", "focused")),
        ("pane", ("created", "closed", "updated", "focused", "exited", "agent_detected")),
        ("layout", ("updated",)),
    )
    for verb in verbs
}
STATUS_SUBSCRIPTION = "pane.agent_status_changed"
HINT_PREFIX = b"HERDR_AGENT="  # herdr's agent-identity hint in a process's environment
# some of the names herdr's `src/detect/mod.rs` lookup_agent knows, and its label for each
AGENT_LABELS = {"claude": "claude", "claude-code": "claude", "codex": "codex",
                "opencode": "opencode", "open-code": "opencode", "gemini": "gemini"}  # fmt: skip

# Runs in the child between fork and the shell: make the pty its controlling terminal.
# Plain mode's shell pids come from one sequence for every server of the process, as real pids
# do from the kernel: no two live panes share one, and a restarted server's panes get new ones.
_PLAIN_PIDS = itertools.count(40_000)

_CTTY_EXEC = (
    "import fcntl, os, sys, termios; fcntl.ioctl(0, termios.TIOCSCTTY, 0); "
    "os.execv(sys.argv[1], sys.argv[1:])"
)

_NAMED_KEYS = {
    "enter": "\r", "return": "\r", "esc": "\x1b", "escape": "\x1b", "tab": "\t",
    "backspace": "\x7f", "space": " ", "up": "\x1b[A", "down": "\x1b[B", "right": "\x1b[C",
    "left": "\x1b[D", "home": "\x1b[H", "end": "\x1b[F", "delete": "\x1b[3~",
    "pageup": "\x1b[5~", "pagedown": "\x1b[6~", "shift+tab": "\x1b[Z", "minus": "-",
    "plus": "+", "backtick": "`",
}  # fmt: skip


def encode_key(name: str) -> bytes | None:
    """herdr's key syntax (`enter`, `esc`, `ctrl+c` or `C-c`, `alt+x`, ...); None if unknown."""
    key = name.strip().lower()
    if key in _NAMED_KEYS:
        return _NAMED_KEYS[key].encode()
    if key.startswith("c-"):
        key = "ctrl+" + key[2:]
    for prefix in ("ctrl+", "alt+"):
        rest = key[len(prefix) :]
        if key.startswith(prefix) and len(rest) == 1:
            if prefix == "alt+":
                return b"\x1b" + rest.encode()
            if rest.isalpha() or rest in "[\\]^_@":
                return bytes([ord(rest.upper()) & 0x1F])
    return None


class HerdrError(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _pane_not_found(pane_id: object) -> HerdrError:
    return HerdrError("pane_not_found", f"pane {pane_id} not found")


# --------------------------------------------------------------------------- the screen


Cell = tuple[str, str]  # (character, SGR sequence in effect)


class Screen:
    """A tiny terminal: unwrapped lines, a cursor, SGR colours, bracketed-paste mode."""

    def __init__(self, rows: int, columns: int) -> None:
        self.rows = rows
        self.columns = columns
        self.reset()

    def reset(self) -> None:
        self.lines: list[list[Cell]] = [[]]
        self.row = 0
        self.col = 0
        self.sgr = ""
        self.bracketed_paste = False
        self.alternate = False  # the program switched to the alternate screen
        self.mouse_reporting = False  # the program asked for mouse reports (wheel included)
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._state = "ground"
        self._seq = ""

    def feed(self, data: bytes) -> None:
        for char in self._decoder.decode(data):
            self._step(char)

    def set_text(self, text: str) -> None:
        modes = self.bracketed_paste, self.alternate, self.mouse_reporting
        self.reset()
        self.bracketed_paste, self.alternate, self.mouse_reporting = modes
        self.feed(text.replace("\r\n", "\n").replace("\n", "\r\n").encode())

    def render(self, ansi: bool) -> list[str]:
        """Scrollback plus the visible screen (padded with the blank rows below the cursor)."""
        out = [self._render_line(line, ansi) for line in self.lines]
        if len(out) < self.rows:
            out += [""] * (self.rows - len(out))
        return out

    def rendered_rows(self, ansi: bool) -> list[tuple[str, bool]]:
        """Every row as herdr counts them, a line wider than the screen taking one row per
        `columns` cells: (text, whether it continues the row above), the screen's blank
        rows below the cursor included."""
        out: list[tuple[str, bool]] = []
        for line in self.lines:
            cells = _trimmed(line)
            pieces = [cells[i : i + self.columns] for i in range(0, len(cells), self.columns)]
            for index, piece in enumerate(pieces or [[]]):
                out.append((self._render_cells(piece, ansi), index > 0))
        return out + [("", False)] * max(0, self.rows - len(out))

    def read(self, source: str, lines: int | None, ansi: bool) -> tuple[str, bool]:
        """herdr's `pane.read` text and `truncated` flag (`src/pane/terminal.rs`): `visible`
        is the screen; `recent*` the last `lines` rendered rows (80 by default, at most
        1000) and truncated when there were more; `recent_unwrapped` joins soft-wrapped
        rows. Trailing blank rows are dropped; `visible` and `recent` end with a newline."""
        rows = self.rendered_rows(ansi)
        if source in ("visible", "detection"):
            window, truncated = rows[-self.rows :], False
        else:
            wanted = min(lines or DEFAULT_RECENT_LINES, MAX_READ_LINES)
            window, truncated = rows[-wanted:], len(rows) > wanted
        texts: list[str] = []
        for text, continued in window:
            if continued and texts and source == "recent_unwrapped":
                texts[-1] += text
            else:
                texts.append(text)
        while texts and not _visible(texts[-1]).strip():
            texts.pop()
        if source == "recent_unwrapped":
            return "\n".join(texts), truncated
        return "".join(f"{text}\n" for text in texts), truncated

    def _render_line(self, line: list[Cell], ansi: bool) -> str:
        return self._render_cells(_trimmed(line), ansi)

    def _render_cells(self, cells: list[Cell], ansi: bool) -> str:
        if not ansi:
            return "".join(char for char, _ in cells)
        out, current = [], ""
        for char, sgr in cells:
            if sgr != current:
                out.append("\x1b[0m" + sgr)
                current = sgr
            out.append(char)
        if current:
            out.append("\x1b[0m")
        return "".join(out)

    # -- the parser

    def _step(self, char: str) -> None:
        state = self._state
        if state == "ground":
            self._ground(char)
        elif state == "escape":
            if char == "[":
                self._state, self._seq = "csi", ""
            elif char == "]":
                self._state = "osc"
            elif char in "()*+":
                self._state = "charset"
            else:
                self._state = "ground"
        elif state == "csi":
            if "\x40" <= char <= "\x7e":
                self._state = "ground"
                self._csi(self._seq, char)
            elif len(self._seq) < 64:
                self._seq += char
        elif state == "osc":
            if char == "\x07":
                self._state = "ground"
            elif char == "\x1b":
                self._state = "osc-escape"
        else:  # osc-escape, charset
            self._state = "ground"

    def _ground(self, char: str) -> None:
        if char == "\x1b":
            self._state = "escape"
        elif char == "\r":
            self.col = 0
        elif char == "\n":
            self._line_feed()
        elif char == "\b":
            self.col = max(0, self.col - 1)
        elif char == "\t":
            self.col = (self.col // 8 + 1) * 8
        elif char >= " " and char != "\x7f":
            self._put(char)

    def _top(self) -> int:
        return max(0, len(self.lines) - self.rows)

    def _line_feed(self) -> None:
        self.row += 1
        self._reach(self.row)
        if len(self.lines) > SCROLLBACK_LINES:
            drop = len(self.lines) - SCROLLBACK_LINES
            del self.lines[:drop]
            self.row -= drop

    def _reach(self, row: int) -> None:
        while len(self.lines) <= row:
            self.lines.append([])

    def _put(self, char: str) -> None:
        line = self.lines[self.row]
        while len(line) < self.col:
            line.append((" ", ""))
        if self.col < len(line):
            line[self.col] = (char, self.sgr)
        else:
            line.append((char, self.sgr))
        self.col += 1

    def _csi(self, params: str, final: str) -> None:
        if params.startswith("?"):
            modes = set(params[1:].split(";"))
            if final in "hl" and "2004" in modes:
                self.bracketed_paste = final == "h"
            if final in "hl" and modes & {"47", "1047", "1049"}:
                self.alternate = final == "h"
            if final in "hl" and modes & {"1000", "1002", "1003"}:
                self.mouse_reporting = final == "h"
            return
        nums = [int(p) if p.isdigit() else 0 for p in params.split(";")] if params else []
        n = nums[0] if nums and nums[0] > 0 else 1
        top = self._top()
        if final == "m":
            if params in ("", "0"):
                self.sgr = ""
            elif params.startswith("0;"):
                self.sgr = f"\x1b[{params}m"
            else:
                self.sgr += f"\x1b[{params}m"
        elif final == "A":
            self.row = max(top, self.row - n)
        elif final in "BE":
            self.row += n
            self._reach(self.row)
            if final == "E":
                self.col = 0
        elif final == "F":
            self.row, self.col = max(top, self.row - n), 0
        elif final == "C":
            self.col += n
        elif final == "D":
            self.col = max(0, self.col - n)
        elif final == "G":
            self.col = n - 1
        elif final == "d":
            self.row = top + n - 1
            self._reach(self.row)
        elif final in "Hf":
            row = nums[0] if nums and nums[0] > 0 else 1
            col = nums[1] if len(nums) > 1 and nums[1] > 0 else 1
            self.row, self.col = top + row - 1, col - 1
            self._reach(self.row)
        elif final == "J":
            self._erase_display(nums[0] if nums else 0, top)
        elif final == "K":
            self._erase_line(nums[0] if nums else 0)

    def _erase_display(self, mode: int, top: int) -> None:
        if mode == 0:
            del self.lines[self.row][self.col :]
            del self.lines[self.row + 1 :]
        elif mode == 2:
            for index in range(top, len(self.lines)):
                self.lines[index] = []
        elif mode == 3:  # the scrollback
            del self.lines[:top]
            self.row -= top

    def _erase_line(self, mode: int) -> None:
        line = self.lines[self.row]
        if mode == 0:
            del line[self.col :]
        elif mode == 1:
            for index in range(min(self.col + 1, len(line))):
                line[index] = (" ", "")
        else:
            line.clear()


def _trimmed(line: list[Cell]) -> list[Cell]:
    cells = list(line)
    while cells and cells[-1] == (" ", ""):
        cells.pop()
    return cells


def _visible(text: str) -> str:
    return re.sub(r"\x1b\[[0-?]*[ -/]*[@-~]", "", text)


# --------------------------------------------------------------------------- the model


@dataclass
class Leaf:
    pane_id: str


@dataclass
class Split:
    direction: str  # "right" (side by side) or "down" (stacked)
    ratio: float
    first: Leaf | Split
    second: Leaf | Split


Node = Leaf | Split


@dataclass(frozen=True)
class Rect:
    x: int
    y: int
    width: int
    height: int

    def wire(self) -> dict[str, int]:
        return {"x": self.x, "y": self.y, "width": self.width, "height": self.height}


@dataclass(frozen=True)
class Border:
    """A split as herdr's `SplitBorder`: its area, its path from the root (True: the second
    child) and the divider's position (x for `right`, y for `down`)."""

    direction: str
    ratio: float
    area: Rect
    path: tuple[bool, ...]
    pos: int


@dataclass
class Tab:
    tab_id: str
    workspace_id: str
    root: Node
    focused: str
    label: str | None = None


@dataclass
class Workspace:
    workspace_id: str
    label: str | None
    tabs: list[str] = field(default_factory=list)
    pane_numbers: Any = field(default_factory=lambda: itertools.count(1))
    tab_numbers: Any = field(default_factory=lambda: itertools.count(1))


@dataclass
class Pane:
    pane_id: str
    workspace_id: str
    tab_id: str
    terminal_id: str
    cwd: str
    env: dict[str, str]
    screen: Screen
    agent_status: str = "unknown"  # as reported: `done` is idle and not seen
    seen: bool = True
    agent: str | None = None
    label: str | None = None  # set by pane.rename, shown in herdr's sidebar
    revision: int = 0
    inputs: list[bytes] = field(default_factory=list)
    bracketed: bool = False  # plain mode: whether the "application" asked for bracketed paste
    processes: list[dict[str, Any]] | None = None  # plain mode: what process_info reports
    shell_pid: int = field(default_factory=lambda: next(_PLAIN_PIDS))  # plain mode
    process: subprocess.Popen[bytes] | None = None
    master: int | None = None
    closed: bool = False
    write_lock: threading.Lock = field(default_factory=threading.Lock)


@dataclass
class Entry:
    """One entry of a subscription: a lifecycle kind from the ring's start, or one pane's
    status changes after the subscription."""

    kind: str  # the event name on the wire
    cursor: int  # the last ring sequence looked at
    pane_id: str | None = None
    status_filter: str | None = None
    initial: dict[str, Any] | None = None


@dataclass
class Failure:
    code: str
    message: str
    times: int


class FakeHerdrServer:
    def __init__(
        self,
        socket_path: str | None = None,
        *,
        pty: bool = False,
        env: Mapping[str, str] | None = None,
        shell: str | None = None,
        protocol: int = PROTOCOL,
        version: str = VERSION,
        columns: int = HEADLESS_COLUMNS,
        rows: int = HEADLESS_ROWS,
        prompt_enter_delay: float = PROMPT_ENTER_DELAY,
        event_poll: float = EVENT_POLL,
        harvest_row_seconds: float = HARVEST_ROW_SECONDS,
    ) -> None:
        self._own_dir: str | None = None
        if socket_path is None:
            # AF_UNIX paths are limited to ~107 bytes: keep the socket somewhere short
            base = "/tmp" if os.path.isdir("/tmp") else None
            self._own_dir = tempfile.mkdtemp(prefix="fake-herdr-", dir=base)
            socket_path = os.path.join(self._own_dir, "herdr.sock")
        self.socket_path = socket_path
        self.pty = pty
        self.env = dict(os.environ if env is None else env)
        self.shell = shell or shutil.which("sh") or "/bin/sh"
        self.protocol = protocol
        self.version = version
        self.columns = columns
        self.rows = rows
        self.prompt_enter_delay = prompt_enter_delay
        self.event_poll = event_poll
        self.harvest_row_seconds = harvest_row_seconds
        self._events: list[tuple[int, str, dict[str, Any]]] = []  # (sequence, kind, data)
        self._sequence = 0
        self._subscribers: list[socket.socket] = []
        self._stopping = threading.Event()
        self.lock = threading.RLock()
        self.workspaces: dict[str, Workspace] = {}
        self.tabs: dict[str, Tab] = {}
        self.panes: dict[str, Pane] = {}
        self._closed: dict[str, Pane] = {}  # closed panes, kept for their input logs
        self._aliases: dict[str, str] = {}  # ids of moved panes -> their current ids
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self.notifications: list[dict[str, Any]] = []  # notification.show: title, body, sound
        self.connections = 0
        self._failures: dict[str, Failure] = {}
        self._workspace_numbers = itertools.count(1)
        self._terminal_numbers = itertools.count(1)
        self._threads: list[threading.Thread] = []
        self._server: socketserver.ThreadingUnixStreamServer | None = None
        self._serving: threading.Thread | None = None
        self.root_pane = ""
        self.active_tab = ""  # the active tab of the focused workspace
        self.client_focus: bool | None = None  # no client attached

    # -- lifecycle

    def start(self, cwd: str | None = None) -> FakeHerdrServer:
        fake = self

        class Handler(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                fake._serve_connection(self.connection)

        class Server(socketserver.ThreadingUnixStreamServer):
            daemon_threads = True

        self._server = Server(self.socket_path, Handler)
        os.chmod(self.socket_path, 0o600)
        self._serving = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._serving.start()
        with self.lock:
            _, tab, root = self._create_workspace(cwd or os.getcwd(), None, {})
            self.active_tab = tab.tab_id
        self.root_pane = root.pane_id
        return self

    def stop(self) -> None:
        """Stop serving (the socket disappears) and end every pane's process."""
        self._stopping.set()
        self.drop_subscriptions()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.socket_path)
        with self.lock:
            panes = list(self.panes.values())
            for pane in panes:
                pane.closed = True
        for pane in panes:
            self._end_process(pane, wait=True)
        for thread in self._threads:
            thread.join(timeout=5)
        if self._own_dir is not None:
            shutil.rmtree(self._own_dir, ignore_errors=True)
            self._own_dir = None

    def __enter__(self) -> FakeHerdrServer:
        return self.start() if self._server is None else self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- test controls

    def set_agent_status(self, pane_id: str, status: str, agent: str | None = None) -> None:
        """The agent's state as herdr detects it, reported under herdr's seen rule
        (`src/app/actions.rs`): a change from working or blocked to idle in the active tab
        (while the client's terminal has not lost focus, or no client is attached) is seen
        at once and reported `idle`; elsewhere it stays `done` until its tab is focused.
        `done` sets that unseen state directly."""
        if status not in AGENT_STATES:
            raise ValueError(f"unknown agent status {status!r}")
        with self.lock:
            pane = self._pane(pane_id)
            if status == "done":
                pane.seen = False
            elif status != "idle":
                pane.seen = True
            elif pane.agent_status in ("working", "blocked"):
                pane.seen = pane.tab_id == self.active_tab and self.client_focus is not False
            if agent is not None:
                pane.agent = agent
            self._report(pane, "done" if status in ("idle", "done") and not pane.seen else status)

    def focus_tab(self, tab_id: str) -> None:
        """The user switches to a tab: it becomes the active one and its panes are seen."""
        with self.lock:
            if tab_id not in self.tabs:
                raise KeyError(tab_id)
            self._activate(tab_id)

    def set_client_focus(self, focused: bool | None) -> None:
        """What the attached client says of its terminal's focus (None: no client)."""
        with self.lock:
            self.client_focus = focused

    def set_agent(self, pane_id: str, agent: str | None) -> None:
        with self.lock:
            self._pane(pane_id).agent = agent

    def set_screen(self, pane_id: str, text: str) -> None:
        with self.lock:
            pane = self._pane(pane_id)
            pane.screen.set_text(text)
            pane.revision += 1

    def screen_text(self, pane_id: str, *, ansi: bool = False) -> str:
        """The whole buffer, trailing blank rows removed."""
        with self.lock:
            rows = self._pane(pane_id).screen.render(ansi)
        while rows and not rows[-1].strip():
            rows.pop()
        return "\n".join(rows)

    def inputs(self, pane_id: str) -> list[bytes]:
        """Every write into the pane, in order (one entry per herdr write)."""
        with self.lock:
            return list(self._any_pane(pane_id).inputs)

    def typed(self, pane_id: str) -> bytes:
        return b"".join(self.inputs(pane_id))

    def set_processes(
        self, pane_id: str, processes: list[dict[str, Any]] | None, *, shell_pid: int | None = None
    ) -> None:
        """Plain mode: what pane.process_info reports (foreground_processes); the pane keeps
        its shell pid unless one is given."""
        with self.lock:
            pane = self._pane(pane_id)
            pane.processes = None if processes is None else [dict(p) for p in processes]
            if shell_pid is not None:
                pane.shell_pid = shell_pid

    def set_alternate_screen(self, pane_id: str, enabled: bool = True) -> None:
        """Plain mode: the program runs on the alternate screen with mouse reporting on (as
        OpenCode does, and Codex by default)."""
        with self.lock:
            screen = self._pane(pane_id).screen
            screen.alternate = screen.mouse_reporting = enabled

    def set_bracketed_paste(self, pane_id: str, enabled: bool = True) -> None:
        with self.lock:
            self._pane(pane_id).bracketed = enabled

    def bracketed(self, pane_id: str) -> bool:
        with self.lock:
            pane = self._pane(pane_id)
            return pane.screen.bracketed_paste if self.pty else pane.bracketed

    def fail(
        self, method: str, code: str, message: str = "injected failure", times: int = 1
    ) -> None:
        """Answer the next `times` requests of `method` with this error."""
        with self.lock:
            self._failures[method] = Failure(code, message, times)

    def drop_subscriptions(self) -> None:
        """Close every open `events.subscribe` connection (as a restarting server would)."""
        with self.lock:
            subscribers, self._subscribers = self._subscribers, []
        for conn in subscribers:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)

    def subscribers(self) -> int:
        """How many `events.subscribe` connections are streaming."""
        with self.lock:
            return len(self._subscribers)

    def exit_pane(self, pane_id: str) -> None:
        """What herdr does when a pane's process ends: the pane closes."""
        with self.lock:
            pane = self._pane(pane_id)
            self._close(pane, event="pane_exited")
        self._end_process(pane, wait=True)

    def move_pane(self, pane_id: str, workspace_id: str) -> str:
        """Move a pane into a new tab of another workspace, as herdr does: it gets a new id
        there and keeps its terminal; the old id stays an alias that requests still accept
        (`src/app/ids.rs`), but listings name the new id only. Returns the new id."""
        with self.lock:
            pane = self._pane(pane_id)
            workspace = self.workspaces[workspace_id]
            old_tab = self.tabs[pane.tab_id]
            remaining = _remove_leaf(old_tab.root, pane.pane_id)
            if remaining is None:
                raise ValueError("a tab's last pane moves with its tab")
            old_tab.root = remaining
            if old_tab.focused == pane.pane_id:
                old_tab.focused = _leaves(remaining)[0]
            new_id = f"{workspace_id}:p{next(workspace.pane_numbers)}"
            tab_id = f"{workspace_id}:t{next(workspace.tab_numbers)}"
            self.tabs[tab_id] = Tab(tab_id, workspace_id, Leaf(new_id), new_id)
            workspace.tabs.append(tab_id)
            del self.panes[pane.pane_id]
            for alias, target in list(self._aliases.items()):
                if target == pane.pane_id:
                    self._aliases[alias] = new_id
            self._aliases[pane.pane_id] = new_id
            pane.pane_id, pane.workspace_id, pane.tab_id = new_id, workspace_id, tab_id
            self.panes[new_id] = pane
            return new_id

    def pane_ids(self) -> list[str]:
        with self.lock:
            return list(self.panes)

    def has_pane(self, pane_id: str) -> bool:
        with self.lock:
            return pane_id in self.panes

    def rects(self, pane_id: str) -> dict[str, Rect]:
        """Rectangles of every pane in the tab of `pane_id`."""
        with self.lock:
            tab = self.tabs[self._pane(pane_id).tab_id]
            rects, _ = self._geometry(tab)
            return rects

    def request_log(self) -> list[tuple[str, dict[str, Any]]]:
        with self.lock:
            return list(self.requests)

    def methods(self) -> list[str]:
        return [method for method, _ in self.request_log()]

    # -- the wire

    def _serve_connection(self, conn: socket.socket) -> None:
        conn.settimeout(READ_TIMEOUT_SECONDS)
        with self.lock:
            self.connections += 1
        data = b""
        try:
            while b"\n" not in data and len(data) <= MAX_REQUEST_BYTES:
                chunk = conn.recv(65536)
                if not chunk:
                    break
                data += chunk
        except OSError:
            return
        line = data.split(b"\n", 1)[0]
        entries: list[Entry] | None = None
        if len(line) > MAX_REQUEST_BYTES:
            reply: dict[str, Any] = _error("", "invalid_request", "request exceeds 1 MiB")
        else:
            reply, entries = self._respond(line)
        try:
            conn.sendall((json.dumps(reply, ensure_ascii=False) + "\n").encode())
        except OSError:
            return
        if entries is not None:
            self._stream(conn, entries)

    def handle_line(self, line: bytes) -> dict[str, Any]:
        return self._respond(line)[0]

    def _respond(self, line: bytes) -> tuple[dict[str, Any], list[Entry] | None]:
        """The reply line, and for an acknowledged `events.subscribe` its entries."""
        try:
            request = json.loads(line)
        except ValueError:
            return _error("", "invalid_request", "request is not valid JSON"), None
        if not isinstance(request, dict):
            return _error("", "invalid_request", "request must be a JSON object"), None
        request_id = str(request.get("id", ""))
        method = request.get("method")
        params = request.get("params") or {}
        if not isinstance(method, str) or not isinstance(params, dict):
            return _error(request_id, "invalid_request", "request needs a method and params"), None
        with self.lock:
            self.requests.append((method, params))
            failure = self._failures.get(method)
            if failure is not None:
                failure.times -= 1
                if failure.times <= 0:
                    del self._failures[method]
                return _error(request_id, failure.code, failure.message), None
        if method == "events.subscribe":
            return self._subscribe(request_id, params)
        handler = self._handlers().get(method)
        if handler is None:
            return _error(request_id, "invalid_request", f"unknown method {method}"), None
        try:
            return {"id": request_id, "result": handler(params)}, None
        except HerdrError as exc:
            return _error(request_id, exc.code, exc.message), None
        except (KeyError, TypeError, ValueError) as exc:
            return _error(request_id, "invalid_request", f"invalid params: {exc}"), None

    def _handlers(self) -> dict[str, Callable[[dict[str, Any]], dict[str, Any]]]:
        return {
            "ping": self._ping,
            "workspace.create": self._workspace_create,
            "workspace.list": self._workspace_list,
            "tab.create": self._tab_create,
            "pane.current": self._pane_current,
            "pane.get": self._pane_get,
            "pane.list": self._pane_list,
            "pane.split": self._pane_split,
            "pane.close": self._pane_close,
            "pane.focus": self._pane_focus,
            "pane.send_text": self._send_text,
            "pane.send_keys": self._send_keys,
            "pane.send_input": self._send_input,
            "pane.read": self._pane_read,
            "pane.wait_for_output": self._wait_for_output,
            "pane.layout": self._pane_layout,
            "pane.resize": self._pane_resize,
            "layout.set_split_ratio": self._set_split_ratio,
            "pane.process_info": self._process_info,
            "agent.prompt": self._agent_prompt,
            "pane.rename": self._pane_rename,
            "notification.show": self._notification_show,
        }

    # -- methods

    def _subscribe(
        self, request_id: str, params: dict[str, Any]
    ) -> tuple[dict[str, Any], list[Entry] | None]:
        raw = params.get("subscriptions")
        if not isinstance(raw, list) or not all(isinstance(e, dict) for e in raw):
            return _error("", "invalid_request", "invalid request: subscriptions"), None
        entries: list[Entry] = []
        with self.lock:
            for index, spec in enumerate(raw):
                kind = spec.get("type")
                if kind in LIFECYCLE_EVENTS:
                    entries.append(Entry(LIFECYCLE_EVENTS[kind], 0))
                    continue
                pane_id = spec.get("pane_id")
                status_filter = spec.get("agent_status")
                if (
                    kind != STATUS_SUBSCRIPTION
                    or not isinstance(pane_id, str)
                    or status_filter not in (None, *AGENT_STATES)
                ):
                    return _error("", "invalid_request", f"invalid request: {spec}"), None
                pane = self.panes.get(self._aliases.get(pane_id, pane_id))
                if pane is None:
                    probe = f"{request_id}:sub:{index}:probe"
                    return _error(probe, "pane_not_found", f"pane {pane_id} not found"), None
                initial = self._status_data(pane) if status_filter == pane.agent_status else None
                entries.append(  # herdr follows the id the probe answered with
                    Entry(STATUS_SUBSCRIPTION, self._sequence, pane.pane_id, status_filter, initial)
                )
        return {"id": request_id, "result": {"type": "subscription_started"}}, entries

    def _stream(self, conn: socket.socket, entries: list[Entry]) -> None:
        """herdr's loop: stop when the peer went away, else at most one event per entry."""
        with self.lock:
            self._subscribers.append(conn)
        try:
            while not self._stopping.is_set() and not _peer_closed(conn):
                for entry in entries:
                    with self.lock:
                        event = self._next_event(entry)
                    if event is not None:
                        conn.sendall((json.dumps(event, ensure_ascii=False) + "\n").encode())
                time.sleep(self.event_poll)
        except OSError:
            pass
        finally:
            with self.lock:
                if conn in self._subscribers:
                    self._subscribers.remove(conn)

    def _next_event(self, entry: Entry) -> dict[str, Any] | None:
        if entry.initial is not None:
            data, entry.initial = entry.initial, None
            return {"event": STATUS_SUBSCRIPTION, "data": data}
        for sequence, kind, data in self._events:
            if sequence <= entry.cursor:
                continue
            entry.cursor = sequence
            if entry.pane_id is None and kind == entry.kind:
                return {"event": kind, "data": {"type": kind, **data}}
            if (
                entry.pane_id is not None
                and kind == "pane_agent_status_changed"
                and data["pane_id"] == entry.pane_id
                and entry.status_filter in (None, data["agent_status"])
            ):
                return {"event": STATUS_SUBSCRIPTION, "data": dict(data)}
        return None

    def _emit(self, kind: str, data: dict[str, Any]) -> None:
        """Append to the event ring (lock held)."""
        self._sequence += 1
        self._events.append((self._sequence, kind, data))
        del self._events[:-EVENT_RING]

    def _report(self, pane: Pane, status: str) -> None:
        """Set the state herdr reports (lock held); a change is an event."""
        changed = pane.agent_status != status
        pane.agent_status = status
        pane.revision += 1
        if changed:
            self._emit("pane_agent_status_changed", self._status_data(pane))

    def _activate(self, tab_id: str) -> None:
        """herdr marks a tab seen when it is focused or switched to (lock held)."""
        self.active_tab = tab_id
        for pane in self.panes.values():
            if pane.tab_id == tab_id:
                pane.seen = True
                if pane.agent_status == "done":
                    self._report(pane, "idle")

    def _status_data(self, pane: Pane) -> dict[str, Any]:
        data: dict[str, Any] = {"pane_id": pane.pane_id, "workspace_id": pane.workspace_id,
                                "agent_status": pane.agent_status}  # fmt: skip
        agent = self._agent_of(pane)
        if agent is not None:
            data["agent"] = agent
        return data

    def _ping(self, params: dict[str, Any]) -> dict[str, Any]:
        return {"type": "pong", "version": self.version, "protocol": self.protocol,
                "capabilities": {"live_handoff": False,
                                 "detached_server_daemon": False}}  # fmt: skip

    def _workspace_create(self, params: dict[str, Any]) -> dict[str, Any]:
        env = _checked_env(params.get("env"))
        with self.lock:
            workspace, tab, pane = self._create_workspace(
                params.get("cwd") or os.getcwd(), params.get("label"), env
            )
            return {
                "type": "workspace_created",
                "workspace": self._workspace_info(workspace),
                "tab": self._tab_info(tab),
                "root_pane": self._pane_info(pane),
            }

    def _workspace_list(self, params: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            infos = [self._workspace_info(w) for w in self.workspaces.values()]
            return {"type": "workspace_list", "workspaces": infos}

    def _tab_create(self, params: dict[str, Any]) -> dict[str, Any]:
        env = _checked_env(params.get("env"))
        with self.lock:
            workspace_id = params.get("workspace_id") or next(iter(self.workspaces), None)
            workspace = self.workspaces.get(workspace_id or "")
            if workspace is None:
                raise HerdrError("workspace_not_found", f"workspace {workspace_id} not found")
            tab, pane = self._create_tab(
                workspace, params.get("cwd") or os.getcwd(), params.get("label"), env
            )
            return {"type": "tab_created", "tab": self._tab_info(tab),
                    "root_pane": self._pane_info(pane)}  # fmt: skip

    def _pane_current(self, params: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            caller = params.get("caller_pane_id") or self._focused_pane()
            caller = self._aliases.get(caller, caller)
            if caller not in self.panes:
                raise HerdrError("pane_not_found", "pane not found")
            return {"type": "pane_current", "pane": self._pane_info(self.panes[caller])}

    def _pane_get(self, params: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            return {"type": "pane_info", "pane": self._pane_info(self._pane(params["pane_id"]))}

    def _pane_rename(self, params: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            pane = self._pane(params["pane_id"])
            label = params["label"]
            if not isinstance(label, str):
                raise HerdrError("invalid_request", "label must be a string")
            pane.label = label or None  # herdr: an empty label clears it
            return {"type": "pane_info", "pane": self._pane_info(pane)}

    def _notification_show(self, params: dict[str, Any]) -> dict[str, Any]:
        sound = params.get("sound", "none")
        if not isinstance(params["title"], str) or sound not in ("none", "done", "request"):
            raise HerdrError("invalid_request", "invalid notification")
        with self.lock:
            self.notifications.append(
                {"title": params["title"], "body": params.get("body"), "sound": sound}
            )
        return {"type": "notification_shown", "shown": True, "reason": None}

    def _pane_list(self, params: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            workspace_id = params.get("workspace_id")
            if workspace_id is not None and workspace_id not in self.workspaces:
                raise HerdrError("workspace_not_found", f"workspace {workspace_id} not found")
            panes = [
                self._pane_info(p)
                for p in self.panes.values()
                if workspace_id is None or p.workspace_id == workspace_id
            ]
            return {"type": "pane_list", "panes": panes}

    def _pane_split(self, params: dict[str, Any]) -> dict[str, Any]:
        direction = params["direction"]
        if direction not in ("right", "down"):
            raise HerdrError("invalid_request", f"unknown variant `{direction}`")
        env = _checked_env(params.get("env"))
        ratio = float(params.get("ratio") or 0.5)
        with self.lock:
            target_id = params.get("target_pane_id") or self._focused_pane()
            target = self._pane(target_id)
            cwd = params.get("cwd") or target.cwd
            if not os.path.isdir(cwd):
                raise HerdrError("pane_split_failed", f"cwd {cwd} is not a directory")
            workspace = self.workspaces[target.workspace_id]
            tab = self.tabs[target.tab_id]
            pane = self._new_pane(workspace, tab.tab_id, cwd, env)
            tab.root = _split_leaf(tab.root, target.pane_id, direction, ratio, pane.pane_id)
            if params.get("focus"):
                tab.focused = pane.pane_id
            return {"type": "pane_info", "pane": self._pane_info(pane)}

    def _pane_close(self, params: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            pane = self._pane(params["pane_id"])
            self._close(pane)
        self._end_process(pane, wait=False)
        return {"type": "ok"}

    def _pane_focus(self, params: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            pane = self._pane(params["pane_id"])
            self.tabs[pane.tab_id].focused = pane.pane_id
            self._activate(pane.tab_id)
            return {"type": "pane_info", "pane": self._pane_info(pane)}

    def _send_text(self, params: dict[str, Any]) -> dict[str, Any]:
        text = params["text"]
        if not isinstance(text, str):
            raise TypeError("text must be a string")
        with self.lock:
            pane = self._pane(params["pane_id"])
        self._write(pane, text.encode())
        return {"type": "ok"}

    def _send_keys(self, params: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            pane = self._pane(params["pane_id"])
        encoded = _encode_keys(params["keys"])
        for data in encoded:  # herdr writes key by key, after validating them all
            self._write(pane, data)
        return {"type": "ok"}

    def _send_input(self, params: dict[str, Any]) -> dict[str, Any]:
        text = params.get("text") or ""
        if not isinstance(text, str):
            raise TypeError("text must be a string")
        with self.lock:
            pane = self._pane(params["pane_id"])
            bracketed = pane.screen.bracketed_paste if self.pty else pane.bracketed
        keys = b"".join(_encode_keys(params.get("keys") or []))
        payload = text.encode()
        if payload and bracketed:
            payload = b"\x1b[200~" + payload + b"\x1b[201~"
        self._write(pane, payload + keys)  # one write: text and keys arrive together
        return {"type": "ok"}

    def _agent_prompt(self, params: dict[str, Any]) -> dict[str, Any]:
        target, text = params["target"], params["text"]
        if not isinstance(target, str) or not isinstance(text, str):
            raise TypeError("target and text must be strings")
        if not text:
            raise HerdrError("empty_agent_prompt", "agent prompt must not be empty")
        with self.lock:
            pane = self.panes.get(target)
            agent = None if pane is None else self._agent_of(pane)
            if pane is None or agent is None:
                raise HerdrError("agent_not_found", f"agent target {target} not found")
            if pane.agent_status == "blocked":
                raise HerdrError(
                    "agent_blocked", f"agent {target} is blocked and requires interactive input"
                )
            bracketed = pane.screen.bracketed_paste if self.pty else pane.bracketed
            info = self._pane_info(pane)
        payload = text.encode()
        self._write(pane, b"\x1b[200~" + payload + b"\x1b[201~" if bracketed else payload)
        enter = threading.Timer(self.prompt_enter_delay, self._write_unless_closed, (pane, b"\r"))
        enter.daemon = True
        self._threads.append(enter)
        enter.start()
        prompted = {key: info[key] for key in ("workspace_id", "tab_id", "pane_id", "focused")}
        prompted.update(terminal_id=pane.terminal_id, agent=agent,
                        agent_status=pane.agent_status)  # fmt: skip
        return {"type": "agent_prompted", "agent": prompted}

    def _pane_read(self, params: dict[str, Any]) -> dict[str, Any]:
        source = params["source"]
        if source not in READ_SOURCES:
            raise HerdrError("invalid_request", f"unknown variant `{source}`")
        fmt = params.get("format") or "text"
        if fmt not in ("text", "ansi"):
            raise HerdrError("invalid_request", f"unknown variant `{fmt}`")
        lines = params.get("lines")
        with self.lock:
            harvest = self._harvest_seconds(self._pane(params["pane_id"]), source, lines, fmt)
        time.sleep(harvest)
        with self.lock:
            pane = self._pane(params["pane_id"])
            text, truncated = pane.screen.read(source, int(lines) if lines else None, fmt == "ansi")
            return {
                "type": "pane_read",
                "read": {
                    "pane_id": pane.pane_id,
                    "workspace_id": pane.workspace_id,
                    "tab_id": pane.tab_id,
                    "source": source,
                    "format": fmt,
                    "text": text,
                    "revision": 0,
                    "truncated": truncated,
                },
            }

    def _wait_for_output(self, params: dict[str, Any]) -> dict[str, Any]:
        """herdr's `src/api/wait.rs` wait_for_output: every poll interval a passive text read
        (never the alternate-screen harvest) of `source` (`recent` read unwrapped), matched
        line by line; the reply is held until a line matches or `timeout_ms` passes."""
        source = params["source"]
        if source not in READ_SOURCES:
            raise HerdrError("invalid_request", f"unknown variant `{source}`")
        match = params["match"]
        kind, value = match["type"], match["value"]
        if kind not in ("substring", "regex") or not isinstance(value, str):
            raise HerdrError("invalid_request", f"unknown variant `{kind}`")
        try:
            regex = re.compile(value) if kind == "regex" else None
        except re.error as exc:
            raise HerdrError("invalid_regex", str(exc)) from None
        timeout_ms = params.get("timeout_ms")
        deadline = None if timeout_ms is None else time.monotonic() + int(timeout_ms) / 1000
        source = "recent_unwrapped" if source == "recent" else source
        lines = params.get("lines")
        while not self._stopping.is_set():
            with self.lock:
                pane = self._pane(params["pane_id"])
                text, truncated = pane.screen.read(source, int(lines) if lines else None, False)
                for line in text.splitlines():
                    if regex.search(line) if regex else value in line:
                        read = {
                            "pane_id": pane.pane_id,
                            "workspace_id": pane.workspace_id,
                            "tab_id": pane.tab_id,
                            "source": source,
                            "format": "text",
                            "text": text,
                            "revision": 0,
                            "truncated": truncated,
                        }
                        return {
                            "type": "output_matched",
                            "pane_id": pane.pane_id,
                            "revision": 0,
                            "matched_line": line,
                            "read": read,
                        }
            if deadline is not None and time.monotonic() >= deadline:
                raise HerdrError("timeout", "timed out waiting for output match")
            time.sleep(self.event_poll)
        raise HerdrError("server_stopping", "server is stopping")

    def _harvest_seconds(self, pane: Pane, source: str, lines: object, fmt: str) -> float:
        """How long herdr's alternate-screen history harvest holds a read back
        (`src/server/headless.rs` alt_screen_read_spec): a text read of `recent*` rows of an
        idle detected agent on the alternate screen with mouse reporting, asking more rows
        than the screen has; the wheel scrolling takes time per row beyond the screen."""
        wanted = min(int(lines) if isinstance(lines, int) else DEFAULT_RECENT_LINES, MAX_READ_LINES)
        screen = pane.screen
        if (
            fmt != "text"
            or source not in ("recent", "recent_unwrapped")
            or self._agent_of(pane) is None
            or pane.agent_status not in ("idle", "done")
            or not (screen.alternate and screen.mouse_reporting)
            or wanted <= screen.rows
        ):
            return 0.0
        return min((wanted - screen.rows) * self.harvest_row_seconds, HARVEST_MAX_SECONDS)

    def _pane_layout(self, params: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            pane = self._pane(params.get("pane_id") or self._focused_pane())
            return {"type": "pane_layout", "layout": self._layout(self.tabs[pane.tab_id])}

    def _pane_resize(self, params: dict[str, Any]) -> dict[str, Any]:
        direction = params["direction"]
        if direction not in ("left", "right", "up", "down"):
            raise HerdrError("invalid_request", f"unknown variant `{direction}`")
        amount = min(abs(float(params.get("amount") or 0.05)), 0.5)
        with self.lock:
            pane = self._pane(params.get("pane_id") or self._focused_pane())
            tab = self.tabs[pane.tab_id]
            rects, splits = self._geometry(tab)
            changed = _resize(tab.root, rects[pane.pane_id], splits, direction, amount)
            layout = self._layout(tab)
            resize: dict[str, Any] = {
                "changed": changed,
                "pane_id": pane.pane_id,
                "focused_pane_id": tab.focused,
                "layout": layout,
            }
            if not changed:
                resize["reason"] = "unchanged"
            return {"type": "pane_resize", "resize": resize}

    def _set_split_ratio(self, params: dict[str, Any]) -> dict[str, Any]:
        """herdr's `src/app/api/layouts.rs` handle_layout_set_split_ratio: `path` leads from
        the tab's root (true: the second child); the ratio is clamped to 0.1-0.9."""
        ratio, path = float(params["ratio"]), params["path"]
        if not isinstance(path, list) or not all(isinstance(step, bool) for step in path):
            raise TypeError("path must be a list of booleans")
        if not math.isfinite(ratio):
            raise HerdrError("invalid_ratio", "ratio must be finite")
        with self.lock:
            tab_id, pane_id = params.get("tab_id"), params.get("pane_id")
            if (tab_id is None) == (pane_id is None):
                raise HerdrError("layout_not_found", "layout target not found")
            tab = (
                self.tabs.get(tab_id)
                if tab_id
                else self.tabs.get(getattr(self.panes.get(pane_id), "tab_id", ""))
            )
            if tab is None:
                raise HerdrError("layout_not_found", "layout target not found")
            node = _node_at(tab.root, path)
            if not isinstance(node, Split):
                raise HerdrError("split_not_found", "split path not found")
            node.ratio = _clamped(ratio)
            return {"type": "layout_split_ratio_set", "layout": self._description(tab)}

    def _process_info(self, params: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            pane = self._pane(params.get("pane_id") or self._focused_pane())
            if pane.process is not None and pane.master is not None:
                info = _pty_process_info(pane.pane_id, pane.process.pid, pane.master)
            else:
                shell_pid = pane.shell_pid
                processes = pane.processes
                if processes is None:
                    processes = [{"pid": shell_pid, "name": "sh", "argv0": "sh", "argv": ["sh"]}]
                info = {
                    "pane_id": pane.pane_id,
                    "shell_pid": shell_pid,
                    "foreground_process_group_id": processes[0]["pid"] if processes else None,
                    "foreground_processes": processes,
                }
            return {"type": "pane_process_info", "process_info": info}

    # -- state helpers (called with the lock held)

    def _pane(self, pane_id: object) -> Pane:
        if isinstance(pane_id, str):
            pane_id = self._aliases.get(pane_id, pane_id)
        pane = self.panes.get(pane_id) if isinstance(pane_id, str) else None
        if pane is None:
            raise _pane_not_found(pane_id)
        return pane

    def _any_pane(self, pane_id: str) -> Pane:
        pane = self.panes.get(pane_id) or self._closed.get(pane_id)
        if pane is None:
            raise _pane_not_found(pane_id)
        return pane

    def _focused_pane(self) -> str:
        for workspace in self.workspaces.values():
            for tab_id in workspace.tabs:
                return self.tabs[tab_id].focused
        raise HerdrError("pane_not_found", "pane not found")

    def _create_workspace(
        self, cwd: str, label: str | None, env: dict[str, str]
    ) -> tuple[Workspace, Tab, Pane]:
        workspace = Workspace(f"w{next(self._workspace_numbers)}", label)
        self.workspaces[workspace.workspace_id] = workspace
        tab, pane = self._create_tab(workspace, cwd, None, env)
        return workspace, tab, pane

    def _create_tab(
        self, workspace: Workspace, cwd: str, label: str | None, env: dict[str, str]
    ) -> tuple[Tab, Pane]:
        tab_id = f"{workspace.workspace_id}:t{next(workspace.tab_numbers)}"
        pane = self._new_pane(workspace, tab_id, cwd, env)
        tab = Tab(tab_id, workspace.workspace_id, Leaf(pane.pane_id), pane.pane_id, label)
        self.tabs[tab_id] = tab
        workspace.tabs.append(tab_id)
        return tab, pane

    def _new_pane(self, workspace: Workspace, tab_id: str, cwd: str, env: dict[str, str]) -> Pane:
        pane_id = f"{workspace.workspace_id}:p{next(workspace.pane_numbers)}"
        pane = Pane(
            pane_id,
            workspace.workspace_id,
            tab_id,
            f"term-{next(self._terminal_numbers)}",
            cwd,
            dict(env),
            Screen(self.rows, self.columns),
        )
        if self.pty:
            self._start_process(pane)
        self.panes[pane_id] = pane
        return pane

    def _close(self, pane: Pane, event: str = "pane_closed") -> None:
        """Remove a pane from its tab (the sibling takes its space); an empty tab closes,
        and a workspace without tabs closes."""
        if pane.closed or pane.pane_id not in self.panes:
            pane.closed = True
            return
        pane.closed = True
        self._emit(event, {"pane_id": pane.pane_id, "workspace_id": pane.workspace_id})
        del self.panes[pane.pane_id]
        self._closed[pane.pane_id] = pane
        tab = self.tabs[pane.tab_id]
        remaining = _remove_leaf(tab.root, pane.pane_id)
        if remaining is None:
            del self.tabs[tab.tab_id]
            workspace = self.workspaces[tab.workspace_id]
            workspace.tabs.remove(tab.tab_id)
            if not workspace.tabs:
                del self.workspaces[workspace.workspace_id]
            return
        tab.root = remaining
        if tab.focused == pane.pane_id:
            tab.focused = _leaves(remaining)[0]

    def _geometry(self, tab: Tab) -> tuple[dict[str, Rect], list[Border]]:
        rects: dict[str, Rect] = {}
        splits: list[Border] = []
        _place(tab.root, Rect(0, 0, self.columns, self.rows), (), rects, splits)
        return rects, splits

    def _layout(self, tab: Tab) -> dict[str, Any]:
        rects, splits = self._geometry(tab)
        return {
            "workspace_id": tab.workspace_id,
            "tab_id": tab.tab_id,
            "zoomed": False,
            "area": Rect(0, 0, self.columns, self.rows).wire(),
            "focused_pane_id": tab.focused,
            "panes": [
                {"pane_id": pane_id, "focused": pane_id == tab.focused, "rect": rect.wire()}
                for pane_id, rect in rects.items()
            ],
            "splits": [
                {"id": _split_id(index, split.path), "direction": split.direction,
                 "ratio": split.ratio, "rect": split.area.wire()}
                for index, split in enumerate(splits)
            ],
        }  # fmt: skip

    def _description(self, tab: Tab) -> dict[str, Any]:
        """herdr's LayoutDescription (the tree itself, not the rectangles)."""
        return {"workspace_id": tab.workspace_id, "tab_id": tab.tab_id, "zoomed": False,
                "focused_pane_id": tab.focused, "root": _tree(tab.root)}  # fmt: skip

    def _agent_of(self, pane: Pane) -> str | None:
        """The agent herdr names in the pane (lock held): in pty mode a HERDR_AGENT hint in
        the environment of the foreground group's leader comes first, as in herdr's process
        probe (`src/pane.rs`, `src/platform/linux.rs` process_agent_hint); else the agent a
        test set (herdr's detection by process name and screen is not modelled)."""
        hinted = None if pane.master is None or pane.closed else _hinted_agent(pane.master)
        return hinted or pane.agent

    def _pane_info(self, pane: Pane) -> dict[str, Any]:
        info: dict[str, Any] = {
            "pane_id": pane.pane_id,
            "terminal_id": pane.terminal_id,
            "workspace_id": pane.workspace_id,
            "tab_id": pane.tab_id,
            "focused": self.tabs[pane.tab_id].focused == pane.pane_id,
            "cwd": pane.cwd,
            "agent_status": pane.agent_status,
            "revision": pane.revision,
        }
        agent = self._agent_of(pane)
        if agent is not None:
            info["agent"] = agent
        if pane.label is not None:
            info["label"] = pane.label
        return info

    def _tab_info(self, tab: Tab) -> dict[str, Any]:
        return {"tab_id": tab.tab_id, "workspace_id": tab.workspace_id, "label": tab.label,
                "focused_pane_id": tab.focused}  # fmt: skip

    def _workspace_info(self, workspace: Workspace) -> dict[str, Any]:
        return {"workspace_id": workspace.workspace_id, "label": workspace.label,
                "tab_ids": list(workspace.tabs)}  # fmt: skip

    # -- processes (pty mode)

    def _start_process(self, pane: Pane) -> None:
        env = {**self.env, **pane.env}
        env.setdefault("TERM", "xterm-256color")
        env.update(
            HERDR_ENV="1",
            HERDR_PANE_ID=pane.pane_id,
            HERDR_TAB_ID=pane.tab_id,
            HERDR_WORKSPACE_ID=pane.workspace_id,
            HERDR_SOCKET_PATH=self.socket_path,
        )
        master, slave = os.openpty()
        try:
            fcntl.ioctl(
                slave, termios.TIOCSWINSZ, struct.pack("HHHH", self.rows, self.columns, 0, 0)
            )
            pane.process = subprocess.Popen(
                [sys.executable, "-c", _CTTY_EXEC, self.shell],
                stdin=slave,
                stdout=slave,
                stderr=slave,
                cwd=pane.cwd,
                env=env,
                start_new_session=True,
                close_fds=True,
            )
        except OSError as exc:
            os.close(master)
            raise HerdrError("pane_split_failed", str(exc)) from None
        finally:
            os.close(slave)
        pane.master = master
        reader = threading.Thread(target=self._pump, args=(pane,), daemon=True)
        self._threads.append(reader)
        reader.start()

    def _pump(self, pane: Pane) -> None:
        """Render the pane's output; when its process ends, close the pane like herdr."""
        assert pane.master is not None and pane.process is not None
        fd, process = pane.master, pane.process
        while True:
            try:
                ready, _, _ = select.select([fd], [], [], 0.05)
            except (OSError, ValueError):
                break
            data = b""
            if ready:
                try:
                    data = os.read(fd, 65536)
                except OSError:
                    data = b""
                if not data:
                    break
                with self.lock:
                    pane.screen.feed(data)
                    pane.revision += 1
                continue
            if process.poll() is not None:
                break
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=5)
        with self.lock:
            self._close(pane, event="pane_exited")
            pane.master = None
        with contextlib.suppress(OSError):
            os.close(fd)

    def _end_process(self, pane: Pane, *, wait: bool) -> None:
        process = pane.process
        if process is None or process.poll() is not None:
            return
        _hang_up(process.pid)
        master = pane.master
        if master is not None:
            with contextlib.suppress(OSError):
                _hang_up(os.tcgetpgrp(master))

        def reap() -> None:
            try:
                process.wait(timeout=2)
            except subprocess.TimeoutExpired:
                _hang_up(process.pid, signal.SIGKILL)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    process.wait(timeout=5)

        if wait:
            reap()
        else:
            reaper = threading.Thread(target=reap, daemon=True)
            self._threads.append(reaper)
            reaper.start()

    def _write_unless_closed(self, pane: Pane, data: bytes) -> None:
        """A write herdr scheduled earlier; a pane closed meanwhile gets nothing."""
        if not pane.closed:
            with contextlib.suppress(HerdrError):
                self._write(pane, data)

    def _write(self, pane: Pane, data: bytes) -> None:
        if not data:
            return
        with self.lock:
            pane.inputs.append(data)
            master = pane.master if self.pty else None
        if not self.pty:
            return
        if master is None:
            raise HerdrError("pane_send_failed", "the pane's terminal is closed")
        with pane.write_lock:
            view = memoryview(data)
            while view:
                try:
                    written = os.write(master, view)
                except OSError as exc:
                    raise HerdrError("pane_send_failed", str(exc)) from None
                view = view[written:]


# --------------------------------------------------------------------------- helpers


def _hang_up(group: int, signum: int = signal.SIGHUP) -> None:
    """Signal a pane's process group; never group 0 or our own (tcgetpgrp answers 0 once a
    terminal has no foreground group, and killpg(0) would signal the test run itself)."""
    if group > 1 and group != os.getpgrp():
        with contextlib.suppress(OSError):
            os.killpg(group, signum)


def _peer_closed(conn: socket.socket) -> bool:
    """Whether the client closed its end (herdr's `local_stream_peer_closed`)."""
    try:
        readable, _, _ = select.select([conn], [], [], 0)
        return bool(readable) and conn.recv(1, socket.MSG_PEEK) == b""
    except (OSError, ValueError):
        return True


def _error(request_id: str, code: str, message: str) -> dict[str, Any]:
    return {"id": request_id, "error": {"code": code, "message": message}}


def _checked_env(raw: object) -> dict[str, str]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise HerdrError("invalid_env", "env must be an object")
    for key, value in raw.items():
        if not isinstance(key, str) or not key or "=" in key or "\0" in key:
            raise HerdrError("invalid_env", f"invalid environment variable name {key!r}")
        if not isinstance(value, str) or "\0" in value:
            raise HerdrError("invalid_env", f"invalid value for {key}")
    return dict(raw)


def _encode_keys(keys: object) -> list[bytes]:
    if not isinstance(keys, list):
        raise TypeError("keys must be a list")
    encoded = []
    for key in keys:
        data = encode_key(key) if isinstance(key, str) else None
        if data is None:
            raise HerdrError("invalid_key", f"unsupported key {key}")
        encoded.append(data)
    return encoded


def _split_leaf(node: Node, target: str, direction: str, ratio: float, new: str) -> Node:
    if isinstance(node, Leaf):
        if node.pane_id == target:
            return Split(direction, ratio, Leaf(target), Leaf(new))
        return node
    node.first = _split_leaf(node.first, target, direction, ratio, new)
    node.second = _split_leaf(node.second, target, direction, ratio, new)
    return node


def _remove_leaf(node: Node, pane_id: str) -> Node | None:
    if isinstance(node, Leaf):
        return None if node.pane_id == pane_id else node
    first = _remove_leaf(node.first, pane_id)
    second = _remove_leaf(node.second, pane_id)
    if first is None:
        return second
    if second is None:
        return first
    node.first, node.second = first, second
    return node


def _leaves(node: Node) -> list[str]:
    if isinstance(node, Leaf):
        return [node.pane_id]
    return _leaves(node.first) + _leaves(node.second)


def _place(
    node: Node,
    area: Rect,
    path: tuple[bool, ...],
    rects: dict[str, Rect],
    splits: list[Border],
) -> None:
    """herdr's `collect_splits` (`src/layout.rs`): splits in pre-order, each with its path."""
    if isinstance(node, Leaf):
        rects[node.pane_id] = area
        return
    first, second = _split_rect(area, node.direction, node.ratio)
    pos = first.x + first.width if node.direction == "right" else first.y + first.height
    splits.append(Border(node.direction, node.ratio, area, path, pos))
    _place(node.first, first, (*path, False), rects, splits)
    _place(node.second, second, (*path, True), rects, splits)


def _split_rect(area: Rect, direction: str, ratio: float) -> tuple[Rect, Rect]:
    """herdr's `split_rect`: the first child gets round(size * ratio) cells (half away from
    zero, as Rust's f32::round)."""
    if direction == "right":
        size = min(int(area.width * ratio + 0.5), area.width)
        return (
            Rect(area.x, area.y, size, area.height),
            Rect(area.x + size, area.y, area.width - size, area.height),
        )
    size = min(int(area.height * ratio + 0.5), area.height)
    return (
        Rect(area.x, area.y, area.width, size),
        Rect(area.x, area.y + size, area.width, area.height - size),
    )


def _split_id(index: int, path: tuple[bool, ...]) -> str:
    """herdr's `split_path_id`: `split_<index>_root`, else the path as 0/1 digits."""
    return f"split_{index}_{''.join('1' if step else '0' for step in path) or 'root'}"


def _node_at(node: Node, path: list[bool]) -> Node | None:
    for step in path:
        if not isinstance(node, Split):
            return None
        node = node.second if step else node.first
    return node


def _tree(node: Node) -> dict[str, Any]:
    if isinstance(node, Leaf):
        return {"type": "pane", "pane_id": node.pane_id}
    return {"type": "split", "direction": node.direction, "ratio": node.ratio,
            "first": _tree(node.first), "second": _tree(node.second)}  # fmt: skip


def _clamped(ratio: float) -> float:
    low, high = RATIO_RANGE
    return min(max(ratio, low), high)


def _resize(root: Node, pane: Rect, splits: list[Border], direction: str, amount: float) -> bool:
    """herdr's `resize_focused` (`src/layout.rs`): the split on the pane's edge in
    `direction` (within one cell, overlapping the pane), else the one on the opposite
    edge; `right`/`down` add `amount` to its ratio, `left`/`up` subtract it."""
    orientation = "down" if direction in ("up", "down") else "right"
    opposite = {"up": "down", "down": "up", "left": "right", "right": "left"}[direction]
    border = _edge_split(splits, orientation, pane, direction) or _edge_split(
        splits, orientation, pane, opposite
    )
    if border is None:
        return False
    node = _node_at(root, list(border.path))
    assert isinstance(node, Split)
    ratio = _clamped(node.ratio + (amount if direction in ("down", "right") else -amount))
    changed = abs(ratio - node.ratio) > 1e-9
    node.ratio = ratio
    return changed


def _edge_split(splits: list[Border], orientation: str, pane: Rect, edge: str) -> Border | None:
    def distance(border: Border) -> int:
        at = {"left": pane.x, "right": pane.x + pane.width, "up": pane.y,
              "down": pane.y + pane.height}[edge]  # fmt: skip
        return abs(border.pos - at)

    def overlaps(border: Border) -> bool:
        a = border.area
        if edge in ("left", "right"):
            return a.y < pane.y + pane.height and a.y + a.height > pane.y
        return a.x < pane.x + pane.width and a.x + a.width > pane.x

    near = [b for b in splits if b.direction == orientation and overlaps(b) and distance(b) <= 1]
    return min(near, key=distance, default=None)


_STAT = re.compile(rb"^(\d+) \((.*)\) \S+ (\d+) (\d+)", re.S)


def _hinted_agent(master: int) -> str | None:
    """herdr's agent label from `HERDR_AGENT=<name>` in the environment of the terminal's
    foreground group leader (the first such record counts; a name herdr does not know names
    nothing), `src/platform/mod.rs` parse_agent_env_hint."""
    try:
        with open(f"/proc/{os.tcgetpgrp(master)}/environ", "rb") as handle:
            environ = handle.read()
    except OSError:
        return None
    for record in environ.split(b"\0"):
        if record.startswith(HINT_PREFIX):
            name = record[len(HINT_PREFIX) :].decode(errors="replace").strip().lower()
            return AGENT_LABELS.get(name)
    return None


def _pty_process_info(pane_id: str, shell_pid: int, master: int) -> dict[str, Any]:
    try:
        group: int | None = os.tcgetpgrp(master)
    except OSError:
        group = None
    if not group or group <= 1:
        group = None
    processes: list[dict[str, Any]] = []
    if group is not None and os.path.isdir("/proc"):
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            process = _proc(int(entry), group)
            if process is not None:
                processes.append(process)
    processes.sort(key=lambda p: (p["pid"] != group, p["pid"]))
    alive = _exists(shell_pid)
    return {
        "pane_id": pane_id,
        "shell_pid": shell_pid if alive else None,
        "foreground_process_group_id": group,
        "foreground_processes": processes,
    }


def _proc(pid: int, group: int) -> dict[str, Any] | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = _STAT.match(handle.read())
        if stat is None or int(stat.group(4)) != group:
            return None
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            argv = [a.decode(errors="replace") for a in handle.read().split(b"\0") if a]
    except OSError:
        return None
    process: dict[str, Any] = {"pid": pid, "name": stat.group(2).decode(errors="replace")}
    if argv:
        process.update(argv0=argv[0], argv=argv, cmdline=" ".join(argv))
    with contextlib.suppress(OSError):
        process["cwd"] = os.readlink(f"/proc/{pid}/cwd")
    return process


def _exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def wait_until(probe: Callable[[], Any], what: str, timeout: float = 15.0) -> Any:
    """Poll until probe() is truthy; fail with `what` after timeout seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.02)

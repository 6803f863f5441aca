"""HerdrPaneDriver: every pane operation as requests on herdr's socket API.

Every request names its pane explicitly: an omitted target means the pane focused in the
UI, which may belong to someone else. Known herdr traits handled here:

- `pane.split` cannot run a command, so spawning writes a launch file (argv, env, cwd; mode
  0600) and types one `exec <python> -m cafleet.entrypoints.processes.launch <file>` line into the
  fresh pane's shell; the launcher replaces the shell with the agent, so no shell is left behind and
  the pane closes when the agent exits (herdr closes panes whose process ended).
- The member column is found by layout rectangles, never by the order of pane-id strings
  (`w1:p10` sorts before `w1:p9`).
- `pane.list` carries agent states but no foreground command; `pane()` asks
  `pane.process_info` as well. The monitor's sweep is one `pane.list`, shared by
  `list_panes()` and `agent_states()`; a turn that ended in the active tab is `done` there
  too (FinishedTurns), since herdr says `idle` of it; a pane moved to another workspace is
  listed under the id it had as well (MovedPanes).
- `pane.wait_for_output` (herdr's `src/api/wait.rs`) holds its reply until a line of the
  pane's recent rows matches or the wait times out (`timeout`); its reads are passive, so
  unlike a text `pane.read` they never start the alternate-screen history harvest.
- `agent.prompt` (herdr's `src/app/api/agents.rs`) answers at once and presses Enter 300 ms
  later on the server side; it refuses an agent at a dialog with `agent_blocked`, and a pane
  it sees no agent in, or no longer has, with `agent_not_found` or `agent_not_ready`.

Assumptions about herdr's protocol that could not be checked against a running server are
listed in docs/internals/herdr.md.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from cafleet.adapters.herdr.client import HerdrClient, HerdrRequestFailed, dicts
from cafleet.adapters.herdr.layout import Layout, parse_layout
from cafleet.adapters.herdr.moves import MovedPanes
from cafleet.adapters.herdr.processes import foreground, foreground_argv, identity
from cafleet.adapters.herdr.turns import FinishedTurns
from cafleet.adapters.runtime.launch_module import LAUNCH_MODULE
from cafleet.adapters.runtime.locks import runtime_directory
from cafleet.adapters.runtime.private_files import create_private
from cafleet.application.panes.steps import label_each
from cafleet.application.ports.panes import (
    AgentStates,
    LimitedCaptures,
    PaneDriver,
    PaneLabels,
    PanePresentation,
    ScreenWaits,
)
from cafleet.domain.agents.screen import letters_and_digits
from cafleet.domain.errors import CafleetError, Unavailable
from cafleet.domain.panes import Key, PaneGone, PaneInfo, PromptAnswer, without_escapes
from cafleet.domain.placement import Multiplexer, PaneLocation

KEY_NAMES = {Key.ENTER: "enter", Key.ESCAPE: "esc"}
TEXT_CHUNK_BYTES = 64 * 1024  # keeps every request far below herdr's 1 MiB limit
PASTE_CHUNK_BYTES = 256 * 1024
READ_SOURCE = "recent_unwrapped"
CAPTURE_MARGIN = 64  # rows asked beyond the wanted ones: blank rows below the cursor
MAX_READ_LINES = 1000  # herdr answers at most this many rows of a pane.read
RATIO_TOLERANCE = 0.01
PROMPT_ENTER_SECONDS = 0.35  # herdr presses Enter 0.3 s after typing an agent.prompt
PROMPT_REFUSALS = {
    "agent_blocked": PromptAnswer.BLOCKED,
    "agent_not_found": PromptAnswer.NO_AGENT,
    "agent_not_ready": PromptAnswer.NO_AGENT,
    "invalid_request": PromptAnswer.NO_METHOD,  # an older server without agent.prompt
}


class HerdrPaneDriver(
    PaneDriver, AgentStates, LimitedCaptures, PaneLabels, PanePresentation, ScreenWaits
):
    backend = Multiplexer.HERDR
    capture_limit = MAX_READ_LINES

    def __init__(
        self,
        socket: str,
        *,
        launch_dir: Callable[[], Path] | None = None,
        python: str | None = None,
        client: HerdrClient | None = None,
        prompt_enter_seconds: float = PROMPT_ENTER_SECONDS,
    ) -> None:
        self.socket = socket
        self._client = client or HerdrClient(socket)
        self._launch_dir = launch_dir or (lambda: runtime_directory(os.environ))
        self._python = python or sys.executable
        self._prompt_enter_seconds = prompt_enter_seconds
        self._states: dict[str, str] | None = None  # from the last pane.list, until read
        self._turns = FinishedTurns()
        self._moves = MovedPanes()
        self._no_output_waits = False
        self._lock = threading.Lock()

    # --- spawning --------------------------------------------------------------------

    def spawn(self, beside: str, argv: Sequence[str], env: Mapping[str, str], cwd: str) -> str:
        if len(argv) < 2:
            raise ValueError("an agent command needs at least two arguments")
        target, direction = self.layout(beside).split_target(beside)
        launch = self._write_launch_file(argv, env, cwd)
        try:
            created = self._client.call(
                "pane.split",
                {
                    "target_pane_id": target,
                    "direction": direction,
                    "cwd": cwd,
                    "env": dict(env),
                    "focus": False,
                },
            )
            pane_id = _pane_id_of(created, "pane.split")
        except BaseException:
            launch.unlink(missing_ok=True)
            raise
        try:
            self._client.call(
                "pane.send_input",
                {"pane_id": pane_id, "text": launch_line(self._python, launch), "keys": ["enter"]},
            )
        except CafleetError:
            launch.unlink(missing_ok=True)
            with contextlib.suppress(CafleetError):
                self._client.call("pane.close", {"pane_id": pane_id})
            raise
        with contextlib.suppress(CafleetError):  # cosmetic: never fail a spawn over layout
            self._equalize(self.layout(pane_id), beside)
        return pane_id

    def _write_launch_file(self, argv: Sequence[str], env: Mapping[str, str], cwd: str) -> Path:
        try:
            directory = self._launch_dir()
            path = directory / f"launch-{uuid.uuid4().hex}.json"
            create_private(path, json.dumps({"argv": list(argv), "env": dict(env), "cwd": cwd}))
        except OSError as exc:
            raise Unavailable(f"cannot write the herdr launch file: {exc}") from None
        return path

    # --- typing ----------------------------------------------------------------------

    def type_text(self, pane_id: str, text: str) -> None:
        for chunk in _chunks(text, TEXT_CHUNK_BYTES):
            self._client.call("pane.send_text", {"pane_id": pane_id, "text": chunk})

    def paste_text(self, pane_id: str, text: str) -> None:
        # herdr brackets `text` only when the application enabled bracketed paste
        for chunk in _chunks(text, PASTE_CHUNK_BYTES) if text else [""]:
            self._client.call("pane.send_input", {"pane_id": pane_id, "text": chunk, "keys": []})

    def send_keys(self, pane_id: str, *keys: Key) -> None:
        if keys:
            names = [KEY_NAMES[key] for key in keys]
            self._client.call("pane.send_keys", {"pane_id": pane_id, "keys": names})

    def prompt_agent(self, pane_id: str, text: str) -> PromptAnswer:
        """herdr's `agent.prompt` for the agent it detected in the pane: the text (bracketed
        when the agent asked for that), then Enter, both written by herdr."""
        try:
            self._client.call("agent.prompt", {"target": pane_id, "text": text})
        except HerdrRequestFailed as exc:
            refusal = PROMPT_REFUSALS.get(exc.code)
            if refusal is None:
                raise
            return refusal
        time.sleep(self._prompt_enter_seconds)  # until herdr has pressed Enter
        return PromptAnswer.TAKEN

    # --- presentation ----------------------------------------------------------------

    def label(self, pane_id: str, label: str) -> None:
        self._client.call("pane.rename", {"pane_id": pane_id, "label": label})

    def label_all(self, titles: Mapping[str, str]) -> dict[str, CafleetError]:
        return label_each(self.label, titles)  # herdr renames one pane per request

    def notify(self, title: str, body: str) -> None:
        self._client.call("notification.show", {"title": title, "body": body, "sound": "request"})

    # --- reading ---------------------------------------------------------------------

    def wait_for_text(self, pane_id: str, texts: Sequence[str], lines: int, timeout: float) -> bool:
        pattern = loose_pattern(texts)
        if pattern is None or self._no_output_waits:
            time.sleep(timeout)
            return False
        params = {
            "pane_id": pane_id,
            "source": READ_SOURCE,
            "lines": min(max(lines, 1), MAX_READ_LINES),
            "match": {"type": "regex", "value": pattern},
            "timeout_ms": max(1, round(timeout * 1000)),
        }
        try:
            self._client.call("pane.wait_for_output", params)
        except HerdrRequestFailed as exc:
            if exc.code == "timeout":
                return False
            if exc.code != "invalid_request":
                raise
            self._no_output_waits = True  # an older server: wait here instead
            time.sleep(timeout)
            return False
        return True

    def capture(self, pane_id: str, lines: int, *, ansi: bool = False) -> str:
        return self.capture_cut(pane_id, lines, ansi=ansi)[0]

    def capture_cut(self, pane_id: str, lines: int, *, ansi: bool = False) -> tuple[str, bool]:
        """The last `lines` lines, read as ANSI and stripped here for plain text, and whether
        herdr's cap left out older ones: herdr answers a *text* read of an idle
        alternate-screen agent (OpenCode, Codex) only after scrolling its UI with wheel
        events to harvest history, up to ~20 s. herdr counts rendered rows (a wrapped line is
        several) and drops trailing blank ones, so fewer lines than asked means nothing
        unless it says `truncated`; it answers at most MAX_READ_LINES rows."""
        if lines <= 0:
            self._read(pane_id, 1)  # still reports a missing pane
            return "", False
        ask = min(lines + CAPTURE_MARGIN, MAX_READ_LINES)
        while True:
            text, truncated = self._read(pane_id, ask)
            rows = text.replace("\r\n", "\n").split("\n")
            if not ansi:
                rows = [without_escapes(row).rstrip() for row in rows]
            while rows and not without_escapes(rows[-1]).strip():
                rows.pop()
            if len(rows) >= lines or not truncated or ask >= MAX_READ_LINES:
                return "\n".join(rows[-lines:]), truncated and len(rows) < lines
            ask = min(ask * 2, MAX_READ_LINES)

    def _read(self, pane_id: str, lines: int) -> tuple[str, bool]:
        """(text, truncated) of `lines` recent rows in herdr's ANSI format."""
        result = self._client.call(
            "pane.read",
            {"pane_id": pane_id, "source": READ_SOURCE, "lines": lines, "format": "ansi"},
        )
        read = result.get("read")
        read = read if isinstance(read, dict) else result
        text = read.get("text")
        return (text if isinstance(text, str) else ""), read.get("truncated") is True

    def list_panes(self) -> dict[str, PaneInfo]:
        result = self._client.call("pane.list", {})
        panes, states = pane_listing(result)
        self._moves.aliased(result, panes, states)
        with self._lock:
            self._states = self._turns.read(states)
        return panes

    def agent_states(self) -> dict[str, str]:
        """The agent state of every pane, from the last list_panes() (read once), else from
        a fresh listing: a monitor tick makes one `pane.list` for both."""
        with self._lock:
            states, self._states = self._states, None
        if states is None:
            self.list_panes()
            with self._lock:
                states, self._states = self._states, None
        return dict(states or {})

    def pane(self, pane_id: str) -> PaneInfo | None:
        try:
            raw = _pane_of(self._client.call("pane.get", {"pane_id": pane_id}), "pane.get")
            try:
                process = self._client.call("pane.process_info", {"pane_id": pane_id})
            except HerdrRequestFailed:
                process = {}  # the server cannot tell what runs in the pane
        except PaneGone:
            return None
        dead, command = foreground(process)
        return PaneInfo(
            pane_id,
            dead,
            command,
            _agent(raw),
            foreground_argv(process),
            identity(raw, process),
            _label(raw),
        )

    def claim(self, pane_id: str) -> str:
        """herdr has no pane options to mark a pane with; its terminal and the pid of the
        process it started tell it from any pane opened later (herdr closes a pane whose
        process ended, so a live pane never shares that pid with another)."""
        info = self.pane(pane_id)
        if info is None or info.identity is None:
            raise PaneGone(pane_id)
        return info.identity

    def kill(self, pane_id: str) -> bool:
        try:
            self._client.call("pane.close", {"pane_id": pane_id})
        except PaneGone:
            return False
        return True

    def locate(self, pane_id: str) -> PaneLocation:
        """Workspace, tab and pane ids of the calling pane (always with caller_pane_id)."""
        raw = _pane_of(
            self._client.call("pane.current", {"caller_pane_id": pane_id}), "pane.current"
        )
        workspace, tab = raw.get("workspace_id"), raw.get("tab_id")
        found = raw.get("pane_id") or pane_id
        if not isinstance(workspace, str) or not isinstance(tab, str):
            raise Unavailable(f"herdr pane.current failed: no workspace or tab for {pane_id}")
        return PaneLocation(Multiplexer.HERDR, workspace, tab, str(found), self.socket)

    # --- layout ----------------------------------------------------------------------

    def layout(self, pane_id: str) -> Layout:
        result = self._client.call("pane.layout", {"pane_id": pane_id})
        raw = result.get("layout")
        return parse_layout(raw if isinstance(raw, dict) else result)

    def relayout(self, window_id: str) -> None:
        """Equalize the member column of a tab (the Director is its left-most pane)."""
        with contextlib.suppress(CafleetError):
            listed = self._client.call("pane.list", {})
            member = next(
                (p["pane_id"] for p in dicts(listed.get("panes")) if p.get("tab_id") == window_id),
                None,
            )
            if not isinstance(member, str):
                return
            layout = self.layout(member)
            if not layout.panes:
                return
            director = min(layout.panes, key=lambda p: (p.rect.x, p.rect.y)).pane_id
            self._equalize(layout, director)

    def _equalize(self, layout: Layout, director: str) -> None:
        """Give every pane of the member column the same height: each `down` split of the
        column gets the share of the column's panes above its divider, set exactly with
        `layout.set_split_ratio` (herdr's `pane.resize` moves the split on the pane's edge
        in the direction asked, which is not a ratio of our choosing). Never moves the
        focus. Best effort."""
        column = layout.member_column(director)
        if len(column) < 2:
            return
        left, right = column[0].rect.x, max(p.rect.right for p in column)
        for split in layout.splits:
            if (
                split.direction != "down"
                or split.path is None
                or split.rect.x < left
                or split.rect.right > right
            ):
                continue
            inside = [p for p in column if split.rect.y <= p.rect.y < split.rect.bottom]
            above = [p for p in inside if p.rect.y < split.position]
            if len(inside) < 2 or not above:
                continue
            ratio = len(above) / len(inside)
            if abs(ratio - split.ratio) < RATIO_TOLERANCE:
                continue
            self._client.call(
                "layout.set_split_ratio",
                {"pane_id": inside[0].pane_id, "path": list(split.path), "ratio": round(ratio, 4)},
            )


def loose_pattern(texts: Sequence[str]) -> str | None:
    """A regex (the syntax herdr's and Python's engines share) for a line showing any of
    `texts` as `letters_and_digits` compares them: any case, and anything but letters and
    digits allowed between their characters. None when no text has a letter or digit."""
    words = [letters_and_digits(text) for text in texts]
    branches = [r"[\W_]*".join(word) for word in words if word]
    return f"(?i)(?:{'|'.join(branches)})" if branches else None


def launch_line(python: str, launch_file: Path) -> str:
    """The one line typed into a fresh pane's shell to start the agent."""
    return f"exec {_quote(python)} -m {LAUNCH_MODULE} {_quote(str(launch_file))}"


def pane_listing(result: Mapping[str, Any]) -> tuple[dict[str, PaneInfo], dict[str, str]]:
    """A `pane.list` result: every pane (herdr panes are never dead) and each agent state."""
    panes: dict[str, PaneInfo] = {}
    states: dict[str, str] = {}
    for raw in dicts(result.get("panes")):
        pane_id = raw.get("pane_id")
        if not isinstance(pane_id, str) or not pane_id:
            continue
        panes[pane_id] = PaneInfo(pane_id, False, "", _agent(raw), title=_label(raw))
        status = raw.get("agent_status")
        if isinstance(status, str):
            states[pane_id] = status
    return panes, states


def _label(raw: Mapping[str, Any]) -> str | None:
    label = raw.get("label")
    return label if isinstance(label, str) and label else None


def _agent(raw: Mapping[str, Any]) -> str | None:
    """herdr's detected agent label; some versions nest it as {"name": ...}."""
    agent = raw.get("agent")
    if isinstance(agent, dict):
        agent = agent.get("name") or agent.get("kind")
    return agent if isinstance(agent, str) and agent else None


def _pane_of(result: Mapping[str, Any], method: str) -> dict[str, Any]:
    pane = result.get("pane")
    if not isinstance(pane, dict):
        raise Unavailable(f"herdr {method} failed: the reply has no pane")
    return pane


def _pane_id_of(result: Mapping[str, Any], method: str) -> str:
    pane_id = _pane_of(result, method).get("pane_id")
    if not isinstance(pane_id, str) or not pane_id:
        raise Unavailable(f"herdr {method} failed: the reply has no pane id")
    return pane_id


def _quote(text: str) -> str:
    """POSIX single quotes (a `'` inside becomes `'"'"'`)."""
    return "'" + text.replace("'", "'\"'\"'") + "'"


def _chunks(text: str, limit: int) -> Iterator[str]:
    """Pieces of at most `limit` UTF-8 bytes, never splitting a character."""
    piece: list[str] = []
    size = 0
    for char in text:
        width = len(char.encode())
        if piece and size + width > limit:
            yield "".join(piece)
            piece, size = [], 0
        piece.append(char)
        size += width
    if piece:
        yield "".join(piece)

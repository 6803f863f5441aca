"""An in-memory multiplexer: panes with argv, env, cwd, a foreground command and a log
of everything typed into them. Shipped for tests and offline demos."""

from __future__ import annotations

import itertools
import threading
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace

from cafleet.application.panes.steps import OneByOne, label_each
from cafleet.application.ports.panes import (
    PaneBatches,
    PaneDriver,
    PaneDrivers,
    PaneLabels,
    PaneLocks,
    Typing,
)
from cafleet.domain.errors import CafleetError, Unavailable
from cafleet.domain.panes import (
    Key,
    PaneElsewhere,
    PaneGone,
    PaneInfo,
    PromptAnswer,
    ServerGone,
    without_escapes,
)
from cafleet.domain.placement import Multiplexer

Typed = tuple[str, str]  # ("text" | "paste" | "key", value)


@dataclass
class FakePane:
    pane_id: str
    window_id: str
    argv: tuple[str, ...]
    env: dict[str, str]
    cwd: str
    command: str
    dead: bool = False
    typed: list[Typed] = field(default_factory=list)
    screen: list[str] = field(default_factory=list)
    detected: str | None = None  # the agent a herdr server detected in the pane
    blocked: bool = False  # herdr's state for it: waiting at an approval or question dialog
    marker: str = ""  # set by claim(), like tmux's pane option
    title: str | None = None  # set by label(), like tmux's @cafleet-title
    # the mark of a composer drawn below `screen` with the text typed since the last Enter
    # (Claude Code's `❯ TEXT`); None: no composer is drawn
    composer: str | None = None
    # a dialog drawn in the composer's place while it is up; keys sent then reach the dialog
    dialog: list[str] = field(default_factory=list)
    into_dialog: list[Typed] = field(default_factory=list)  # what reached a dialog

    def submitted(self) -> list[str]:
        """What an agent would have received as turns: text up to each Enter."""
        turns, pending = [], ""
        for kind, value in self.typed:
            if kind == "key" and value == Key.ENTER.value:
                turns.append(pending)
                pending = ""
            elif kind in ("text", "paste"):
                pending += value
        return turns

    def composing(self) -> str:
        """The text typed since the last Enter: what the composer shows."""
        pending = ""
        for kind, value in self.typed:
            if kind == "key" and value == Key.ENTER.value:
                pending = ""
            elif kind in ("text", "paste"):
                pending += value
        return pending

    def rows(self) -> list[str]:
        """The screen as captured: the rows above, then the dialog or the composer."""
        if self.dialog:
            return [*self.screen, *self.dialog]
        if self.composer is None:
            return list(self.screen)
        return [*self.screen, f"{self.composer} {self.composing()}".replace("\n", " ")]

    def take(self, typed: Typed) -> None:
        (self.into_dialog if self.dialog else self.typed).append(typed)


class FakePaneDriver(PaneDriver, PaneBatches, PaneLabels):
    def __init__(self, backend: Multiplexer = Multiplexer.TMUX) -> None:
        self.backend = backend
        self.panes: dict[str, FakePane] = {}
        self.unreachable: str | None = None  # set to a reason to simulate a stalled server
        self.server_gone = False  # set to simulate a server that no longer runs
        self.on_submit: Callable[[FakePane, str], None] | None = None
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self.calls = 0
        self.batches: list[str] = []  # each batched step asked, by name, like one tmux call
        self._epoch = uuid.uuid4().hex  # what tells one server's panes from a later one's

    def restart(self) -> None:
        """The server ends and a new one starts on the same socket: every pane is gone, and
        new panes are numbered from the start again, reusing the old ids."""
        self.panes.clear()
        self._ids = itertools.count(1)
        self._epoch = uuid.uuid4().hex

    def add_pane(
        self,
        command: str,
        window_id: str = "@0",
        pane_id: str | None = None,
        argv: Sequence[str] = (),
    ) -> FakePane:
        pane_id = pane_id or f"%{next(self._ids)}"
        pane = FakePane(pane_id, window_id, tuple(argv) or (command, "--fake"), {}, "/", command)
        self.panes[pane_id] = pane
        return pane

    def spawn(self, beside: str, argv: Sequence[str], env: Mapping[str, str], cwd: str) -> str:
        if len(argv) < 2:
            raise ValueError("a one-element command would run through a shell; pass >= 2 args")
        anchor = self._existing(beside)
        pane = self.add_pane(argv[0].rsplit("/", 1)[-1], anchor.window_id, argv=argv)
        pane.env, pane.cwd = dict(env), cwd
        return pane.pane_id

    def type_text(self, pane_id: str, text: str) -> None:
        self._existing(pane_id).take(("text", text))

    def paste_text(self, pane_id: str, text: str) -> None:
        self._existing(pane_id).take(("paste", text))

    def send_keys(self, pane_id: str, *keys: Key) -> None:
        pane = self._existing(pane_id)
        for key in keys:
            if pane.dialog:
                pane.take(("key", key.value))
                continue
            pane.typed.append(("key", key.value))
            if key is Key.ENTER and self.on_submit is not None:
                self.on_submit(pane, pane.submitted()[-1])

    def prompt_agent(self, pane_id: str, text: str) -> PromptAnswer:
        """As herdr's `agent.prompt` where the backend is herdr; tmux has no such thing."""
        if self.backend is not Multiplexer.HERDR:
            return PromptAnswer.NO_PROMPT
        self._reach()
        pane = self.panes.get(pane_id)
        if pane is None or pane.dead or pane.detected is None:
            return PromptAnswer.NO_AGENT
        if pane.blocked:
            return PromptAnswer.BLOCKED
        self.paste_text(pane_id, text)
        self.send_keys(pane_id, Key.ENTER)
        return PromptAnswer.TAKEN

    def capture(self, pane_id: str, lines: int, *, ansi: bool = False) -> str:
        rows = self._existing(pane_id).rows()
        if not ansi:
            rows = [without_escapes(row) for row in rows]
        while rows and not rows[-1].strip():
            rows.pop()
        return "\n".join(rows[-lines:])

    def list_panes(self) -> dict[str, PaneInfo]:
        self._reach()
        return {p.pane_id: self._info(p) for p in self.panes.values()}

    def pane(self, pane_id: str) -> PaneInfo | None:
        """As listed, with the argv of what runs in front: the pane's own."""
        info = self.list_panes().get(pane_id)
        pane = self.panes.get(pane_id)
        if info is None or pane is None or info.dead:
            return info
        return replace(info, argv=pane.argv)

    # the batched steps: pane by pane underneath, each recorded as one call
    def panes_of(self, pane_ids: Sequence[str]) -> dict[str, PaneInfo | None]:
        self.batches.append("panes_of")
        return OneByOne(self).panes_of(pane_ids)

    def captures(self, pane_ids: Sequence[str], lines: int) -> dict[str, str | CafleetError]:
        self.batches.append("captures")
        return OneByOne(self).captures(pane_ids, lines)

    def write_all(self, typings: Sequence[Typing]) -> dict[str, CafleetError]:
        self.batches.append("write_all")
        return OneByOne(self).write_all(typings)

    def press_all(self, pane_ids: Sequence[str], key: Key) -> dict[str, CafleetError]:
        self.batches.append("press_all")
        return OneByOne(self).press_all(pane_ids, key)

    def claim(self, pane_id: str) -> str:
        pane = self._existing(pane_id)
        pane.marker = pane.marker or uuid.uuid4().hex
        return self._identity(pane)

    def label(self, pane_id: str, label: str) -> None:
        self._existing(pane_id).title = label

    def label_all(self, titles: Mapping[str, str]) -> dict[str, CafleetError]:
        self.batches.append("label_all")
        return label_each(self.label, titles)

    def _info(self, pane: FakePane) -> PaneInfo:
        identity = self._identity(pane)
        return PaneInfo(pane.pane_id, pane.dead, pane.command, identity=identity, title=pane.title)

    def _identity(self, pane: FakePane) -> str:
        return f"{self._epoch}:{pane.pane_id}:{pane.marker}"

    def kill(self, pane_id: str) -> bool:
        self._reach()
        return self.panes.pop(pane_id, None) is not None

    def relayout(self, window_id: str) -> None:
        self._reach()

    def _reach(self) -> None:
        with self._lock:
            self.calls += 1
        if self.server_gone:
            raise ServerGone(f"cannot reach the {self.backend.value} server: no server running")
        if self.unreachable is not None:
            raise Unavailable(f"cannot reach the {self.backend.value} server: {self.unreachable}")

    def _existing(self, pane_id: str) -> FakePane:
        self._reach()
        pane = self.panes.get(pane_id)
        if pane is None or pane.dead:
            raise PaneGone(pane_id)
        return pane


class FakePaneDrivers(PaneDrivers):
    """One fake server per (backend, socket), created on first use."""

    def __init__(self, here: str = "here") -> None:
        self.servers: dict[tuple[Multiplexer, str | None], FakePaneDriver] = {}
        self.here = here  # this process's host: panes recorded on any other are refused

    def __call__(
        self, backend: Multiplexer, socket: str | None, host: str | None = None
    ) -> FakePaneDriver:
        if not self.reaches(host):
            raise PaneElsewhere(str(host), self.here)
        return self.servers.setdefault((backend, socket), FakePaneDriver(backend))

    def reaches(self, host: str | None) -> bool:
        return host is None or host == self.here


class ThreadLocks(PaneLocks):
    """In-process per-key locks with the same timeout contract as the file locks."""

    def __init__(self) -> None:
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    @contextmanager
    def hold(self, key: str, timeout: float) -> Iterator[None]:
        with self._guard:
            lock = self._locks.setdefault(key, threading.Lock())
        if not lock.acquire(timeout=timeout):
            raise TimeoutError(key)
        try:
            yield
        finally:
            lock.release()

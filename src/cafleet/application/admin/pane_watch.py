"""Live panes for the admin event stream: each watched pane read once per tick, however many
pages show it.

A stream joins with the agents it shows and leaves when it ends. The first watcher of a pane
starts its looker, a thread that captures the pane every tick; the last one to leave stops
it, so nothing is read while nobody watches. Every watcher reads the same frames: N pages
on one member cost the captures of one. A watcher is handed a pane's frame once when its
watch starts (as soon as the first capture is in) and then only when the capture changed.

A pane that cannot be read (gone, not placed, refused, on an unreachable host) is a frame
with a one-line `error` instead of a screen, so the stream itself never breaks.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Final

from cafleet.application.members.panes import MemberPanes
from cafleet.application.ports.system import Clock
from cafleet.domain.errors import CafleetError, Unavailable

TICK_SECONDS: Final = 0.5  # the event stream's own cadence
PANE_LINES: Final = 60  # rows captured per look: a screen and a little history
MAX_PANES: Final = 128  # distinct panes looked at once, over every stream
TOO_MANY_PANES = "too many panes watched at once; close a grid or drawer elsewhere and retry"

PaneKey = tuple[int, int]  # (fleet_id, agent_id)
# (fleet_id, agent_id) -> the pane's screen with its ANSI escapes; a CafleetError when unreadable
PaneCapture = Callable[[int, int], str]


def screens_of(panes: MemberPanes, lines: int = PANE_LINES) -> PaneCapture:
    """`member capture --ansi` of a placed agent (through its host's relay when elsewhere)."""

    def capture(fleet_id: int, agent_id: int) -> str:
        return panes.capture(fleet_id, agent_id, lines, ansi=True).content

    return capture


@dataclass(frozen=True)
class PaneFrame:
    """What one look at a pane found: its screen, or why there is none."""

    fleet_id: int
    agent_id: int
    ansi: str
    captured_at: datetime
    error: str | None = None

    def shows_the_same(self, other: PaneFrame) -> bool:
        return (self.ansi, self.error) == (other.ansi, other.error)


@dataclass
class _Pane:
    watchers: int = 0
    frame: PaneFrame | None = None
    version: int = 0  # raised whenever the frame shows something else
    stop: threading.Event = field(default_factory=threading.Event)


@dataclass(eq=False)
class Watcher:
    """One stream's watch: its panes and the version of each it was last handed."""

    keys: tuple[PaneKey, ...]
    handed: dict[PaneKey, int] = field(default_factory=dict)


class PaneWatch:
    """The hub. `loop=False` starts no looker threads: a test drives `tick()` itself."""

    def __init__(
        self,
        capture: PaneCapture,
        clock: Clock,
        *,
        tick_seconds: float = TICK_SECONDS,
        max_panes: int = MAX_PANES,
        loop: bool = True,
    ) -> None:
        self._capture = capture
        self._clock = clock
        self._tick = tick_seconds
        self._max_panes = max_panes
        self._loop = loop
        self._lock = threading.Lock()
        self._panes: dict[PaneKey, _Pane] = {}

    def join(self, fleet_id: int, agent_ids: Iterable[int]) -> Watcher:
        """Starts watching these agents' panes (each once, in the order given)."""
        keys = tuple(dict.fromkeys((fleet_id, agent_id) for agent_id in agent_ids))
        started: list[tuple[PaneKey, _Pane]] = []
        with self._lock:
            new = [key for key in keys if key not in self._panes]
            if len(self._panes) + len(new) > self._max_panes:
                raise Unavailable(TOO_MANY_PANES)
            for key in keys:
                pane = self._panes.get(key)
                if pane is None:
                    pane = self._panes[key] = _Pane()
                    started.append((key, pane))
                pane.watchers += 1
        if self._loop:
            for key, pane in started:
                threading.Thread(
                    target=self._look_every_tick,
                    args=(key, pane),
                    name=f"pane-watch-{key[1]}",
                    daemon=True,
                ).start()
        return Watcher(keys)

    def leave(self, watcher: Watcher) -> None:
        """Ends a watch (once; a second call does nothing). A pane nobody watches any more is
        dropped and its looker stops."""
        with self._lock:
            keys, watcher.keys = watcher.keys, ()
            for key in keys:
                pane = self._panes.get(key)
                if pane is None:
                    continue
                pane.watchers -= 1
                if pane.watchers == 0:
                    del self._panes[key]
                    pane.stop.set()

    def fresh(self, watcher: Watcher) -> list[PaneFrame]:
        """The watcher's frames it was not handed yet, in its watch's order."""
        out = []
        with self._lock:
            for key in watcher.keys:
                pane = self._panes.get(key)
                if pane is None or pane.frame is None:
                    continue
                if watcher.handed.get(key) != pane.version:
                    watcher.handed[key] = pane.version
                    out.append(pane.frame)
        return out

    def watched(self) -> int:
        """How many panes are looked at now."""
        with self._lock:
            return len(self._panes)

    def tick(self) -> None:
        """One look at every watched pane: what each looker does once per tick."""
        with self._lock:
            panes = list(self._panes.items())
        for key, pane in panes:
            self._look(key, pane)

    def _look_every_tick(self, key: PaneKey, pane: _Pane) -> None:
        # real time, not the Clock port: the cadence of a running server, stoppable at once
        due = time.monotonic()
        while not pane.stop.is_set():
            self._look(key, pane)
            due = max(due + self._tick, time.monotonic())
            pane.stop.wait(due - time.monotonic())

    def _look(self, key: PaneKey, pane: _Pane) -> None:
        fleet_id, agent_id = key
        try:
            screen, error = self._capture(fleet_id, agent_id), None
        except CafleetError as exc:
            screen, error = "", _one_line(exc.message)
        except Exception as exc:  # a looker must survive whatever its pane does
            screen, error = "", f"internal error: {type(exc).__name__}"
        frame = PaneFrame(fleet_id, agent_id, screen, self._clock.now(), error)
        with self._lock:
            if pane.frame is None or not pane.frame.shows_the_same(frame):
                pane.frame = frame
                pane.version += 1


def _one_line(text: str) -> str:
    return (text.strip().splitlines() or ["unreadable pane"])[0]

"""The panes: what drives a multiplexer (tmux, herdr), locks a pane, and reads agent states."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol, runtime_checkable

from cafleet.domain.errors import CafleetError
from cafleet.domain.panes import Key, PaneInfo, PromptAnswer
from cafleet.domain.placement import Multiplexer, PaneLocation


class PaneDriver(Protocol):
    """Mechanics of one multiplexer server; no message formatting, no policy.

    Pane ids are opaque strings. A missing pane raises PaneGone; any other failure
    raises an Unavailable error with a one-line message.
    """

    backend: Multiplexer

    def spawn(self, beside: str, argv: Sequence[str], env: Mapping[str, str], cwd: str) -> str:
        """Open a pane next to `beside` running argv directly (no shell); focus stays."""
        ...

    def type_text(self, pane_id: str, text: str) -> None:
        """Type one line literally, without pressing Enter."""
        ...

    def paste_text(self, pane_id: str, text: str) -> None:
        """Paste text as one bracketed paste (line breaks kept), without pressing Enter."""
        ...

    def send_keys(self, pane_id: str, *keys: Key) -> None: ...
    def prompt_agent(self, pane_id: str, text: str) -> PromptAnswer:
        """Have the multiplexer itself type `text` into the agent it detected in the pane
        and press Enter; returns once Enter is pressed. NO_PROMPT where the multiplexer has
        no such request; nothing is typed unless the answer is TAKEN."""
        ...

    def capture(self, pane_id: str, lines: int, *, ansi: bool = False) -> str:
        """The last `lines` lines of the pane, trailing blank rows trimmed."""
        ...

    def list_panes(self) -> dict[str, PaneInfo]:
        """Every pane of the server in one call."""
        ...

    def pane(self, pane_id: str) -> PaneInfo | None:
        """One pane, or None when it no longer exists; always with its `identity`."""
        ...

    def claim(self, pane_id: str) -> str:
        """Mark the pane as CAFleet's where the multiplexer allows it (kept if already
        marked) and return its identity as `pane()` reports it from now on: something no
        pane the server (or a later server on the same socket) opens afterwards can report."""
        ...

    def kill(self, pane_id: str) -> bool:
        """Close the pane; False when it was already gone."""
        ...

    def relayout(self, window_id: str) -> None:
        """Re-apply the fleet layout (Director left, members stacked right); best effort."""
        ...


class PaneDrivers(Protocol):
    """The driver for the server a placement recorded (backend, socket and host)."""

    def __call__(
        self, backend: Multiplexer, socket: str | None, host: str | None = None
    ) -> PaneDriver:
        """Raises PaneElsewhere for a host other than this one (None: this one)."""
        ...

    def reaches(self, host: str | None) -> bool:
        """Whether a pane recorded on `host` is on this machine (None: recorded before
        hosts were, so taken to be)."""
        ...


class PaneLocks(Protocol):
    """Exclusive per-pane locks so two processes never interleave keystrokes in one pane."""

    def hold(self, key: str, timeout: float) -> AbstractContextManager[None]:
        """Hold the lock for key; raises TimeoutError after timeout seconds."""
        ...


@runtime_checkable
class AgentStates(Protocol):
    """Optional driver capability: the agent state a multiplexer detects in each pane
    (idle, working, blocked, done, unknown). Only herdr has it."""

    def agent_states(self) -> dict[str, str]: ...


@runtime_checkable
class ScreenWaits(Protocol):
    """Optional driver capability: the multiplexer watches a pane's screen itself and
    answers once a line shows a text, so a caller waiting for one neither polls captures
    nor sleeps past it. Only herdr has it (`pane.wait_for_output`)."""

    def wait_for_text(self, pane_id: str, texts: Sequence[str], lines: int, timeout: float) -> bool:
        """True as soon as one of the pane's last `lines` lines shows one of `texts`,
        compared as `letters_and_digits` does; False when `timeout` seconds pass first.
        Raises PaneGone for a missing pane."""
        ...


@dataclass(frozen=True)
class Typing:
    """Text for one pane: pasted (bracketed, line breaks kept) or typed as literal keys."""

    pane_id: str
    text: str
    paste: bool


@runtime_checkable
class PaneBatches(Protocol):
    """Optional driver capability: the keystroke steps for many panes in a few multiplexer
    calls. Each step answers per pane: a pane that fails never stops the others. Without it,
    the same steps run pane by pane."""

    def panes_of(self, pane_ids: Sequence[str]) -> dict[str, PaneInfo | None]:
        """Each pane as `pane()` reports it (None: gone), from one listing of the server."""
        ...

    def captures(self, pane_ids: Sequence[str], lines: int) -> dict[str, str | CafleetError]:
        """Each pane's last `lines` lines as `capture()` gives them, or why not."""
        ...

    def write_all(self, typings: Sequence[Typing]) -> dict[str, CafleetError]:
        """Type or paste each text into its pane, no Enter; the panes that failed, and why."""
        ...

    def press_all(self, pane_ids: Sequence[str], key: Key) -> dict[str, CafleetError]:
        """Press `key` in each pane; the panes that failed, and why."""
        ...


@runtime_checkable
class LimitedCaptures(Protocol):
    """Optional driver capability: a multiplexer that reads at most `capture_limit` rows of
    a pane at once (herdr), and says when that left out older lines a capture asked for."""

    @property
    def capture_limit(self) -> int: ...

    def capture_cut(self, pane_id: str, lines: int, *, ansi: bool = False) -> tuple[str, bool]:
        """What `capture` gives, and whether older lines that were asked for (and that the
        pane has) were left out."""
        ...


@runtime_checkable
class PaneLabels(Protocol):
    """Optional driver capability: a pane's title where the multiplexer shows it (tmux's pane
    border, herdr's sidebar and border). Cosmetic: callers never fail over a refusal."""

    def label(self, pane_id: str, label: str) -> None:
        """Title the pane; a later call replaces the title."""
        ...

    def label_all(self, titles: Mapping[str, str]) -> dict[str, CafleetError]:
        """Title each pane (pane id -> title), in as few calls as the multiplexer allows;
        the panes that failed, and why."""
        ...


@runtime_checkable
class PanePresentation(Protocol):
    """Optional driver capability: asking the person beside the panes to look. Only herdr
    has it; it is cosmetic, so callers never fail over a refusal."""

    def notify(self, title: str, body: str) -> None:
        """Ask the person to look (a notification with herdr's `request` sound)."""
        ...


@dataclass(frozen=True)
class FeedReading:
    """What a multiplexer's event feed knows of one server: its panes (their `title` None: a
    feed pushes states, not titles), the agent state of each watched pane and when that
    state was last seen to change."""

    panes: Mapping[str, PaneInfo]
    states: Mapping[str, str]
    since: Mapping[str, datetime]


class AgentStateFeed(Protocol):
    """Agent states pushed by a multiplexer server (herdr's event subscription), kept by a
    background reader: reading it never waits for the server."""

    def reading(self, watched: Collection[str]) -> FeedReading | None:
        """The latest reading covering the `watched` panes (which also become the panes
        followed from now on); None while the feed is not subscribed, or does not follow
        every watched pane yet: poll the server instead."""
        ...

    def close(self) -> None: ...


class AgentStateFeeds(Protocol):
    """The feed of the server a placement recorded; None for a multiplexer without one."""

    def __call__(self, backend: Multiplexer, socket: str | None) -> AgentStateFeed | None: ...
    def close(self) -> None:
        """Stop every feed opened so far."""
        ...


class PaneLocator(Protocol):
    """Finds the pane the calling process runs in (the would-be Director's pane)."""

    def current_pane(self) -> PaneLocation: ...

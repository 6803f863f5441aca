"""Closing member panes: ask the agent to /exit, wait, and kill what does not leave.

The exit is the user's request, so a question the agent asks before it leaves (Claude Code
asks whether to stop its background work) is answered with the key that confirms the exit,
read from the screen under the pane's send lock; any other dialog is never answered.

Shared by `member delete` (one pane) and `fleet delete` (every member pane at once).
The Director's pane is never handed to this module.

Nothing is closed before the pane is checked to be the member's: a pane whose identity
differs from the recorded one took the id later (its server restarted) and is left alone
(NOT_OURS). A placement recorded without an identity (before migration 0005) has only the
agent check to go by, so its pane is closed only while it runs the agent (or is dead).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from enum import StrEnum
from typing import TYPE_CHECKING

from cafleet.application.ports.panes import PaneDrivers
from cafleet.application.ports.system import Clock
from cafleet.domain.agents.screen import EXIT_QUESTION_ROWS
from cafleet.domain.delivery import BEFORE_ENTER, DeliveryState, SkipReason
from cafleet.domain.errors import CafleetError
from cafleet.domain.panes import PaneInfo, ours
from cafleet.domain.placement import PushTarget

if TYPE_CHECKING:  # the fleet service imports this module for `Closing`: not the sender
    from cafleet.application.panes.keystrokes import KeystrokeSender

POLL_SECONDS = 0.5
TAIL_LINES = 80
MAX_PARALLEL = 8


class Closing(StrEnum):
    GONE = "gone"  # already gone before anything was typed
    CLOSED = "closed"  # left after /exit
    KILLED = "killed"  # killed on request (--force)
    KILLED_NOT_AGENT = "killed-not-agent"  # the pane did not run the agent: never typed into
    KILLED_AT_DIALOG = "killed-at-dialog"  # a dialog was on screen: /exit was never typed
    KILLED_AFTER_TIMEOUT = "killed-after-timeout"
    FAILED = "failed"  # could not be killed
    NOT_OURS = "not-ours"  # another pane has the id now (or, unrecorded, runs no agent): untouched


@dataclass(frozen=True)
class PaneClosing:
    target: PushTarget
    status: Closing
    detail: str | None = None  # the foreground command, the dialog, the kill error
    tail: str | None = None  # the last screen lines of a pane that ignored /exit


class PaneTeardown:
    def __init__(self, keystrokes: KeystrokeSender, drivers: PaneDrivers, clock: Clock) -> None:
        self._keystrokes = keystrokes
        self._drivers = drivers
        self._clock = clock

    def force(self, target: PushTarget) -> PaneClosing:
        return self._kill(target, Closing.KILLED)

    def graceful(self, targets: list[PushTarget], timeout: float) -> list[PaneClosing]:
        """Type /exit into every pane at once, wait up to timeout, kill the rest."""
        if not targets:
            return []
        from concurrent.futures import ThreadPoolExecutor  # it imports logging: when needed

        with ThreadPoolExecutor(max_workers=min(MAX_PARALLEL, len(targets))) as pool:
            first = list(pool.map(self._ask_to_exit, targets))
        waiting = [t for t, result in zip(targets, first, strict=True) if result is None]
        closed = self._wait_until_gone(waiting, timeout)
        results = {id(t): r for t, r in zip(targets, first, strict=True) if r is not None}
        for target in waiting:
            if target.pane_id in closed:
                results[id(target)] = PaneClosing(target, Closing.CLOSED)
            else:
                tail = self._tail(target)
                killed = self._kill(target, Closing.KILLED_AFTER_TIMEOUT)
                results[id(target)] = PaneClosing(target, killed.status, killed.detail, tail)
        return [results[id(t)] for t in targets]

    def _ask_to_exit(self, target: PushTarget) -> PaneClosing | None:
        """None when /exit was typed and the pane must be waited for."""
        from cafleet.application.panes.keystrokes import Keystrokes

        outcome = self._keystrokes.deliver(target, Keystrokes.exit_command())
        if outcome.state is DeliveryState.SENT:
            return None
        if outcome.error == SkipReason.PANE_GONE:
            closing = self._kill(target, Closing.GONE)  # a dead pane (remain-on-exit) of ours
            untouched = closing.status is Closing.NOT_OURS
            return PaneClosing(target, Closing.NOT_OURS if untouched else Closing.GONE)
        if outcome.state is DeliveryState.FAILED:  # could not type /exit: close it anyway
            killed = self._kill(target, Closing.KILLED)
            return PaneClosing(target, killed.status, killed.detail or outcome.error)
        reason = outcome.error or ""
        if reason.startswith(SkipReason.dialog("")):
            # the agent's own question on /exit (read as a dialog, even after Enter) is ours
            # to answer; another dialog is never typed into, so the pane is closed as it is
            if self._confirm_exit(target):
                return None
            killed = self._kill(target, Closing.KILLED_AT_DIALOG)
            sign = reason.removeprefix(SkipReason.dialog("")).removesuffix(BEFORE_ENTER)
            return PaneClosing(target, killed.status, killed.detail or sign)
        command = reason.removeprefix("not-agent:")
        killed = self._kill(target, Closing.KILLED_NOT_AGENT)
        return PaneClosing(target, killed.status, killed.detail or command)

    def _wait_until_gone(self, targets: list[PushTarget], timeout: float) -> set[str]:
        gone: set[str] = set()
        deadline = self._clock.now() + timedelta(seconds=timeout)
        while True:
            for target in targets:
                if target.pane_id in gone:
                    continue
                if self._is_gone(target):
                    gone.add(target.pane_id)
                else:
                    self._confirm_exit(target)
            if len(gone) == len(targets) or self._clock.now() >= deadline:
                return gone
            self._clock.sleep(POLL_SECONDS)

    def _confirm_exit(self, target: PushTarget) -> bool:
        """Press the key that confirms the exit where the agent asks a question of its exit
        command (e.g. about its background work); False when its screen shows none."""
        profile = self._keystrokes.profile(target)
        if not profile.exit_questions:
            return False
        driver = self._drivers(target.backend, target.socket, target.host)
        try:
            with self._keystrokes.holding(target):
                if self._keystrokes.agent_problem(target, driver.pane(target.pane_id)):
                    return False
                key = profile.exit_key(driver.capture(target.pane_id, EXIT_QUESTION_ROWS))
                if key is not None:
                    driver.type_text(target.pane_id, key)
        except (CafleetError, TimeoutError):
            return False  # cannot tell now: the wait goes on, and kills the pane at its end
        return key is not None

    def _is_gone(self, target: PushTarget) -> bool:
        driver = self._drivers(target.backend, target.socket, target.host)
        try:
            info = self._own_pane(target)
            if info is not None and info.dead:  # the agent left; the pane stayed (remain-on-exit)
                driver.kill(target.pane_id)
        except CafleetError:
            return False  # cannot tell now; ask again on the next poll
        return info is None or info.dead

    def _tail(self, target: PushTarget) -> str | None:
        try:
            if self._own_pane(target) is None:
                return None
            driver = self._drivers(target.backend, target.socket, target.host)
            return driver.capture(target.pane_id, TAIL_LINES)
        except CafleetError:
            return None

    def _own_pane(self, target: PushTarget) -> PaneInfo | None:
        """The member's pane, or None when it is gone or another pane has its id now."""
        info = self._drivers(target.backend, target.socket, target.host).pane(target.pane_id)
        return ours(info, target.identity)

    def _may_close(self, target: PushTarget, info: PaneInfo) -> bool:
        """Whether the pane is the member's: its identity matches, or with none recorded
        (an older placement), it is dead or still runs the member's agent."""
        if target.identity is not None:
            return ours(info, target.identity) is not None
        return info.dead or self._keystrokes.agent_problem(target, info) is None

    def _kill(self, target: PushTarget, status: Closing) -> PaneClosing:
        driver = self._drivers(target.backend, target.socket, target.host)
        try:
            info = driver.pane(target.pane_id)
            if info is not None and not self._may_close(target, info):
                return PaneClosing(target, Closing.NOT_OURS)
            killed = info is not None and driver.kill(target.pane_id)
        except CafleetError as exc:
            return PaneClosing(target, Closing.FAILED, exc.message)
        return PaneClosing(target, status if killed or status is Closing.KILLED else Closing.GONE)

"""Watching a new member's agent start until it has taken its spawn prompt.

Text typed into a TUI that is still starting is lost or glued to the spawn prompt, and Esc
or Enter typed into a start-up dialog answers it. So `member create` returns only once the
agent is seen ready, by the most trustworthy rule its profile offers (its own hook, then
the spawn prompt on its screen, then a bounded wait with the agent alive in front and no
dialog up), and fails with the reason and the pane's last lines otherwise.

Between looks the watcher sleeps a poll interval; where the multiplexer can watch a screen
itself (herdr's `pane.wait_for_output`), it waits there instead, for the spawn prompt or a
dialog, and looks again the moment either shows.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

from cafleet.application.ports.agents import LaunchPad
from cafleet.application.ports.panes import PaneDriver, ScreenWaits
from cafleet.application.ports.system import Clock
from cafleet.domain.agents.claude import PROMPT_TAKEN
from cafleet.domain.agents.profile import SESSION_FILE, AgentProfile, ReadyRule
from cafleet.domain.agents.screen import letters_and_digits, prompt_mark, screen_shows
from cafleet.domain.errors import CafleetError
from cafleet.domain.panes import agent_check

POLL_SECONDS = 0.2
# A wait the multiplexer holds for us ends early when the screen changes as awaited, so it
# may be longer than a poll; it stays short because hooks and servers are only polled.
SCREEN_WAIT_SECONDS = 0.5
DIALOG_GRACE_SECONDS = 1.0  # a dialog may flash by while a TUI draws its first screens
# A TUI shows the spawn prompt a moment before it really takes it; where the agent reports
# that itself, the other rules count only once the report is this late (hooks switched off,
# a server that does not answer).
HOOK_GRACE_SECONDS = 8.0
SCREEN_LINES = 60
LAST_LINES = 12


@dataclass(frozen=True)
class StartWatch:
    """What to watch for one spawn."""

    profile: AgentProfile
    pane_id: str
    accepted: tuple[str, ...]  # foreground names that mean "the agent runs"
    prompt: str
    timeout: float


@dataclass(frozen=True)
class StartVerdict:
    rule: ReadyRule | None  # None: the agent never became ready
    problem: str = ""
    last_lines: str = ""


class StartWatcher:
    def __init__(self, clock: Clock) -> None:
        self._clock = clock

    def watch(self, driver: PaneDriver, pad: LaunchPad, watch: StartWatch) -> StartVerdict:
        profile, pane = watch.profile, watch.pane_id
        mark = prompt_mark(watch.prompt)
        started = self._clock.now()
        in_front_since = None
        dialog_since = None
        screen = ""
        while True:
            now = self._clock.now()
            status = pad.status()
            if status.exited:
                return _failed(
                    f"the agent exited with status {status.exit_code} before taking its"
                    " first prompt",
                    self._last_lines(driver, pane, screen),
                )
            try:
                info = driver.pane(pane)
                if info is not None and not info.dead:
                    screen = driver.capture(pane, SCREEN_LINES)
            except CafleetError:
                info = None
            if info is None or info.dead:  # `screen` still holds the last one seen
                return _failed("the pane closed before the agent took its first prompt", screen)
            sign = profile.dialog_on(screen)
            if sign is None:
                dialog_since = None
            else:
                dialog_since = dialog_since or now
                if (now - dialog_since).total_seconds() >= DIALOG_GRACE_SECONDS:
                    return _failed(
                        f"a dialog is on screen ({sign!r}) and CAFleet never answers one: start"
                        f" {profile.coding_agent.value} once in this directory, answer it, and"
                        " retry",
                        screen,
                    )
            in_front = (
                not sign and agent_check(info, watch.accepted, scripts=profile.script_names) is None
            )
            in_front_since = (in_front_since or now) if in_front else None
            if in_front:
                waited = (now - in_front_since).total_seconds() if in_front_since else 0.0
                rule = self._ready_rule(profile, pad, screen, mark, waited)
                if rule is not None:
                    return StartVerdict(rule)
            if (now - started).total_seconds() >= watch.timeout:
                reason = (
                    f"the agent did not take its first prompt within {watch.timeout:g}s"
                    if in_front
                    else f"the pane does not run {profile.coding_agent.value} (foreground:"
                    f" {info.command or 'unknown'}) after {watch.timeout:g}s"
                )
                return _failed(reason, screen)
            self._pause(driver, pane, _awaited(profile, screen, mark, sign))

    def _pause(self, driver: PaneDriver, pane: str, awaited: tuple[str, ...]) -> None:
        """Until the next look: on the multiplexer's own watch for the awaited texts where it
        has one, else a poll interval."""
        if awaited and isinstance(driver, ScreenWaits):
            started = self._clock.now()
            try:
                driver.wait_for_text(pane, awaited, SCREEN_LINES, SCREEN_WAIT_SECONDS)
                return
            except CafleetError:  # the next look says what became of the pane
                if (self._clock.now() - started).total_seconds() >= POLL_SECONDS:
                    return
        self._clock.sleep(POLL_SECONDS)

    @staticmethod
    def _ready_rule(
        profile: AgentProfile, pad: LaunchPad, screen: str, mark: str, waited: float
    ) -> ReadyRule | None:
        """The first rule of the profile that holds; `waited` is how long the agent has
        been in front with no dialog."""
        signal = profile.signal_rule
        if signal is ReadyRule.HOOK and any(e.kind == PROMPT_TAKEN for e in pad.events()):
            return signal
        http = profile.http
        if signal is ReadyRule.HTTP and http:
            busy = http.busy_sessions(pad.get(http.status_path, http.user))
            if busy:
                if len(busy) == 1:  # the server is this member's own: its busy session is ours
                    with contextlib.suppress(CafleetError):
                        pad.write(SESSION_FILE, busy[0])
                return signal
        if signal is not None and waited < HOOK_GRACE_SECONDS:
            return None
        if ReadyRule.SCREEN in profile.ready_rules and screen_shows(screen, mark):
            return ReadyRule.SCREEN
        if ReadyRule.WAIT in profile.ready_rules and waited >= profile.wait_fallback_seconds:
            return ReadyRule.WAIT
        return None

    @staticmethod
    def _last_lines(driver: PaneDriver, pane: str, fallback: str) -> str:
        """The pane's screen after the agent ended (the launcher keeps it open a while)."""
        try:
            return driver.capture(pane, SCREEN_LINES) or fallback
        except CafleetError:
            return fallback


def _awaited(profile: AgentProfile, screen: str, mark: str, sign: str | None) -> tuple[str, ...]:
    """The texts whose appearance would change the verdict: the spawn prompt where the
    profile reads screens, and its dialogs. A text the last screen already shows anywhere
    is not awaited (the wait would answer at once, again and again), and nothing is while
    a dialog is up."""
    if sign is not None:
        return ()
    prompt = (mark,) if ReadyRule.SCREEN in profile.ready_rules else ()
    return tuple(
        text
        for text in (*prompt, *profile.dialog_signs)
        if not screen_shows(screen, letters_and_digits(text))
    )


def _failed(problem: str, screen: str) -> StartVerdict:
    rows = [row.rstrip() for row in screen.splitlines() if row.strip()]
    return StartVerdict(None, problem, "\n".join(rows[-LAST_LINES:]))

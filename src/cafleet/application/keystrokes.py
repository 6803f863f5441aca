"""The one way anything is typed into a pane (spec §7.3–7.4).

Hold the pane's send lock, check that the pane runs the expected coding agent and
shows no dialog, type or paste the text, wait the agent's submit delay, check
again, press Enter. No Esc is ever sent first: every supported agent queues text
that arrives mid-turn, while Esc would interrupt its work or answer a dialog. A
failed step stops the sequence, so no Enter follows a failed text step or check.
The outcome is reported, never raised.
"""

from __future__ import annotations

from dataclasses import dataclass

from cafleet.application.ports import Clock, PaneDriver, PaneDrivers, PaneLocks, PushTarget
from cafleet.domain.agent_profiles import TYPING_DIALOG_ROWS, AgentProfile, AgentProfiles
from cafleet.domain.delivery import BEFORE_ENTER, PushOutcome, SkipReason
from cafleet.domain.digests import sha256_hex
from cafleet.domain.errors import CafleetError
from cafleet.domain.panes import Key, PaneGone, PaneInfo, agent_check, ours
from cafleet.domain.placement import CodingAgent
from cafleet.domain.preview import one_line

SEND_LOCK_TIMEOUT_SECONDS = 30
DIALOG_SCREEN_LINES = 40
SHELL_IDLE_WAIT_SECONDS = 120  # how long a shell command waits for a turn to end
SHELL_IDLE_POLL_SECONDS = 0.5


@dataclass(frozen=True)
class Keystrokes:
    text: str
    bracketed: bool = False  # a paste keeps line breaks from submitting early
    shell: bool = False  # a `!` command, which some agents drop during a turn

    @staticmethod
    def preview(text: str) -> Keystrokes:
        return Keystrokes(text, bracketed=True)

    @staticmethod
    def poll_trigger(fleet_id: int, agent_id: int) -> Keystrokes:
        return Keystrokes(f"cafleet message poll --fleet-id {fleet_id} --agent-id {agent_id}")

    @staticmethod
    def shell_command(command: str) -> Keystrokes:
        return Keystrokes(f"! {command}", shell=True)

    @staticmethod
    def exit_command() -> Keystrokes:
        return Keystrokes("/exit")

    @staticmethod
    def wake(text: str) -> Keystrokes:
        return Keystrokes(text)


def lock_key(target: PushTarget) -> str:
    raw = f"{target.backend.value}\0{target.socket or ''}\0{target.pane_id}"
    return sha256_hex(raw.encode())[:32]


class KeystrokeSender:
    def __init__(
        self,
        drivers: PaneDrivers,
        locks: PaneLocks,
        clock: Clock,
        profiles: AgentProfiles,
    ) -> None:
        self._drivers = drivers
        self._locks = locks
        self._clock = clock
        self._profiles = profiles

    def profile(self, target: PushTarget) -> AgentProfile:
        return self._profiles[target.coding_agent]

    def agent_problem(self, target: PushTarget, info: PaneInfo | None) -> str | None:
        """Tests A and B on the pane as reported: None when it is the target's pane and runs
        its agent, else the skip reason (pane-gone for a pane that took the id later)."""
        return agent_check(
            ours(info, target.identity),
            self.accepted_commands(target),
            target.coding_agent.value,
            self.profile(target).script_names,
        )

    def accepted_commands(self, target: PushTarget) -> tuple[str, ...]:
        """Test B's list; empty (only test A applies) for a custom agent without one."""
        if target.coding_agent is CodingAgent.CUSTOM:
            return target.agent_commands
        return self.profile(target).foreground_names

    def deliver(self, target: PushTarget, keys: Keystrokes) -> PushOutcome:
        transport, pane = target.backend.value, target.pane_id
        if not target.ready:  # a TUI still starting loses text or glues it to its prompt
            return PushOutcome.skipped(SkipReason.AGENT_STARTING, transport, pane)
        try:
            driver = self._drivers(target.backend, target.socket)
            if keys.shell:
                self._await_shell_turn(driver, target)
            with self._locks.hold(lock_key(target), SEND_LOCK_TIMEOUT_SECONDS):
                problem = self._typing_problem(driver, target, keys)
                if problem is not None:
                    return PushOutcome.skipped(problem, transport, pane)
                if keys.bracketed:
                    driver.paste_text(pane, self._pasted(target, keys.text))
                else:
                    driver.type_text(pane, keys.text)
                self._clock.sleep(self.profile(target).submit_delay)
                problem = self._typing_problem(driver, target, keys)
                if problem == SkipReason.AGENT_BUSY:  # a turn began while typing: the
                    self._await_shell_turn(driver, target)  # composer keeps the text
                    problem = self._typing_problem(driver, target, keys)
                if problem is not None:  # the agent left or a dialog opened: no Enter
                    return PushOutcome.skipped(problem + BEFORE_ENTER, transport, pane)
                driver.send_keys(pane, Key.ENTER)
        except TimeoutError:
            return PushOutcome.failed(
                f"send lock timeout after {SEND_LOCK_TIMEOUT_SECONDS}s", transport, pane
            )
        except PaneGone:
            return PushOutcome.skipped(SkipReason.PANE_GONE, transport, pane)
        except CafleetError as exc:
            return PushOutcome.failed(exc.message, transport, pane)
        return PushOutcome.sent(transport, pane)

    def _pasted(self, target: PushTarget, text: str) -> str:
        """The text itself where the agent enabled bracketed paste; otherwise its line
        breaks would submit each line, so it goes as one line."""
        return text if self.profile(target).bracketed_paste else one_line(text)

    def _await_shell_turn(self, driver: PaneDriver, target: PushTarget) -> None:
        """Wait (bounded) for a running turn to end where the agent would drop a shell
        command typed during it; the check under the lock reports a turn still running."""
        profile = self.profile(target)
        if not profile.shell_busy_signs:
            return
        waited = 0.0
        while waited < SHELL_IDLE_WAIT_SECONDS and profile.busy_for_shell(
            driver.capture(target.pane_id, DIALOG_SCREEN_LINES)
        ):
            self._clock.sleep(SHELL_IDLE_POLL_SECONDS)
            waited += SHELL_IDLE_POLL_SECONDS

    def _typing_problem(
        self, driver: PaneDriver, target: PushTarget, keys: Keystrokes
    ) -> str | None:
        """Why nothing may be typed now: the pane is not the one recorded (pane-gone), does
        not run the agent, shows a dialog, or (for a shell command) runs a turn that would
        drop it.

        Words of the text itself (in the composer once pasted) never count as a dialog.
        """
        pane = target.pane_id
        problem = self.agent_problem(target, driver.pane(pane))
        if problem is not None:
            return problem
        profile = self.profile(target)
        busy_matters = keys.shell and bool(profile.shell_busy_signs)
        if not profile.dialog_signs and not busy_matters:
            return None
        screen = driver.capture(pane, DIALOG_SCREEN_LINES)
        sign = profile.dialog_on(screen, ignoring=keys.text, rows=TYPING_DIALOG_ROWS)
        if sign is not None:
            return SkipReason.dialog(sign)
        if busy_matters and profile.busy_for_shell(screen):
            return SkipReason.AGENT_BUSY
        return None

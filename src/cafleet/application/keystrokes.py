"""The one way anything is typed into a pane (spec §7.3–7.4).

Hold the pane's send lock, check that the pane runs the expected coding agent,
optionally press Esc, type or paste the text, wait the agent's submit delay,
press Enter. A failed step stops the sequence, so no Enter follows a failed
text step. The outcome is reported, never raised.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass

from cafleet.application.ports import Clock, PaneDrivers, PaneLocks, PushTarget
from cafleet.domain.delivery import PushOutcome, SkipReason
from cafleet.domain.errors import CafleetError
from cafleet.domain.panes import Key, PaneGone, agent_check
from cafleet.domain.placement import CodingAgent

SEND_LOCK_TIMEOUT_SECONDS = 30
ESC_PAUSE_SECONDS = 0.1


@dataclass(frozen=True)
class Keystrokes:
    text: str
    esc_first: bool = False
    bracketed: bool = False  # a paste keeps line breaks from submitting early

    @staticmethod
    def preview(text: str) -> Keystrokes:
        return Keystrokes(text, esc_first=True, bracketed=True)

    @staticmethod
    def poll_trigger(fleet_id: int, agent_id: int) -> Keystrokes:
        return Keystrokes(
            f"cafleet message poll --fleet-id {fleet_id} --agent-id {agent_id}", esc_first=True
        )

    @staticmethod
    def shell_command(command: str) -> Keystrokes:
        return Keystrokes(f"! {command}")

    @staticmethod
    def exit_command() -> Keystrokes:
        return Keystrokes("/exit")

    @staticmethod
    def wake(text: str) -> Keystrokes:
        return Keystrokes(text)


def lock_key(target: PushTarget) -> str:
    raw = f"{target.backend.value}\0{target.socket or ''}\0{target.pane_id}"
    return hashlib.sha256(raw.encode()).hexdigest()[:32]


class KeystrokeSender:
    def __init__(
        self,
        drivers: PaneDrivers,
        locks: PaneLocks,
        clock: Clock,
        submit_delays: Mapping[str, float],
        agent_commands: Mapping[str, tuple[str, ...]],
    ) -> None:
        self._drivers = drivers
        self._locks = locks
        self._clock = clock
        self._delays = submit_delays
        self._agent_commands = agent_commands

    def accepted_commands(self, target: PushTarget) -> tuple[str, ...]:
        """Test B's list; empty (only test A applies) for a custom agent without one."""
        if target.coding_agent is CodingAgent.CUSTOM:
            return target.agent_commands
        return self._agent_commands.get(target.coding_agent.value, ())

    def deliver(self, target: PushTarget, keys: Keystrokes) -> PushOutcome:
        transport, pane = target.backend.value, target.pane_id
        try:
            driver = self._drivers(target.backend, target.socket)
            with self._locks.hold(lock_key(target), SEND_LOCK_TIMEOUT_SECONDS):
                problem = agent_check(
                    driver.pane(pane), self.accepted_commands(target), target.coding_agent.value
                )
                if problem is not None:
                    return PushOutcome.skipped(problem, transport, pane)
                if keys.esc_first:
                    driver.send_keys(pane, Key.ESCAPE)
                    self._clock.sleep(ESC_PAUSE_SECONDS)
                if keys.bracketed:
                    driver.paste_text(pane, keys.text)
                else:
                    driver.type_text(pane, keys.text)
                self._clock.sleep(self._delays.get(target.coding_agent.value, 1.0))
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

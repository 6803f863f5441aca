"""What a pane must show before a key goes into it: the target's own pane running its agent
(tests A and B), no dialog on its screen, and for a shell command no turn that would drop it;
and the bounded wait for such a turn to end."""

from __future__ import annotations

from cafleet.application.ports.panes import PaneDriver
from cafleet.application.ports.system import Clock
from cafleet.domain.agents.profile import AgentProfile
from cafleet.domain.agents.screen import TYPING_DIALOG_ROWS
from cafleet.domain.delivery import SkipReason
from cafleet.domain.panes import PaneInfo, agent_check, ours
from cafleet.domain.placement import CodingAgent, PushTarget

DIALOG_SCREEN_LINES = 40
SHELL_IDLE_WAIT_SECONDS = 120  # how long a shell command waits for a turn to end
SHELL_IDLE_POLL_SECONDS = 0.5


def agent_problem(profile: AgentProfile, target: PushTarget, info: PaneInfo | None) -> str | None:
    """Tests A and B on the pane as reported: None when it is the target's pane and runs
    its agent, else the skip reason (pane-gone for a pane that took the id later)."""
    return agent_check(
        ours(info, target.identity),
        accepted_commands(profile, target),
        target.coding_agent.value,
        profile.script_names,
    )


def accepted_commands(profile: AgentProfile, target: PushTarget) -> tuple[str, ...]:
    """Test B's list; empty (only test A applies) for a custom agent without one."""
    if target.coding_agent is CodingAgent.CUSTOM:
        return target.agent_commands
    return profile.foreground_names


def screen_matters(profile: AgentProfile, shell: bool) -> bool:
    """Whether the screen must be read: for a dialog, or for a turn a shell command waits out."""
    return bool(profile.dialog_signs) or (shell and bool(profile.shell_busy_signs))


def screen_problem(profile: AgentProfile, screen: str, typed: str, shell: bool) -> str | None:
    """A dialog on the screen (words of the text being typed never count as one), or for a
    shell command a turn running; None when keys may go in."""
    sign = profile.dialog_on(screen, ignoring=typed, rows=TYPING_DIALOG_ROWS)
    if sign is not None:
        return SkipReason.dialog(sign)
    if shell and profile.shell_busy_signs and profile.busy_for_shell(screen):
        return SkipReason.AGENT_BUSY
    return None


def await_shell_turn(driver: PaneDriver, pane_id: str, profile: AgentProfile, clock: Clock) -> None:
    """Wait (bounded) for a running turn to end where the agent would drop a shell
    command typed during it; the check under the lock reports a turn still running."""
    if not profile.shell_busy_signs:
        return
    waited = 0.0
    while waited < SHELL_IDLE_WAIT_SECONDS and profile.busy_for_shell(
        driver.capture(pane_id, DIALOG_SCREEN_LINES)
    ):
        clock.sleep(SHELL_IDLE_POLL_SECONDS)
        waited += SHELL_IDLE_POLL_SECONDS

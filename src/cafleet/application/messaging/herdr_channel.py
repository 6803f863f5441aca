"""herdr's own prompt as a rung of the delivery ladder, between the agent's channels and keys.

herdr's `agent.prompt` types the text into the agent it detected in a pane and presses Enter
itself, and refuses when that agent waits at an approval or question dialog. The refusal
settles the delivery: keystrokes would type into the dialog, so the message waits in the
inbox for the member's next poll. A pane herdr sees no agent in falls through to keys.
"""

from __future__ import annotations

from cafleet.application.panes.keystrokes import SEND_LOCK_TIMEOUT_SECONDS, lock_key
from cafleet.application.ports.delivery import NativeChannel
from cafleet.application.ports.panes import PaneDrivers, PaneLocks
from cafleet.domain.delivery import Announcement, Channel, DeliveryState, PushOutcome, SkipReason
from cafleet.domain.errors import CafleetError
from cafleet.domain.panes import PromptAnswer, ours
from cafleet.domain.placement import Multiplexer

_REASONS = {
    PromptAnswer.BLOCKED: SkipReason.AGENT_BLOCKED,
    PromptAnswer.NO_AGENT: SkipReason.NO_DETECTED_AGENT,
    PromptAnswer.NO_METHOD: SkipReason.NO_PROMPT_METHOD,
}


class HerdrPromptChannel(NativeChannel):
    """The member's pane driver prompts its agent; only herdr's can (tmux answers that it
    has no such request, and the channel then does not reach the member)."""

    def __init__(self, drivers: PaneDrivers, locks: PaneLocks) -> None:
        self._drivers = drivers
        self._locks = locks

    def offer(self, announcement: Announcement, text: str) -> PushOutcome | None:
        target = announcement.target
        if not target.ready:  # the keystroke path records that the agent is starting
            return None
        if target.backend is not Multiplexer.HERDR:  # tmux has no prompt of its own
            return None
        transport, pane, channel = target.backend.value, target.pane_id, Channel.HERDR_PROMPT
        try:
            driver = self._drivers(target.backend, target.socket, target.host)
            # held until herdr pressed Enter, so no other typing lands between text and Enter
            with self._locks.hold(lock_key(target), SEND_LOCK_TIMEOUT_SECONDS):
                if target.identity is not None and ours(driver.pane(pane), target.identity) is None:
                    # another pane has the id now (the server restarted): never prompt it
                    return PushOutcome.skipped(SkipReason.PANE_GONE, transport, pane, channel)
                answer = driver.prompt_agent(pane, text)
        except TimeoutError:
            error = f"send lock timeout after {SEND_LOCK_TIMEOUT_SECONDS}s"
            return PushOutcome.failed(error, transport, pane, channel)
        except CafleetError as exc:
            return PushOutcome.failed(exc.message, transport, pane, channel)
        if answer is PromptAnswer.NO_PROMPT:
            return None
        if answer is PromptAnswer.TAKEN:
            return PushOutcome(DeliveryState.SENT, transport, pane, channel=channel)
        return PushOutcome.skipped(_REASONS[answer], transport, pane, channel)

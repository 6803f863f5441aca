"""A held delivery's pane, looked at again (domain/holds): what stands in the way of typing
now, and the Enter for a preview an earlier attempt left in the composer.

The preview left behind is finished, not cleared: clearing a composer takes keys that
interrupt a turn or answer a dialog in some agents (Esc, Ctrl-C), while Enter on a composer
that shows the preview announces the message, once, with the same keystroke it lacked.
"""

from __future__ import annotations

from cafleet.application.panes.keystrokes import Keystrokes, KeystrokeSender
from cafleet.application.ports.delivery import Resumption
from cafleet.application.ports.panes import AgentStates, PaneDrivers
from cafleet.domain.delivery import Announcement, Channel, PushOutcome, Residue, SkipReason
from cafleet.domain.errors import CafleetError
from cafleet.domain.monitor import BLOCKED
from cafleet.domain.placement import Multiplexer, PushTarget


class PaneResumption(Resumption):
    def __init__(self, keys: KeystrokeSender, drivers: PaneDrivers, max_text_len: int) -> None:
        self._keys = keys
        self._drivers = drivers
        self._max_text_len = max_text_len

    def obstacle(self, announcement: Announcement) -> PushOutcome | None:
        target = announcement.target
        found = self._keys.obstacle(target)
        return found if found is not None else self._blocked(target)

    def complete(self, announcement: Announcement, residue: Residue) -> PushOutcome | None:
        keys = Keystrokes.preview(announcement.preview(self._max_text_len))
        return self._keys.complete(announcement.target, keys, residue)

    def _blocked(self, target: PushTarget) -> PushOutcome | None:
        """herdr's own word that the agent waits at a dialog, which its prompt refuses
        (a dialog the profile's signs do not know); None when it says nothing of the kind."""
        if target.backend is not Multiplexer.HERDR:
            return None
        try:
            driver = self._drivers(target.backend, target.socket, target.host)
            states = driver.agent_states() if isinstance(driver, AgentStates) else {}
        except CafleetError:  # the ladder's own attempt meets the trouble and records it
            return None
        if states.get(target.pane_id) != BLOCKED:
            return None
        return PushOutcome.skipped(
            SkipReason.AGENT_BLOCKED, target.backend.value, target.pane_id, Channel.HERDR_PROMPT
        )

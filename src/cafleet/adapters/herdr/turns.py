"""FinishedTurns: herdr's `done`, also for agents whose end of turn herdr saw at once.

herdr reports `done` for an agent that went idle while nobody looked (`src/app/api_helpers.rs`
`done` = idle and not seen). A change from working or blocked to idle counts as seen when
the pane's tab is the active one and the client's terminal did not say it lost focus, or no
client is attached (`src/app/actions.rs`); that pane is reported `idle` at once. Members sit
in the Director's tab, usually the active one, so herdr would almost never say `done` of
them. FinishedTurns reads such a change as `done` and keeps it while the agent stays idle,
as herdr does for a turn nobody saw.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping

IDLE, DONE = "idle", "done"
BUSY = frozenset({"working", "blocked"})


class FinishedTurns:
    def __init__(self) -> None:
        self._last: dict[str, str] = {}  # per pane: the state last handed out
        self._lock = threading.Lock()

    def read(self, states: Mapping[str, str]) -> dict[str, str]:
        """The states to hand on for one reading of some panes, in herdr's words."""
        with self._lock:
            out = {}
            for pane_id, state in states.items():
                ended = state == IDLE and self._last.get(pane_id) in BUSY | {DONE}
                self._last[pane_id] = out[pane_id] = DONE if ended else state
            return out


__all__ = ["FinishedTurns"]

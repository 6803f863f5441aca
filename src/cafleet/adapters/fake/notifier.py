"""A Notifier that records every announcement and answers with a scripted outcome."""

from __future__ import annotations

import threading
from collections.abc import Callable

from cafleet.application.ports.delivery import Notifier
from cafleet.domain.delivery import Announcement, PushOutcome


class RecordingNotifier(Notifier):
    def __init__(self, outcome: Callable[[Announcement], PushOutcome] | None = None) -> None:
        self._outcome = outcome or (
            lambda a: PushOutcome.sent(a.target.backend.value, a.target.pane_id)
        )
        self._lock = threading.Lock()
        self.announced: list[Announcement] = []

    def announce(self, announcement: Announcement) -> PushOutcome:
        with self._lock:
            self.announced.append(announcement)
        return self._outcome(announcement)

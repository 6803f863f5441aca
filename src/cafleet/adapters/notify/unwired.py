"""The Notifier used until a pane-typing one is configured: it touches no pane and says so."""

from __future__ import annotations

from cafleet.application.ports import Announcement, Notifier
from cafleet.domain.delivery import PushOutcome, SkipReason


class UnwiredNotifier(Notifier):
    def announce(self, announcement: Announcement) -> PushOutcome:
        return PushOutcome.skipped(SkipReason.NO_NOTIFIER, pane_id=announcement.target.pane_id)

"""QueueDrains that only note which recipients they were asked to drain (the test decides
whether and when the drain happens, e.g. by calling `MessagingService.drain_queued`)."""

from __future__ import annotations

from collections.abc import Sequence

from cafleet.application.ports.delivery import QueueDrains


class RecordingDrains(QueueDrains):
    def __init__(self) -> None:
        self.started: list[list[int]] = []

    def start(self, recipients: Sequence[int]) -> None:
        self.started.append(list(recipients))

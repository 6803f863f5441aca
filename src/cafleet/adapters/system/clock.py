"""The real clock."""

from __future__ import annotations

import time
from datetime import UTC, datetime

from cafleet.application.ports.system import Clock


class SystemClock(Clock):
    def now(self) -> datetime:
        return datetime.now(UTC)

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)

"""A clock that only moves when told to (sleeping advances it)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from cafleet.application.ports.system import Clock


class FakeClock(Clock):
    def __init__(self, start: datetime | None = None, step: timedelta = timedelta(0)) -> None:
        self._now = start or datetime(2026, 1, 1, tzinfo=UTC)
        self._step = step  # added after every now(), so successive writes get distinct times
        self.slept: list[float] = []

    def now(self) -> datetime:
        current = self._now
        self._now += self._step
        return current

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self._now += timedelta(seconds=seconds)

    def advance(self, seconds: float) -> None:
        self._now += timedelta(seconds=seconds)

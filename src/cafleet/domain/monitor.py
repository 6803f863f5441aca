"""Monitoring schedules: which agents the heartbeat watches and how often."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime

DIRECTOR_INTERVAL_SECONDS = 180
MEMBER_INTERVAL_SECONDS = 720


@dataclass(frozen=True)
class MonitorSchedule:
    agent_id: int
    interval_seconds: int
    enabled: bool = True
    last_ping_at: datetime | None = None
    last_stall_check_at: datetime | None = None
    last_native_status: str | None = None

    def reconfigured(self, interval_seconds: int | None, enabled: bool | None) -> MonitorSchedule:
        updated = self
        if interval_seconds is not None:
            updated = replace(updated, interval_seconds=interval_seconds)
        if enabled is not None:
            updated = replace(updated, enabled=enabled)
            if not enabled:
                updated = replace(updated, last_stall_check_at=None)
        return updated

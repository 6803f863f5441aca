"""The in-memory store's tables, and the row rules its repositories share."""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import TypeVar

from cafleet.domain.delivery import Delivery
from cafleet.domain.fleet import Agent, Fleet
from cafleet.domain.message import Message
from cafleet.domain.monitor import MonitorRuntime, MonitorSchedule
from cafleet.domain.placement import Placement
from cafleet.domain.relay import PaneReport, RelayBeat, RelayRequest
from cafleet.domain.skills import SkillInstall

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


def insert_row(table: dict[K, V], key: K, row: V) -> None:
    """A second row under one key is refused, as a primary key refuses it."""
    if key in table:
        raise ValueError(f"duplicate key {key!r}")
    table[key] = row


def update_row(table: dict[K, V], key: K, row: V) -> None:
    """Like UPDATE ... WHERE key: a row that was never added stays absent."""
    if key in table:
        table[key] = row


@dataclass
class MemoryTables:
    fleets: dict[int, Fleet] = field(default_factory=dict)
    agents: dict[int, Agent] = field(default_factory=dict)
    placements: dict[int, Placement] = field(default_factory=dict)
    messages: dict[int, Message] = field(default_factory=dict)
    deliveries: dict[tuple[int, int, int], Delivery] = field(default_factory=dict)
    schedules: dict[int, MonitorSchedule] = field(default_factory=dict)
    runtimes: dict[int, MonitorRuntime] = field(default_factory=dict)
    installs: dict[str, SkillInstall] = field(default_factory=dict)
    beats: dict[str, RelayBeat] = field(default_factory=dict)
    requests: dict[int, RelayRequest] = field(default_factory=dict)
    reports: dict[int, PaneReport] = field(default_factory=dict)
    wakes: list[str] = field(default_factory=list)  # hosts told of work, in commit order
    next_ids: dict[str, int] = field(default_factory=dict)

    def new_id(self, table: str) -> int:
        self.next_ids[table] = self.next_ids.get(table, 0) + 1
        return self.next_ids[table]

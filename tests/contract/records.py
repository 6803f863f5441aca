"""Rows for the store contract: odd but storable values, and the few parents every row needs
(a database enforces its foreign keys, so each case builds the fleet and agents it points at)."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta, timezone

from cafleet.application.ports.store import UnitOfWork
from cafleet.domain.fleet import Agent, Fleet

T0 = datetime(2026, 12, 2, 8, 0, tzinfo=UTC)
# a stamp a round trip must keep exactly: microseconds, and an offset other than UTC's
ODD_STAMP = datetime(
    2026, 12, 2, 13, 45, 7, 123456, tzinfo=timezone(timedelta(hours=5, minutes=30))
)
# text a person may type: several lines, tabs, quotes, SQL-ish text, scripts, emoji,
# combining and zero-width marks, a right-to-left override (NUL is never stored)
ODD_TEXT = (
    "line one\nline two\r\n\ttabbed 'single' \"double\" \\back\\slash; DROP TABLE tasks; --\n"
    "日本語 — Ελληνικά — עברית \u202eevil\u202c e\u0301 a\u200db 🚀👩‍💻 \x7f end"
)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def stamps(row: object) -> dict[str, str]:
    """Every datetime field of a dataclass as text: equal datetimes may still differ in
    offset or be rounded, which `==` alone would not show."""
    assert dataclasses.is_dataclass(row)
    return {
        f.name: value.isoformat()
        for f in dataclasses.fields(row)
        if isinstance(value := getattr(row, f.name), datetime)
    }


def assert_same(got: object, expected: object) -> None:
    """A row read back equals what was stored, stamps to the microsecond and offset."""
    assert got == expected
    assert stamps(got) == stamps(expected)


def fleet(uow: UnitOfWork, name: str = "fleet", created_at: datetime = T0) -> int:
    return uow.fleets.add(Fleet(0, name, created_at))


def agents(uow: UnitOfWork, fleet_id: int, *names: str) -> list[int]:
    return [uow.agents.add(Agent(0, fleet_id, n, f"{n} of {fleet_id}", T0)) for n in names]

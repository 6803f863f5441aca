"""Option types for every number the CLI takes, with the ranges of `cafleet.domain.bounds`.

An id, interval, timeout or count outside its range, or a non-finite number, is a usage
error (exit 2) with one `Error: Invalid value for '--x': ...` line, never an internal
error from SQLite, `timedelta` or a sleep.
"""

from __future__ import annotations

from typing import Any

import click

from cafleet.domain import bounds
from cafleet.domain.bounds import Bound

_SHOWN_CHARACTERS = 24


class Bounded(click.ParamType[int | float]):
    def __init__(self, bound: Bound) -> None:
        self.bound = bound
        self.name = "integer" if bound.whole else "float"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> int | float:
        if isinstance(value, int | float) and self.bound.contains(value):
            return value  # a default
        try:
            return self.bound.parse(str(value))
        except ValueError:
            self.fail(f"{_shown(str(value))} is not {self.bound.phrase}.", param, ctx)


def _shown(raw: str) -> str:
    if len(raw) <= _SHOWN_CHARACTERS:
        return repr(raw)
    return f"{raw[:_SHOWN_CHARACTERS]!r}... ({len(raw)} characters)"


ID = Bounded(bounds.ID)
COUNT = Bounded(bounds.COUNT)
MONITOR_INTERVAL = Bounded(bounds.MONITOR_INTERVAL)
MONITOR_TICK = Bounded(bounds.MONITOR_TICK)
EXIT_TIMEOUT = Bounded(bounds.EXIT_TIMEOUT)
CAPTURE_LINES = Bounded(bounds.CAPTURE_LINES)

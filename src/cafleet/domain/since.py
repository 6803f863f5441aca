"""A search's `since`: an ISO time (without an offset: UTC), or an age before now (30m, 2h,
7d); the CLI's `--since` and the API's `since` take the same words."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from cafleet.domain.errors import UsageProblem

_AGE = re.compile(r"(\d{1,6})([smhdw])")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def parse_since(text: str, now: datetime) -> datetime:
    age = _AGE.fullmatch(text.strip())
    if age is not None:
        return now - timedelta(**{_UNITS[age.group(2)]: int(age.group(1))})
    try:
        when = datetime.fromisoformat(text.strip())
    except ValueError:
        raise UsageProblem(
            f"since {text!r} is neither an ISO time (2026-12-01T09:00) nor an age such as"
            " 30m, 2h or 7d"
        ) from None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)

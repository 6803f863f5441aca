"""The range of every number CAFleet takes from a user: ids, intervals, delays, sizes.

The CLI's option types, the admin API's request models and X-Fleet-Id header, the
settings parsers and the messaging service all read these, so a value is refused the
same way everywhere and nothing out of range reaches SQLite, `timedelta` or a sleep.
docs/settings.md lists them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

MAX_SQLITE_INTEGER = 2**63 - 1
_MAX_DIGITS = len(str(MAX_SQLITE_INTEGER))
MIB = 1024 * 1024


@dataclass(frozen=True)
class Bound:
    """An inclusive range; `whole` ranges take integers, the others any finite number."""

    low: int | float
    high: int | float
    whole: bool = True
    noun: str = "an integer"
    described: str | None = None  # instead of "<noun> between <low> and <high>"

    @property
    def phrase(self) -> str:
        """e.g. `an integer between 1 and 86400`, for "expected ..." and "... is not ..."."""
        if self.described is not None:
            return self.described
        return f"{self.noun} between {_number(self.low)} and {_number(self.high)}"

    def contains(self, value: int | float) -> bool:
        if isinstance(value, bool) or (self.whole and not isinstance(value, int)):
            return False
        if isinstance(value, float) and not math.isfinite(value):
            return False
        return self.low <= value <= self.high

    def parse(self, raw: str) -> int | float:
        """The value `raw` spells, or ValueError(`expected <phrase>`). Integers of any length
        are refused before int() (which refuses more than 4300 digits with its own text)."""
        text = raw.strip()
        try:
            if self.whole:
                digits = text.lstrip("+-").lstrip("0")
                value: int | float = int(text) if len(digits) <= _MAX_DIGITS else self.high + 1
            else:
                value = float(text)
        except ValueError:
            raise ValueError(f"expected {self.phrase}") from None
        if not self.contains(value):
            raise ValueError(f"expected {self.phrase}")
        return value

    def parse_int(self, raw: str) -> int:
        value = self.parse(raw)
        assert isinstance(value, int)
        return value

    def parse_float(self, raw: str) -> float:
        return float(self.parse(raw))


def _number(value: int | float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def seconds(low: float, high: float) -> Bound:
    return Bound(low, high, whole=False, noun="a number of seconds")


# every id (fleet, agent, member, task) is a positive SQLite INTEGER
ID = Bound(1, MAX_SQLITE_INTEGER)
# how many messages one listing returns (`message poll --limit`)
COUNT = Bound(1, MAX_SQLITE_INTEGER)
# seconds between a watched agent's pings (`monitor config --interval`, the WebUI)
MONITOR_INTERVAL = Bound(1, 86_400)
# seconds between the monitor loop's ticks (`monitor start --tick`)
MONITOR_TICK = Bound(1, 3_600)
# CAFLEET_MONITOR_STALL_INTERVAL: at most a day; 0 or less switches stall checks off
STALL_INTERVAL = Bound(
    -MAX_SQLITE_INTEGER,
    86_400,
    described="an integer up to 86400; 0 or less turns stall checks off",
)
# seconds `member delete` / `fleet delete` wait for an agent to exit
EXIT_TIMEOUT = seconds(0, 3_600)
# CAFLEET_START_TIMEOUT: seconds `member create` waits for the agent to take its prompt
START_TIMEOUT = seconds(1, 3_600)
# CAFLEET_SUBMIT_DELAY_<AGENT>: seconds between typing a preview and pressing Enter
SUBMIT_DELAY = seconds(0, 10)
# `member capture --lines`
CAPTURE_LINES = Bound(1, 100_000)
# CAFLEET_BROKER_PORT, `server --port`
PORT = Bound(1, 65_535)
# CAFLEET_MAX_TEXT_LEN: codepoints shown in compact renderings and previews
MAX_TEXT_LEN = Bound(1, 1_000_000)
# CAFLEET_MAX_BODY_BYTES: UTF-8 bytes of one message body (send, broadcast, nudge)
MAX_BODY_BYTES = Bound(1, 64 * MIB)
DEFAULT_MAX_BODY_BYTES = MIB

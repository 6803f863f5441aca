"""What the foreground loops (monitor, relay) share: their output, their complaints
about transient faults, and a sleep that a signal cuts short."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import TypeVar

from cafleet.application.ports.system import Clock
from cafleet.domain.errors import CafleetError
from cafleet.domain.terminal import escaped

SLEEP_STEP_SECONDS = 0.2
REPEAT_AFTER = timedelta(seconds=60)

Echo = Callable[[str], None]
R = TypeVar("R")


class Throttle:
    """Says a repeating complaint at most once a minute."""

    def __init__(self, clock: Clock, echo: Echo) -> None:
        self._clock = clock
        self._echo = echo
        self._last: dict[str, datetime] = {}

    def say(self, key: str, line: str) -> None:
        now = self._clock.now()
        last = self._last.get(key)
        if last is None or now - last >= REPEAT_AFTER:
            self._last[key] = now
            self._echo(line)


def until_closed(out: Echo, err: Echo, what: str) -> Echo:
    """Standard output whose reader went away (`| head -1`, a closed terminal) is dropped,
    said once on stderr; the loop (`what`) itself goes on."""
    closed: list[str] = []

    def echo(line: str) -> None:
        if closed:
            return
        try:
            out(line)
        except OSError as exc:  # EPIPE, EIO
            closed.append(exc.strerror or type(exc).__name__)
            err(f"standard output is closed ({closed[0]}); {what} goes on, on stderr only")

    return echo


def escaping(echo: Echo) -> Echo:
    return lambda line: echo(escaped(line))


def sleep_unless_stopped(clock: Clock, seconds: float, should_stop: Callable[[], bool]) -> None:
    remaining = seconds
    while remaining > 0 and not should_stop():
        step = min(SLEEP_STEP_SECONDS, remaining)
        clock.sleep(step)
        remaining -= step


def iso_now(clock: Clock) -> str:
    return clock.now().isoformat(timespec="microseconds")


def one_round(round_: Callable[[], R], clock: Clock, complaints: Throttle, what: str) -> R | None:
    """One round of a loop; a fault is one throttled complaint (None), never the loop's end."""
    try:
        return round_()
    except CafleetError as exc:
        reason = exc.message
    except Exception as exc:  # a bug in one round must not end the loop
        text = str(exc).strip()
        reason = f"{type(exc).__name__}: {text.splitlines()[0] if text else ''}"
    complaints.say(f"tick:{reason}", f"{iso_now(clock)} {what} failed: {reason}; retrying")
    return None

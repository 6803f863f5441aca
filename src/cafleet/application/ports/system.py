"""This machine: its clock, its processes, and the monitor loop's marks."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol


class Clock(Protocol):
    def now(self) -> datetime: ...
    def sleep(self, seconds: float) -> None: ...


class ProcessIdentity(Protocol):
    """This process and host, and whether another process on this host still exists."""

    def pid(self) -> int: ...
    def host(self) -> str: ...
    def alive(self, pid: int) -> bool: ...


@dataclass(frozen=True)
class LoopMark:
    """What a loop's mark shows: whether a live process holds it, that process's pid as
    this one sees it (0: it runs in a pid namespace this one cannot see), and the claim its
    holder wrote into it ("" when none)."""

    held: bool
    pid: int = 0
    claim: str = ""


class LoopMarks(Protocol):
    """Marks a long-running loop holds for its whole life (the monitor's), which any process
    of this host can test whatever its pid namespace: a pid recorded by a loop in a tool
    sandbox names another process outside it, and a loop outside is not seen from one."""

    def hold(self, name: str) -> LoopMark | None:
        """Take the mark for the rest of this process's life (or until `drop`); what it
        showed before: `held` means another process has it and it was not taken. None: no
        marks here (no runtime directory)."""
        ...

    def write(self, name: str, claim: str) -> None:
        """Record the claim in a mark this process holds."""
        ...

    def drop(self, name: str) -> None: ...
    def read(self, name: str) -> LoopMark | None:
        """The mark as it is now; None when it cannot be told (none was ever made)."""
        ...

"""In-memory loop marks: one board per host, one view of it per process.

A view knows its process by its pid on the host (`me`) and what it sees of another
process's pid (`sees`: 0 for a process it cannot see, as from inside a tool sandbox).
`end()` is the process ending: the kernel would drop its locks.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from cafleet.application.ports.system import LoopMark, LoopMarks


@dataclass
class MarkBoard:
    holders: dict[str, int] = field(default_factory=dict)  # mark -> its holder's host pid
    claims: dict[str, str] = field(default_factory=dict)


class FakeLoopMarks(LoopMarks):
    def __init__(
        self, board: MarkBoard, me: int, sees: Callable[[int], int] = lambda pid: pid
    ) -> None:
        self.board = board
        self.me = me
        self._sees = sees

    def hold(self, name: str) -> LoopMark | None:
        holder = self.board.holders.setdefault(name, self.me)
        if holder == self.me:
            return LoopMark(held=False, claim=self.board.claims.get(name, ""))
        return self.read(name)

    def write(self, name: str, claim: str) -> None:
        if self.board.holders.get(name) == self.me:
            self.board.claims[name] = claim

    def drop(self, name: str) -> None:
        if self.board.holders.get(name) == self.me:
            del self.board.holders[name]

    def read(self, name: str) -> LoopMark | None:
        holder = self.board.holders.get(name)
        seen = 0 if holder is None else self._sees(holder)
        return LoopMark(held=holder is not None, pid=seen, claim=self.board.claims.get(name, ""))

    def end(self) -> None:
        for name in [n for n, holder in self.board.holders.items() if holder == self.me]:
            del self.board.holders[name]

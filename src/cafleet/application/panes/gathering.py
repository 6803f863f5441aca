"""A rendezvous for the threads of one broadcast, so their keystrokes go as one batch.

A broadcast pushes each recipient's row in a thread of its own (each through its pane's
queue and the channel ladder). The rows that reach the keystroke rung wait here until every
thread of the broadcast is either waiting here too or finished; the last one to arrive (or to
finish) runs the whole batch, so all panes are typed into at once and share one submit delay
instead of paying it wave after wave. A thread outside any gathering runs its request alone.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

Request = TypeVar("Request")
Result = TypeVar("Result")
Batch = Callable[[Sequence[Request]], Sequence[Result]]


@dataclass
class _Slot(Generic[Request, Result]):
    request: Request
    done: bool = False
    result: Result | None = None
    error: BaseException | None = None


@dataclass
class Gathering(Generic[Request, Result]):
    """`parties` threads; each either submits requests (one at a time) or leaves."""

    parties: int
    _cond: threading.Condition = field(default_factory=threading.Condition)
    _waiting: list[_Slot[Request, Result]] = field(default_factory=list)
    _batch: Batch[Request, Result] | None = None

    def submit(self, request: Request, batch: Batch[Request, Result]) -> Result:
        slot: _Slot[Request, Result] = _Slot(request)
        with self._cond:
            self._waiting.append(slot)
            self._batch = batch
            due = self._take_when_complete()
        if due:
            self._run(due)
        with self._cond:
            self._cond.wait_for(lambda: slot.done)
        if slot.error is not None:
            raise slot.error
        return slot.result  # type: ignore[return-value]  # set with done

    def leave(self) -> None:
        with self._cond:
            self.parties -= 1
            due = self._take_when_complete()
        if due:
            self._run(due)

    def _take_when_complete(self) -> list[_Slot[Request, Result]]:
        """Under the lock: the batch, once no party could still add to it."""
        if not self._waiting or len(self._waiting) < self.parties:
            return []
        due, self._waiting = self._waiting, []
        return due

    def _run(self, due: list[_Slot[Request, Result]]) -> None:
        batch = self._batch
        assert batch is not None
        error: BaseException | None = None
        results: Sequence[Result] = ()
        try:
            results = batch([slot.request for slot in due])
        except BaseException as exc:  # every waiter must wake, each with the error
            error = exc
        with self._cond:
            for index, slot in enumerate(due):
                slot.error = error
                slot.result = None if error is not None else results[index]
                slot.done = True
            self._cond.notify_all()


class Gatherings:
    """Which gathering, if any, the current thread belongs to."""

    def __init__(self) -> None:
        self._local = threading.local()

    def current(self) -> Gathering[Any, Any] | None:
        return getattr(self._local, "gathering", None)

    @contextmanager
    def member(self, gathering: Gathering[Any, Any]) -> Iterator[None]:
        """Count this thread as one of the gathering's parties until it leaves."""
        self._local.gathering = gathering
        try:
            yield
        finally:
            self._local.gathering = None
            gathering.leave()

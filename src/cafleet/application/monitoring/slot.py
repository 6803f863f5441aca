"""A fleet's monitor runtime slot: the loop that claims it, keeps it by its heartbeat, and how
any process judges whether that loop still lives.

The heartbeat decides first: a stale one is a dead loop, whatever else is known. A fresh one
on another host is believed. On this host the loop's mark decides (LoopMarks: a lock the
loop holds for its life and in which it wrote its claim), since a pid means nothing across
pid namespaces: a loop in a tool sandbox records a pid such as 2 that names another process
outside, and a loop outside is not seen from a sandbox at all. Only a claim whose mark cannot
be read (no runtime directory, a loop of a version without marks) falls back to probing its
pid. A claim also tells the slot's owner from a later loop of the same pid and host (two
sandboxes), so a loop that stalled and was replaced stops at its next heartbeat.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from cafleet.application.ports.store import UnitOfWork, UnitOfWorkFactory
from cafleet.application.ports.system import Clock, LoopMark, LoopMarks, ProcessIdentity
from cafleet.domain.errors import Conflict, NotFound
from cafleet.domain.fleet import Fleet
from cafleet.domain.monitor import MonitorRuntime


def mark_name(fleet_id: int) -> str:
    return f"monitor-{fleet_id}"


def existing_fleet(uow: UnitOfWork, fleet_id: int) -> Fleet:
    fleet = uow.fleets.get(fleet_id)
    if fleet is None:
        raise NotFound(f"fleet {fleet_id} not found")
    return fleet


def live_fleet(uow: UnitOfWork, fleet_id: int) -> Fleet:
    return existing_fleet(uow, fleet_id).require_live()


class MonitorSlot:
    def __init__(
        self,
        uow: UnitOfWorkFactory,
        clock: Clock,
        process: ProcessIdentity,
        marks: LoopMarks | None = None,
    ) -> None:
        self._uow = uow
        self._clock = clock
        self._process = process
        self._marks = marks
        self._claimed: dict[int, MonitorRuntime] = {}  # the slots this process claimed

    def claim(self, fleet_id: int, tick_seconds: int) -> MonitorRuntime:
        name = mark_name(fleet_id)
        before = self._marks.hold(name) if self._marks else None
        try:
            with self._uow(write=True) as uow:
                live_fleet(uow, fleet_id)
                now = self._clock.now()
                current = uow.monitor.runtime(fleet_id) or MonitorRuntime(fleet_id)
                if current.is_live(now, self._process.host(), self._probe(current, before)):
                    shown = self._seen(current, before)
                    raise Conflict(
                        f"monitor already running for fleet {fleet_id}"
                        f" (pid {shown.pid} on {shown.host})"
                    )
                claimed = current.claimed(
                    self._process.pid(), self._process.host(), now, tick_seconds
                )
                uow.monitor.save_runtime(claimed)
                uow.commit()
        except BaseException:
            if self._marks and before is not None and not before.held:
                self._marks.drop(name)
            raise
        if self._marks:
            self._marks.write(name, claimed.claim_key())
        self._claimed[fleet_id] = claimed
        return claimed

    def release(self, fleet_id: int) -> None:
        with self._uow(write=True) as uow:
            runtime = uow.monitor.runtime(fleet_id)
            if runtime is not None and self._owns(runtime):
                uow.monitor.save_runtime(runtime.released())
                uow.commit()
        if self._marks:
            self._marks.drop(mark_name(fleet_id))
        self._claimed.pop(fleet_id, None)

    def heartbeat(self, uow: UnitOfWork, fleet_id: int) -> bool:
        """Inside the tick's write transaction: False when the slot is no longer ours."""
        claimed = self._claimed.get(fleet_id)
        if claimed is not None:
            runtime = uow.monitor.runtime(fleet_id)
            if runtime is None or runtime.claim_key() != claimed.claim_key():
                return False
        return uow.monitor.heartbeat(
            fleet_id, self._process.pid(), self._process.host(), self._clock.now()
        )

    def judged(self, runtime: MonitorRuntime | None) -> tuple[MonitorRuntime | None, bool]:
        """The slot as seen from here (its pid the loop's pid in this process's namespace
        where its mark tells it) and whether its loop lives."""
        if runtime is None:
            return None, False
        mark = self._marks.read(mark_name(runtime.fleet_id)) if self._marks else None
        alive = runtime.is_live(self._clock.now(), self._process.host(), self._probe(runtime, mark))
        return self._seen(runtime, mark), alive

    def _owns(self, runtime: MonitorRuntime) -> bool:
        claimed = self._claimed.get(runtime.fleet_id)
        if claimed is not None:
            return runtime.claim_key() == claimed.claim_key()
        return runtime.owned_by(self._process.pid(), self._process.host())

    def _probe(self, runtime: MonitorRuntime, mark: LoopMark | None) -> Callable[[int], bool]:
        """Whether the runtime's loop (on this host) lives: its mark's word where the mark
        is that loop's, else its pid probed."""
        if self._marks_claim(runtime, mark):
            held = mark is not None and mark.held
            return lambda _pid: held
        return self._process.alive

    def _seen(self, runtime: MonitorRuntime, mark: LoopMark | None) -> MonitorRuntime:
        """The runtime with the pid of its mark's holder where that is the loop and this
        process can see it (outside a sandbox: the loop's pid outside it too)."""
        if self._marks_claim(runtime, mark) and mark is not None and mark.held and mark.pid > 0:
            return replace(runtime, pid=mark.pid)
        return runtime

    @staticmethod
    def _marks_claim(runtime: MonitorRuntime, mark: LoopMark | None) -> bool:
        return mark is not None and bool(mark.claim) and mark.claim == runtime.claim_key()

"""The runtime slot judged across pid namespaces (a loop in a tool sandbox, a reader outside,
and the other way round): the loop's mark, not its pid, says whether it lives on this host.

A loop in a Codex tool sandbox is pid 2 there; outside, pid 2 is some other process that
exists, and the loop's own pid outside (here 9001) is what `kill` needs. From a sandbox, no
process outside is seen at all.
"""

from __future__ import annotations

from typing import Any

import pytest

from cafleet.adapters.fake.loop_marks import FakeLoopMarks, MarkBoard
from cafleet.application.monitoring.service import Stop
from cafleet.domain.errors import Conflict
from cafleet.domain.monitor import MonitorRuntime

IN_SANDBOX = 2  # what a loop in a sandbox records as its pid
SANDBOXED_LOOP = 9001  # that loop's pid outside the sandbox
OUTSIDE = 4242


def hidden(_pid: int) -> int:
    return 0  # from a sandbox no process outside is seen


@pytest.fixture
def board() -> MarkBoard:
    return MarkBoard()


def sandboxed(fleet: Any, new_process: Any, board: MarkBoard, host_pid: int) -> Any:
    """A MonitorService in a sandbox: its own pid is 2, and it sees nobody outside."""
    process = new_process(pid=IN_SANDBOX, dead=(OUTSIDE, SANDBOXED_LOOP))
    return fleet.service(process=process, marks=FakeLoopMarks(board, host_pid, hidden))


def outside(fleet: Any, new_process: Any, board: MarkBoard) -> Any:
    """A MonitorService outside any sandbox, where pid 2 exists (some other process)."""
    return fleet.service(process=new_process(pid=OUTSIDE), marks=FakeLoopMarks(board, OUTSIDE))


def test_a_loop_in_a_sandbox_runs_for_a_reader_outside_under_its_pid_there(
    fleet: Any, new_process: Any, board: MarkBoard
) -> None:
    loop = sandboxed(fleet, new_process, board, SANDBOXED_LOOP)
    loop.claim(fleet.fleet_id, 5)

    seen = outside(fleet, new_process, board).status(fleet.fleet_id)

    assert seen.running
    assert seen.runtime is not None and seen.runtime.pid == SANDBOXED_LOOP
    assert fleet.runtime().pid == IN_SANDBOX  # what the loop itself recorded


def test_a_loop_in_a_sandbox_that_ended_is_stopped_at_once(
    fleet: Any, new_process: Any, board: MarkBoard
) -> None:
    """Its heartbeat is fresh and pid 2 exists outside: only the mark knows it ended."""
    marks = FakeLoopMarks(board, SANDBOXED_LOOP, hidden)
    process = new_process(pid=IN_SANDBOX, dead=(OUTSIDE,))
    fleet.service(process=process, marks=marks).claim(fleet.fleet_id, 5)
    marks.end()  # the tool call, and the sandbox with it, ended

    reader = outside(fleet, new_process, board)

    assert not reader.status(fleet.fleet_id).running
    assert reader.claim(fleet.fleet_id, 5).pid == OUTSIDE  # and the slot may be taken


def test_a_loop_outside_runs_for_a_sandbox_which_cannot_start_a_second(
    fleet: Any, new_process: Any, board: MarkBoard
) -> None:
    outside(fleet, new_process, board).claim(fleet.fleet_id, 5)
    inside = sandboxed(fleet, new_process, board, SANDBOXED_LOOP)

    assert inside.status(fleet.fleet_id).running  # its pid probe alone would say dead
    with pytest.raises(Conflict, match=f"pid {OUTSIDE} on host-a"):
        inside.claim(fleet.fleet_id, 5)
    assert fleet.runtime().pid == OUTSIDE


def test_a_mark_that_is_not_the_loops_leaves_the_pid_to_decide(
    fleet: Any, new_process: Any, board: MarkBoard
) -> None:
    """A loop that holds no mark (started without a runtime directory, or by a version
    without marks) is judged by its pid, whatever mark another claim left."""
    fleet.service(process=new_process(pid=777)).claim(fleet.fleet_id, 5)  # no marks
    board.holders["monitor-1"], board.claims["monitor-1"] = 555, "555 host-a earlier"

    assert outside(fleet, new_process, board).status(fleet.fleet_id).running
    ended = new_process(pid=OUTSIDE, dead=(777,))
    assert (
        not fleet.service(process=ended, marks=FakeLoopMarks(board, OUTSIDE))
        .status(fleet.fleet_id)
        .running
    )


def test_a_stalled_loop_replaced_by_one_of_the_same_pid_stops_at_its_next_heartbeat(
    fleet: Any, new_process: Any, board: MarkBoard
) -> None:
    """Two sandboxes, both loops pid 2 on one host: the claim, not pid and host, owns the
    slot."""
    first = sandboxed(fleet, new_process, board, SANDBOXED_LOOP)
    first.claim(fleet.fleet_id, 5)
    fleet.clock.advance(60)  # its heartbeat went stale while it stalled
    second = sandboxed(fleet, new_process, board, SANDBOXED_LOOP + 1)
    taken = second.claim(fleet.fleet_id, 5)

    assert first.tick(fleet.fleet_id).stop is Stop.DISPLACED
    assert second.tick(fleet.fleet_id).stop is None
    first.release(fleet.fleet_id)  # its clean stop leaves the slot to its owner
    assert fleet.runtime().claim_key() == taken.claim_key()


def test_a_clean_stop_drops_the_mark(fleet: Any, new_process: Any, board: MarkBoard) -> None:
    loop = sandboxed(fleet, new_process, board, SANDBOXED_LOOP)
    loop.claim(fleet.fleet_id, 5)
    loop.release(fleet.fleet_id)

    assert board.holders == {}
    assert fleet.runtime() == MonitorRuntime(fleet.fleet_id, tick_seconds=5, host="host-a")

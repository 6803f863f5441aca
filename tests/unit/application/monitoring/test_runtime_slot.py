"""The per-fleet runtime slot and how the loop ends: claim, refuse a live owner,
take over a stale one, stop when displaced or when the fleet is deleted, release on stop."""

from __future__ import annotations

from typing import Any

import pytest

from cafleet.application.monitoring.service import Stop, TickReport
from cafleet.domain.errors import Conflict, NotFound
from cafleet.domain.monitor import MonitorRuntime

OTHER_PID = 777


def other_owner(fleet: Any, *, age: float, host: str = "host-a", tick: int = 5) -> MonitorRuntime:
    """A runtime row written by another process whose last heartbeat is `age` seconds old."""
    beat = fleet.clock.now()
    runtime = MonitorRuntime(fleet.fleet_id, OTHER_PID, host, beat, beat, tick)
    fleet.set_runtime(runtime)
    fleet.clock.advance(age)
    return runtime


# --------------------------------------------------------------------------- claim


def test_claiming_a_fresh_slot_records_pid_host_times_and_tick(fleet: Any) -> None:
    claimed = fleet.service().claim(fleet.fleet_id, 7)

    assert (
        fleet.runtime()
        == claimed
        == MonitorRuntime(fleet.fleet_id, 4242, "host-a", fleet.at(0), fleet.at(0), 7)
    )


def test_a_live_owner_on_this_host_is_refused(fleet: Any) -> None:
    mine = other_owner(fleet, age=10)

    with pytest.raises(Conflict) as refused:
        fleet.service().claim(fleet.fleet_id, 5)

    assert refused.value.message == (
        f"monitor already running for fleet {fleet.fleet_id} (pid {mine.pid} on {mine.host})"
    )
    assert fleet.runtime() == mine


def test_a_live_owner_on_another_host_is_refused_without_a_pid_probe(
    fleet: Any, new_process: Any
) -> None:
    other_owner(fleet, age=10, host="host-b")
    here = new_process(dead=(OTHER_PID,))

    with pytest.raises(Conflict):
        fleet.service(process=here).claim(fleet.fleet_id, 5)

    assert here.probed == []


def test_a_stale_owner_is_taken_over(fleet: Any) -> None:
    other_owner(fleet, age=16)

    claimed = fleet.service().claim(fleet.fleet_id, 5)

    assert (claimed.pid, claimed.started_at, claimed.last_tick_at) == (
        4242,
        fleet.at(16),
        fleet.at(16),
    )


def test_a_stale_owner_on_another_host_is_taken_over(fleet: Any) -> None:
    other_owner(fleet, age=3600, host="host-b")

    claimed = fleet.service().claim(fleet.fleet_id, 5)

    assert (claimed.pid, claimed.host) == (4242, "host-a")


def test_an_owner_with_a_long_tick_stays_live_for_three_ticks(fleet: Any) -> None:
    other_owner(fleet, age=89, tick=30)

    with pytest.raises(Conflict):
        fleet.service().claim(fleet.fleet_id, 5)


def test_a_fresh_owner_whose_process_is_gone_on_this_host_is_taken_over(
    fleet: Any, new_process: Any
) -> None:
    other_owner(fleet, age=1)

    claimed = fleet.service(process=new_process(dead=(OTHER_PID,))).claim(fleet.fleet_id, 5)

    assert claimed.pid == 4242


def test_a_released_slot_is_claimed_again(fleet: Any) -> None:
    first = fleet.service()
    first.claim(fleet.fleet_id, 5)
    first.release(fleet.fleet_id)

    assert fleet.service().claim(fleet.fleet_id, 5).pid == 4242


def test_claiming_for_an_unknown_fleet_fails(fleet: Any) -> None:
    with pytest.raises(NotFound) as missing:
        fleet.service().claim(999, 5)

    assert missing.value.message == "fleet 999 not found"


def test_claiming_for_a_deleted_fleet_is_refused_as_read_only(fleet: Any) -> None:
    fleet.fleets().delete(fleet.fleet_id, keep_panes=True)

    with pytest.raises(Conflict) as refused:
        fleet.service().claim(fleet.fleet_id, 5)

    assert refused.value.message == f"fleet {fleet.fleet_id} is deleted; its history is read-only"


# --------------------------------------------------------------------------- release


def test_release_clears_pid_and_times_but_keeps_tick_and_host(fleet: Any) -> None:
    service = fleet.service()
    service.claim(fleet.fleet_id, 9)
    fleet.clock.advance(30)

    service.release(fleet.fleet_id)

    assert fleet.runtime() == MonitorRuntime(fleet.fleet_id, None, "host-a", None, None, 9)


def test_release_leaves_another_owners_row_alone(fleet: Any) -> None:
    theirs = other_owner(fleet, age=0)

    fleet.service().release(fleet.fleet_id)

    assert fleet.runtime() == theirs


# --------------------------------------------------------------------------- the loop


def test_a_clean_stop_exits_0_and_releases_the_slot(fleet: Any) -> None:
    run = fleet.run(fleet.service(), ticks=3, tick_seconds=5)

    runtime = fleet.runtime()
    assert run.code == 0
    assert run.ticks == 3
    assert (runtime.pid, runtime.started_at, runtime.last_tick_at) == (None, None, None)
    assert runtime.tick_seconds == 5


def test_the_loop_announces_itself_first(fleet: Any) -> None:
    run = fleet.run(fleet.service(), ticks=1, tick_seconds=3, pid=9876)

    assert run.out[0] == f"monitor loop started (fleet {fleet.fleet_id}, tick 3s, pid 9876)"


def test_the_loop_refuses_to_start_beside_a_live_owner(fleet: Any) -> None:
    theirs = other_owner(fleet, age=2)

    with pytest.raises(Conflict, match="monitor already running for fleet"):
        fleet.run(fleet.service(), ticks=1)

    assert fleet.runtime() == theirs


def test_the_heartbeat_reaches_the_store_every_tick(fleet: Any) -> None:
    beats: list[Any] = []
    hooks = {n: (lambda: beats.append(fleet.runtime().last_tick_at)) for n in (2, 3, 4)}

    fleet.run(fleet.service(), ticks=4, tick_seconds=5, before_tick=hooks)

    assert beats == [fleet.at(0), fleet.at(5), fleet.at(10)]


def test_a_displaced_loop_exits_1_with_the_stop_line(fleet: Any) -> None:
    successor = MonitorRuntime(fleet.fleet_id, OTHER_PID, "host-b", fleet.at(0), fleet.at(0), 5)

    run = fleet.run(
        fleet.service(), ticks=10, before_tick={3: lambda: fleet.set_runtime(successor)}
    )

    assert run.code == 1
    assert run.out[-1] == "monitor loop stopped: runtime slot taken over by another process"
    assert run.reports[-1] == TickReport(stop=Stop.DISPLACED)
    assert fleet.runtime() == successor  # the successor's row is not released


def test_a_displaced_tick_wakes_nobody(fleet: Any) -> None:
    service = fleet.service()
    service.claim(fleet.fleet_id, 5)
    fleet.set_runtime(MonitorRuntime(fleet.fleet_id, OTHER_PID, "host-a", fleet.at(0), fleet.at(0)))

    report = service.tick(fleet.fleet_id)

    assert report == TickReport(stop=Stop.DISPLACED)
    assert fleet.wakes_typed() == []


def test_a_row_from_the_same_pid_on_another_host_displaces_too(fleet: Any) -> None:
    twin = MonitorRuntime(fleet.fleet_id, 4242, "host-b", fleet.at(0), fleet.at(0), 5)

    run = fleet.run(fleet.service(), ticks=10, before_tick={2: lambda: fleet.set_runtime(twin)})

    assert run.code == 1
    assert fleet.runtime() == twin


def test_deleting_the_fleet_stops_the_loop_with_exit_0(fleet: Any) -> None:
    delete = {4: lambda: fleet.fleets().delete(fleet.fleet_id, keep_panes=True)}

    run = fleet.run(fleet.service(), ticks=10, before_tick=delete)

    assert run.code == 0
    assert run.ticks == 4
    assert run.out[-1] == f"monitor loop stopped: fleet {fleet.fleet_id} was deleted"
    assert run.reports[-1] == TickReport(stop=Stop.FLEET_DELETED)
    assert fleet.runtime() is None


def test_a_deleted_fleet_tick_types_nothing(fleet: Any) -> None:
    service = fleet.service()
    service.claim(fleet.fleet_id, 5)
    fleet.fleets().delete(fleet.fleet_id, keep_panes=True)

    assert service.tick(fleet.fleet_id) == TickReport(stop=Stop.FLEET_DELETED)
    assert fleet.wakes_typed() == []

"""Hours of schedule through `run_loop` on a clock that moves only when the loop sleeps:
intervals (Director 180 s, member 720 s, edited), the stall-check cadence, and a restart
that finds the cadence persisted."""

from __future__ import annotations

import itertools
from typing import Any

HOUR = 3600


def every(step: int, until: int, start: int = 0) -> list[float]:
    return [float(t) for t in range(start, until, step)]


def test_director_every_180s_and_member_every_720s_over_two_hours(fleet: Any) -> None:
    run = fleet.run(fleet.service(stall_interval=0), ticks=2 * HOUR // 60, tick_seconds=60)

    assert run.code == 0
    assert run.wake_times(fleet.director_id) == every(180, 2 * HOUR)
    assert run.wake_times(fleet.members["worker"]) == every(720, 2 * HOUR)
    assert {reasons for _, _, _, reasons in run.wakes()} == {("interval",)}


def test_one_wake_is_typed_per_tick_with_anything_due(fleet: Any) -> None:
    run = fleet.run(fleet.service(stall_interval=0), ticks=HOUR // 60, tick_seconds=60)

    due_ticks = {at for at, _, _, _ in run.wakes()}
    assert len(fleet.wakes_typed()) == len(due_ticks) == 20  # every 180 s in one hour


def test_a_tick_that_does_not_divide_the_interval_wakes_at_the_first_tick_past_it(
    fleet: Any,
) -> None:
    run = fleet.run(fleet.service(stall_interval=0), ticks=HOUR // 7, tick_seconds=7)

    times = run.wake_times(fleet.director_id)
    gaps = {b - a for a, b in itertools.pairwise(times)}
    assert gaps == {182.0}  # 26 ticks of 7 s: the first tick at or past 180 s


def test_the_stall_check_cadence_runs_beside_the_interval(fleet: Any) -> None:
    run = fleet.run(fleet.service(stall_interval=240), ticks=HOUR // 60, tick_seconds=60)
    director, member = fleet.director_id, fleet.members["worker"]

    assert run.reasons_at(director, 0) == ("interval", "stall-check")
    assert run.reasons_at(director, 180) == ("interval",)
    assert run.reasons_at(director, 240) == ("stall-check",)
    assert run.reasons_at(director, 720) == ("interval", "stall-check")
    assert run.reasons_at(member, 240) == ("stall-check",)
    assert run.reasons_at(member, 720) == ("interval", "stall-check")
    assert list(run.wake_times(member)) == every(240, HOUR)


def test_a_stall_check_only_wake_does_not_shift_the_interval(fleet: Any) -> None:
    run = fleet.run(fleet.service(stall_interval=240), ticks=HOUR // 60, tick_seconds=60)

    interval_times = [
        (at - fleet.at(0)).total_seconds()
        for at, agent, _, reasons in run.wakes()
        if agent == fleet.members["worker"] and "interval" in reasons
    ]
    assert interval_times == every(720, HOUR)


def test_with_stall_checks_disabled_no_stall_reason_appears_in_hours(fleet: Any) -> None:
    run = fleet.run(fleet.service(stall_interval=0), ticks=3 * HOUR // 30, tick_seconds=30)

    assert all("stall-check" not in reasons for _, _, _, reasons in run.wakes())
    assert fleet.schedule(fleet.director_id).last_stall_check_at is None


def test_an_interval_edited_mid_run_applies_from_the_last_ping(fleet: Any) -> None:
    member = fleet.members["worker"]
    service = fleet.service(stall_interval=0)
    edit = {11: lambda: service.config(fleet.fleet_id, member, interval_seconds=300)}

    run = fleet.run(service, ticks=HOUR // 60, tick_seconds=60, before_tick=edit)

    # pinged at 0; from the 11th tick (600 s) the 300 s interval is already past
    assert run.wake_times(member) == [0.0, *every(300, HOUR, 600)]


def test_a_director_interval_edited_longer_postpones_its_wakes(fleet: Any) -> None:
    service = fleet.service(stall_interval=0)
    service.config(fleet.fleet_id, fleet.director_id, interval_seconds=900)

    run = fleet.run(service, ticks=HOUR // 60, tick_seconds=60)

    assert run.wake_times(fleet.director_id) == every(900, HOUR)


def test_a_disabled_member_is_skipped_for_hours_and_due_when_enabled(fleet: Any) -> None:
    member = fleet.members["worker"]
    service = fleet.service(stall_interval=240)
    service.config(fleet.fleet_id, member, enabled=False)
    enable = {121: lambda: service.config(fleet.fleet_id, member, enabled=True)}

    run = fleet.run(service, ticks=150, tick_seconds=60, before_tick=enable)

    assert run.wake_times(member)[0] == 120 * 60
    assert run.reasons_at(member, 120 * 60) == ("interval", "stall-check")


def test_a_clock_that_creeps_by_a_millisecond_per_reading_keeps_the_cadence(
    creeping_fleet: Any,
) -> None:
    """Every clock reading advances 1 ms, so no two ticks see round numbers."""
    fleet = creeping_fleet

    run = fleet.run(fleet.service(stall_interval=0), ticks=2 * HOUR // 5, tick_seconds=5)

    times = run.wake_times(fleet.director_id)
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert len(times) == 40
    assert all(180 <= gap < 185 for gap in gaps)


# --------------------------------------------------------------------------- restart


def test_the_stall_check_time_is_persisted_in_the_store(fleet: Any) -> None:
    fleet.run(fleet.service(stall_interval=240), ticks=6, tick_seconds=60)

    for agent_id in (fleet.director_id, fleet.members["worker"]):
        assert fleet.schedule(agent_id).last_stall_check_at == fleet.at(240)


def test_a_restart_makes_nothing_due_at_once(fleet: Any) -> None:
    first = fleet.run(fleet.service(stall_interval=240), ticks=2, tick_seconds=60)
    typed_before = len(fleet.wakes_typed())

    second = fleet.run(fleet.service(stall_interval=240), ticks=1, tick_seconds=60)

    assert first.wake_times(fleet.director_id) == [0.0]
    assert second.code == 0
    assert second.wakes() == []
    assert len(fleet.wakes_typed()) == typed_before


def test_after_a_restart_the_cadence_continues_where_it_was(fleet: Any) -> None:
    fleet.run(fleet.service(stall_interval=240), ticks=2, tick_seconds=60)

    second = fleet.run(fleet.service(stall_interval=240), ticks=4, tick_seconds=60)

    # the second run ticks at 120, 180, 240, 300
    assert second.wake_times(fleet.director_id) == [180.0, 240.0]
    assert second.reasons_at(fleet.director_id, 180) == ("interval",)
    assert second.reasons_at(fleet.director_id, 240) == ("stall-check",)
    assert second.reasons_at(fleet.members["worker"], 240) == ("stall-check",)


def test_a_restart_by_another_process_sees_the_same_cadence(fleet: Any, new_process: Any) -> None:
    fleet.run(fleet.service(stall_interval=240), ticks=2, tick_seconds=60)
    successor = fleet.service(stall_interval=240, process=new_process(pid=5151))

    second = fleet.run(successor, ticks=1, tick_seconds=60, pid=5151)

    assert second.wakes() == []
    assert fleet.runtime().pid is None  # released again by the successor


# --------------------------------------------------------------------------- clock jumps


def test_after_the_clock_jumps_back_an_hour_the_cadence_resumes_at_once(fleet: Any) -> None:
    """Times recorded before a backward jump lie in the future: they count as elapsed."""
    member = fleet.members["worker"]
    service = fleet.service(stall_interval=240)
    service.config(fleet.fleet_id, member, interval_seconds=60)
    ahead = fleet.at(HOUR)
    for agent_id in (fleet.director_id, member):
        fleet.edit_schedule(agent_id, last_ping_at=ahead, last_stall_check_at=ahead)

    run = fleet.run(service, ticks=5, tick_seconds=60)  # 0 s .. 240 s

    assert run.wake_times(member) == [0.0, 60.0, 120.0, 180.0, 240.0]
    assert run.reasons_at(member, 0) == ("interval", "stall-check")
    assert run.reasons_at(fleet.director_id, 0) == ("interval", "stall-check")
    assert run.wake_times(fleet.director_id) == [0.0, 180.0, 240.0]

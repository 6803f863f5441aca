"""`monitor status` and `monitor config` on the service: which rows the status shows,
pending counts, the running flag, schedule edits and the not-enrolled error."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from cafleet.domain.errors import Conflict, NotFound
from cafleet.domain.message import MessageState, broadcast_summary
from cafleet.domain.monitor import MonitorRuntime, MonitorSchedule


def rows(status: Any) -> list[tuple[int, str, str, int]]:
    return [(r.agent.agent_id, r.agent.name, r.role, r.pending) for r in status.rows]


# --------------------------------------------------------------------------- status rows


def test_status_lists_only_the_director_and_ordinary_members(make_fleet: Any) -> None:
    fleet = make_fleet(members=2)

    status = fleet.service().status(fleet.fleet_id)

    assert rows(status) == [
        (fleet.director_id, "Director", "director", 0),
        (fleet.members["worker-1"], "worker-1", "member", 0),
        (fleet.members["worker-2"], "worker-2", "member", 0),
    ]


def test_status_leaves_out_deregistered_members(fleet: Any) -> None:
    gone = fleet.member("leaver")
    fleet.deregister(gone)

    status = fleet.service().status(fleet.fleet_id)

    assert gone not in [r.agent.agent_id for r in status.rows]


def test_status_shows_each_rows_schedule(fleet: Any) -> None:
    member = fleet.members["worker"]
    service = fleet.service()
    service.config(fleet.fleet_id, member, interval_seconds=90, enabled=False)

    status = service.status(fleet.fleet_id)

    schedules = {r.agent.agent_id: r.schedule for r in status.rows}
    assert schedules[fleet.director_id] == MonitorSchedule(fleet.director_id, 180)
    assert schedules[member] == MonitorSchedule(member, 90, enabled=False)


def test_pending_counts_only_unanswered_messages_owned_by_the_agent(fleet: Any) -> None:
    member, director = fleet.members["worker"], fleet.director_id
    for _ in range(3):
        fleet.message(to=member, sender=director)
    acked = fleet.message(to=member, sender=director)
    with fleet.store() as uow:
        done = uow.messages.get(acked)
    fleet.save_message(replace(done, state=MessageState.COMPLETED))
    fleet.message(to=director, sender=member)  # sent by the member: not its pending
    with fleet.store(write=True) as uow:
        uow.messages.add(broadcast_summary(member, 1, fleet.clock.now()))
        uow.commit()

    status = fleet.service().status(fleet.fleet_id)

    assert {r.agent.agent_id: r.pending for r in status.rows} == {director: 1, member: 3}


def test_status_of_an_unknown_fleet_fails(fleet: Any) -> None:
    with pytest.raises(NotFound) as missing:
        fleet.service().status(404)

    assert missing.value.message == "fleet 404 not found"


def test_status_of_a_deleted_fleet_is_stopped_with_no_schedules(fleet: Any) -> None:
    service = fleet.service()
    service.claim(fleet.fleet_id, 5)
    fleet.fleets().delete(fleet.fleet_id, keep_panes=True)

    status = service.status(fleet.fleet_id)

    assert (status.running, status.runtime, status.rows) == (False, None, ())
    assert status.fleet_deleted_at == fleet.clock.now()


def test_config_changes_in_a_deleted_fleet_are_refused_as_read_only(fleet: Any) -> None:
    director = fleet.director_id
    fleet.fleets().delete(fleet.fleet_id, keep_panes=True)

    with pytest.raises(Conflict) as refused:
        fleet.service().config(fleet.fleet_id, director, interval_seconds=60)

    assert refused.value.message == f"fleet {fleet.fleet_id} is deleted; its history is read-only"


# --------------------------------------------------------------------------- running flag


def test_a_fleet_that_never_ran_a_monitor_is_stopped(fleet: Any) -> None:
    status = fleet.service().status(fleet.fleet_id)

    assert (status.running, status.runtime) == (False, None)


def test_a_claimed_slot_shows_running(fleet: Any) -> None:
    service = fleet.service()
    service.claim(fleet.fleet_id, 5)

    status = service.status(fleet.fleet_id)

    assert status.running
    assert status.runtime == MonitorRuntime(
        fleet.fleet_id, 4242, "host-a", fleet.at(0), fleet.at(0), 5
    )


def test_a_released_slot_shows_stopped_and_keeps_the_tick(fleet: Any) -> None:
    service = fleet.service()
    service.claim(fleet.fleet_id, 8)
    service.release(fleet.fleet_id)

    status = service.status(fleet.fleet_id)

    assert not status.running
    assert status.runtime.tick_seconds == 8


def test_a_stale_heartbeat_shows_stopped(fleet: Any) -> None:
    service = fleet.service()
    service.claim(fleet.fleet_id, 5)
    fleet.clock.advance(16)

    assert not service.status(fleet.fleet_id).running


def test_a_fresh_heartbeat_from_another_host_shows_running(fleet: Any, new_process: Any) -> None:
    fleet.set_runtime(MonitorRuntime(fleet.fleet_id, 1, "host-b", fleet.at(0), fleet.at(0), 5))
    here = new_process(dead=(1,))

    assert fleet.service(process=here).status(fleet.fleet_id).running


def test_a_fresh_heartbeat_from_a_dead_process_on_this_host_shows_stopped(
    fleet: Any, new_process: Any
) -> None:
    fleet.set_runtime(MonitorRuntime(fleet.fleet_id, 1, "host-a", fleet.at(0), fleet.at(0), 5))

    assert not fleet.service(process=new_process(dead=(1,))).status(fleet.fleet_id).running


def test_status_reports_the_time_it_was_taken(fleet: Any) -> None:
    fleet.clock.advance(42)

    assert fleet.service().status(fleet.fleet_id).now == fleet.at(42)


# --------------------------------------------------------------------------- config


def test_config_without_edits_shows_the_schedule(fleet: Any) -> None:
    member = fleet.members["worker"]

    shown = fleet.service().config(fleet.fleet_id, member)

    assert shown == MonitorSchedule(member, 720)


def test_config_sets_the_interval(fleet: Any) -> None:
    member = fleet.members["worker"]

    edited = fleet.service().config(fleet.fleet_id, member, interval_seconds=1)

    assert edited.interval_seconds == 1
    assert fleet.schedule(member) == edited


def test_config_disables_and_clears_the_stall_check_time(fleet: Any) -> None:
    member = fleet.members["worker"]
    fleet.edit_schedule(member, last_ping_at=fleet.at(0), last_stall_check_at=fleet.at(0))

    edited = fleet.service().config(fleet.fleet_id, member, enabled=False)

    assert (
        fleet.schedule(member)
        == edited
        == MonitorSchedule(
            member, 720, enabled=False, last_ping_at=fleet.at(0), last_stall_check_at=None
        )
    )


def test_config_enables_without_touching_the_times(fleet: Any) -> None:
    member = fleet.members["worker"]
    fleet.edit_schedule(member, enabled=False, last_ping_at=fleet.at(0))

    edited = fleet.service().config(fleet.fleet_id, member, enabled=True)

    assert (edited.enabled, edited.last_ping_at) == (True, fleet.at(0))


def test_config_edits_the_director_too(fleet: Any) -> None:
    edited = fleet.service().config(fleet.fleet_id, fleet.director_id, interval_seconds=60)

    assert fleet.schedule(fleet.director_id) == edited
    assert edited.interval_seconds == 60


def test_a_show_writes_nothing(fleet: Any) -> None:
    commits = fleet.store.commits

    fleet.service().config(fleet.fleet_id, fleet.members["worker"])

    assert fleet.store.commits == commits


def not_enrolled(fleet: Any, agent_id: int, fleet_id: int | None = None) -> str:
    fid = fleet.fleet_id if fleet_id is None else fleet_id
    with pytest.raises(NotFound) as refused:
        fleet.service().config(fid, agent_id, interval_seconds=60)
    return refused.value.message


def test_config_for_an_unknown_agent_is_not_enrolled(fleet: Any) -> None:
    assert not_enrolled(fleet, 999) == (
        f"agent 999 is not enrolled in monitoring for fleet {fleet.fleet_id}."
    )


def test_config_for_another_fleets_member_is_not_enrolled(fleet: Any, make_fleet: Any) -> None:
    other = make_fleet()
    stranger = other.members["worker"]

    assert not_enrolled(fleet, stranger) == (
        f"agent {stranger} is not enrolled in monitoring for fleet {fleet.fleet_id}."
    )
    assert other.schedule(stranger).interval_seconds == 720


def test_config_for_the_monitoring_member_is_not_enrolled(fleet: Any) -> None:
    assert not_enrolled(fleet, fleet.watcher_id) == (
        f"agent {fleet.watcher_id} is not enrolled in monitoring for fleet {fleet.fleet_id}."
    )


def test_config_for_the_administrator_is_not_enrolled(fleet: Any) -> None:
    assert not_enrolled(fleet, fleet.admin_id) == (
        f"agent {fleet.admin_id} is not enrolled in monitoring for fleet {fleet.fleet_id}."
    )


def test_config_for_a_deregistered_member_is_not_enrolled(fleet: Any) -> None:
    member = fleet.members["worker"]
    fleet.deregister(member)

    assert not_enrolled(fleet, member) == (
        f"agent {member} is not enrolled in monitoring for fleet {fleet.fleet_id}."
    )


def test_config_through_an_unknown_fleet_is_not_enrolled(fleet: Any) -> None:
    member = fleet.members["worker"]

    assert not_enrolled(fleet, member, fleet_id=404) == (
        f"agent {member} is not enrolled in monitoring for fleet 404."
    )


def test_the_not_enrolled_error_is_the_same_when_only_showing(fleet: Any) -> None:
    with pytest.raises(NotFound) as refused:
        fleet.service().config(fleet.fleet_id, fleet.admin_id)

    assert refused.value.message == (
        f"agent {fleet.admin_id} is not enrolled in monitoring for fleet {fleet.fleet_id}."
    )

"""Fleet liveness and soft delete; monitoring schedule edits."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from cafleet.domain.errors import CafleetError, ErrorKind, Invalid, UsageProblem
from cafleet.domain.fleet import Agent, CardKind, Fleet
from cafleet.domain.monitor import (
    DIRECTOR_INTERVAL_SECONDS,
    MEMBER_INTERVAL_SECONDS,
    MonitorSchedule,
)

T0 = datetime(2026, 1, 1, tzinfo=UTC)
T1 = T0 + timedelta(hours=1)
T2 = T0 + timedelta(hours=2)


def test_a_live_fleet_passes_require_live() -> None:
    fleet = Fleet(3, "alpha", T0)

    assert fleet.require_live() is fleet


def test_a_deleted_fleet_is_read_only() -> None:
    fleet = Fleet(3, "alpha", T0).deleted(T1)

    with pytest.raises(CafleetError) as raised:
        fleet.require_live()

    assert raised.value.message == "fleet 3 is deleted; its history is read-only"
    assert raised.value.kind is ErrorKind.CONFLICT


def test_deleting_twice_keeps_the_first_deletion_time() -> None:
    once = Fleet(3, "alpha", T0).deleted(T1)
    twice = once.deleted(T2)

    assert twice.deleted_at == T1
    assert twice.is_deleted


def test_a_fleet_gets_its_root_director_exactly_once() -> None:
    fleet = Fleet(3, "alpha", T0).with_director(7)

    assert fleet.director_agent_id == 7
    with pytest.raises(Invalid) as raised:
        fleet.with_director(8)
    assert raised.value.message == "fleet 3 already has a root Director"


def test_enrollment_intervals_are_180s_for_the_director_and_720s_for_members() -> None:
    assert (DIRECTOR_INTERVAL_SECONDS, MEMBER_INTERVAL_SECONDS) == (180, 720)


def schedule() -> MonitorSchedule:
    return MonitorSchedule(
        agent_id=4,
        interval_seconds=720,
        enabled=True,
        last_ping_at=T0,
        last_stall_check_at=T1,
        last_native_status="working",
    )


def test_reconfigured_without_edits_changes_nothing() -> None:
    assert schedule().reconfigured(None, None) == schedule()


def test_reconfigured_interval_keeps_the_stall_check_time() -> None:
    updated = schedule().reconfigured(60, None)

    assert updated.interval_seconds == 60
    assert updated.enabled
    assert updated.last_stall_check_at == T1


def test_disabling_clears_the_stall_check_time_and_nothing_else() -> None:
    updated = schedule().reconfigured(None, False)

    assert not updated.enabled
    assert updated.last_stall_check_at is None
    assert updated.last_ping_at == T0
    assert updated.last_native_status == "working"
    assert updated.interval_seconds == 720


def test_enabling_keeps_the_stall_check_time() -> None:
    updated = schedule().reconfigured(30, True)

    assert updated.enabled
    assert updated.interval_seconds == 30
    assert updated.last_stall_check_at == T1


def _member_director_fleet() -> tuple[Fleet, Agent, Agent]:
    at = datetime(2026, 1, 1, tzinfo=UTC)
    fleet = Fleet(1, "f", at, director_agent_id=1)
    director = Agent(1, 1, "Director", "d", at)
    admin = Agent(2, 1, "Administrator", "a", at, card_kind=CardKind.ADMINISTRATOR)
    return fleet, director, admin


def test_only_the_active_root_director_may_own_members() -> None:
    fleet, director, admin = _member_director_fleet()
    assert fleet.require_member_director(director, 1) is director
    with pytest.raises(UsageProblem, match="Administrator cannot be a director"):
        fleet.require_member_director(admin, 2)
    with pytest.raises(UsageProblem, match="not found or not active in fleet '1'"):
        fleet.require_member_director(None, 9)
    member = Agent(3, 1, "m", "m", director.registered_at)
    with pytest.raises(UsageProblem, match="nested teams are not supported"):
        fleet.require_member_director(member, 3)

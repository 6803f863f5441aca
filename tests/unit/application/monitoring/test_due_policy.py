"""MonitorSchedule: when a watched agent is due, and what a tick records
after a delivered wake (after_wake) or on every tick (observed)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from cafleet.domain.monitor import MonitorSchedule

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
STALL = 240


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def pinged(
    interval: int = 720,
    *,
    last_ping: float | None = 0,
    last_stall: float | None = 0,
    native: str | None = None,
    enabled: bool = True,
) -> MonitorSchedule:
    return MonitorSchedule(
        agent_id=3,
        interval_seconds=interval,
        enabled=enabled,
        last_ping_at=None if last_ping is None else at(last_ping),
        last_stall_check_at=None if last_stall is None else at(last_stall),
        last_native_status=native,
    )


# --------------------------------------------------------------------------- interval


def test_a_never_pinged_agent_is_due_for_interval_and_stall_check() -> None:
    fresh = MonitorSchedule(agent_id=3, interval_seconds=720)

    assert fresh.due(T0, alive=True, stall_interval=STALL) == ("interval", "stall-check")


def test_interval_is_due_once_the_full_interval_has_elapsed() -> None:
    schedule = pinged(180, last_stall=None)

    assert schedule.due(at(180), alive=True, stall_interval=0) == ("interval",)
    assert schedule.due(at(181), alive=True, stall_interval=0) == ("interval",)


def test_interval_is_not_due_a_microsecond_before_it_elapses() -> None:
    schedule = pinged(180)
    just_before = at(180) - timedelta(microseconds=1)

    assert schedule.due(just_before, alive=True, stall_interval=0) == ()


def test_an_edited_interval_applies_from_the_last_ping() -> None:
    schedule = pinged(720).reconfigured(60, None)

    assert schedule.due(at(59), alive=True, stall_interval=0) == ()
    assert schedule.due(at(60), alive=True, stall_interval=0) == ("interval",)


def test_a_disabled_agent_is_never_due() -> None:
    schedule = pinged(last_ping=None, last_stall=None, native="working", enabled=False)

    assert schedule.due(at(10_000), alive=True, stall_interval=STALL, native_status="blocked") == ()


def test_an_agent_whose_pane_is_not_alive_is_never_due() -> None:
    schedule = pinged(last_ping=None, last_stall=None, native="working")

    assert schedule.due(at(10_000), alive=False, stall_interval=STALL, native_status="done") == ()


# --------------------------------------------------------------------------- stall-check


def test_stall_check_is_due_on_its_own_cadence_independent_of_the_interval() -> None:
    schedule = pinged(720, last_ping=0, last_stall=0)

    assert schedule.due(at(239), alive=True, stall_interval=STALL) == ()
    assert schedule.due(at(240), alive=True, stall_interval=STALL) == ("stall-check",)


def test_stall_check_without_a_baseline_is_due_at_once() -> None:
    schedule = pinged(720, last_ping=0, last_stall=None)

    assert schedule.due(at(1), alive=True, stall_interval=STALL) == ("stall-check",)


@pytest.mark.parametrize("stall_interval", [0, -1, -240])
def test_a_stall_interval_of_zero_or_less_disables_stall_checks(stall_interval: int) -> None:
    schedule = pinged(720, last_ping=0, last_stall=None)

    assert schedule.due(at(100_000), alive=True, stall_interval=stall_interval) == ("interval",)
    assert schedule.due(at(1), alive=True, stall_interval=stall_interval) == ()


# --------------------------------------------------------------------------- native states


@pytest.mark.parametrize("state", ["blocked", "done"])
def test_a_transition_into_a_waking_state_adds_a_status_reason(state: str) -> None:
    schedule = pinged(native="working")

    assert schedule.due(at(1), alive=True, stall_interval=STALL, native_status=state) == (
        f"status:{state}",
    )


@pytest.mark.parametrize("state", ["blocked", "done"])
def test_the_first_sighting_of_a_waking_state_counts_as_a_transition(state: str) -> None:
    schedule = pinged(native=None)

    assert schedule.due(at(1), alive=True, stall_interval=STALL, native_status=state) == (
        f"status:{state}",
    )


@pytest.mark.parametrize("state", ["blocked", "done"])
def test_staying_in_a_waking_state_does_not_repeat_the_reason(state: str) -> None:
    schedule = pinged(native=state)

    assert schedule.due(at(1), alive=True, stall_interval=STALL, native_status=state) == ()


def test_moving_from_blocked_to_done_is_a_new_transition() -> None:
    schedule = pinged(native="blocked")

    assert schedule.due(at(1), alive=True, stall_interval=STALL, native_status="done") == (
        "status:done",
    )


@pytest.mark.parametrize("state", ["idle", "working", "unknown", None])
def test_other_states_add_no_reason(state: str | None) -> None:
    schedule = pinged(native="blocked")

    assert schedule.due(at(1), alive=True, stall_interval=STALL, native_status=state) == ()


def test_reasons_are_ordered_interval_then_stall_check_then_status() -> None:
    schedule = pinged(180, last_ping=0, last_stall=0, native="working")

    reasons = schedule.due(at(300), alive=True, stall_interval=STALL, native_status="blocked")

    assert reasons == ("interval", "stall-check", "status:blocked")


def test_blocked_retriggers_after_leaving_and_reentering_it() -> None:
    """blocked (wake) -> blocked (quiet) -> working (recorded at once) -> blocked (wake)."""
    schedule = pinged(720, native="working")

    first = schedule.due(at(1), alive=True, stall_interval=0, native_status="blocked")
    schedule = schedule.after_wake(first, at(1), "blocked")
    still = schedule.due(at(2), alive=True, stall_interval=0, native_status="blocked")
    schedule = schedule.observed(alive=True, native_status="blocked")
    schedule = schedule.observed(alive=True, native_status="working")
    left = schedule.due(at(3), alive=True, stall_interval=0, native_status="working")
    again = schedule.due(at(4), alive=True, stall_interval=0, native_status="blocked")

    assert (first, still, left, again) == (("status:blocked",), (), (), ("status:blocked",))


# --------------------------------------------------------------------------- after_wake


def test_an_interval_wake_records_the_ping_and_keeps_the_stall_baseline() -> None:
    schedule = pinged(180, last_ping=0, last_stall=100)

    woke = schedule.after_wake(("interval",), at(200), None)

    assert (woke.last_ping_at, woke.last_stall_check_at) == (at(200), at(100))


def test_a_stall_check_only_wake_leaves_the_ping_cadence_alone() -> None:
    schedule = pinged(720, last_ping=0, last_stall=0)

    woke = schedule.after_wake(("stall-check",), at(240), None)

    assert (woke.last_ping_at, woke.last_stall_check_at) == (at(0), at(240))


def test_a_status_wake_counts_as_a_ping_and_records_the_state() -> None:
    schedule = pinged(720, last_ping=0, last_stall=0, native="working")

    woke = schedule.after_wake(("status:done",), at(30), "done")

    assert (woke.last_ping_at, woke.last_stall_check_at, woke.last_native_status) == (
        at(30),
        at(0),
        "done",
    )


def test_a_wake_with_every_reason_records_every_field() -> None:
    schedule = pinged(180, last_ping=0, last_stall=0, native="working")

    woke = schedule.after_wake(("interval", "stall-check", "status:blocked"), at(300), "blocked")

    assert woke == MonitorSchedule(3, 180, True, at(300), at(300), "blocked")


def test_a_wake_without_a_native_state_keeps_the_recorded_one() -> None:
    schedule = pinged(native="blocked")

    assert schedule.after_wake(("interval",), at(720), None).last_native_status == "blocked"


def test_after_wake_never_touches_the_interval_or_the_switch() -> None:
    schedule = pinged(333)

    woke = schedule.after_wake(("interval", "stall-check"), at(400), "idle")

    assert (woke.interval_seconds, woke.enabled, woke.agent_id) == (333, True, 3)


# --------------------------------------------------------------------------- observed


def test_observing_a_live_enabled_agent_changes_nothing() -> None:
    schedule = pinged(native="working")

    assert schedule.observed(alive=True, native_status=None) == schedule


def test_a_dead_or_pending_pane_forgets_the_stall_baseline() -> None:
    schedule = pinged(last_stall=100)

    assert schedule.observed(alive=False, native_status=None).last_stall_check_at is None


def test_a_disabled_agent_forgets_the_stall_baseline() -> None:
    schedule = pinged(last_stall=100, enabled=False)

    assert schedule.observed(alive=True, native_status=None).last_stall_check_at is None


@pytest.mark.parametrize("state", ["idle", "working", "unknown"])
def test_non_waking_states_are_recorded_at_once(state: str) -> None:
    schedule = pinged(native="blocked")

    assert schedule.observed(alive=True, native_status=state).last_native_status == state


@pytest.mark.parametrize("state", ["blocked", "done"])
def test_waking_states_are_left_for_the_wake_to_record(state: str) -> None:
    schedule = pinged(native="working")

    assert schedule.observed(alive=True, native_status=state).last_native_status == "working"


def test_observing_without_a_native_state_keeps_the_recorded_one() -> None:
    schedule = pinged(native="working")

    assert schedule.observed(alive=True, native_status=None).last_native_status == "working"


def test_observed_keeps_the_ping_time() -> None:
    schedule = pinged(last_ping=50, last_stall=60)

    assert schedule.observed(alive=False, native_status="idle").last_ping_at == at(50)


# --------------------------------------------------------------------------- clock jumps


def test_a_ping_recorded_in_the_future_counts_as_elapsed() -> None:
    schedule = pinged(720, last_ping=3600, last_stall=None)

    assert schedule.due(at(1), alive=True, stall_interval=0) == ("interval",)


def test_a_stall_check_recorded_in_the_future_counts_as_elapsed() -> None:
    schedule = pinged(720, last_ping=0, last_stall=3600)

    assert schedule.due(at(1), alive=True, stall_interval=STALL) == ("stall-check",)

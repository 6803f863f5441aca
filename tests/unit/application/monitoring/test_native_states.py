"""Native agent states from a driver that detects them (herdr): a transition into `blocked`
or `done` adds a `status:*` reason once per episode; other states are recorded at once."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from cafleet.application.monitoring.service import MonitorService
from cafleet.domain.placement import Multiplexer


@dataclass
class Herdr:
    fleet: Any
    svc: MonitorService
    member_id: int
    member_pane: str

    def __getattr__(self, name: str) -> Any:
        return getattr(self.fleet, name)


@pytest.fixture
def herdr(make_fleet: Any) -> Herdr:
    """A herdr fleet, woken once already: everyone pinged at 0, stall checks off."""
    fleet = make_fleet(backend=Multiplexer.HERDR)
    member_id = fleet.members["worker"]
    world = Herdr(fleet, fleet.service(stall_interval=0), member_id, fleet.panes[member_id].pane_id)
    fleet.driver.states[world.member_pane] = "working"
    world.svc.claim(fleet.fleet_id, 5)
    world.svc.tick(fleet.fleet_id)
    return world


def step(fleet: Any, state: str | None, seconds: float = 5) -> Any:
    """Set the member's detected state, let time pass, tick; returns the member's reasons."""
    if state is None:
        fleet.driver.states.pop(fleet.member_pane, None)
    else:
        fleet.driver.states[fleet.member_pane] = state
    fleet.clock.advance(seconds)
    report = fleet.svc.tick(fleet.fleet_id)
    return next((d.reasons for d in report.due if d.agent_id == fleet.member_id), ())


def test_the_first_tick_records_the_state_it_saw(herdr: Any) -> None:
    assert herdr.schedule(herdr.member_id).last_native_status == "working"


@pytest.mark.parametrize("state", ["blocked", "done"])
def test_entering_a_waking_state_wakes_the_watcher_before_the_interval(
    herdr: Any, state: str
) -> None:
    reasons = step(herdr, state)

    assert reasons == (f"status:{state}",)
    assert f"member {herdr.member_id} (worker) [status:{state}]" in herdr.wakes_typed()[-1]


@pytest.mark.parametrize("state", ["blocked", "done"])
def test_a_status_wake_records_the_state_and_the_ping(herdr: Any, state: str) -> None:
    step(herdr, state)

    schedule = herdr.schedule(herdr.member_id)
    assert (schedule.last_native_status, schedule.last_ping_at) == (state, herdr.at(5))


@pytest.mark.parametrize("state", ["blocked", "done"])
def test_staying_in_a_waking_state_does_not_wake_again(herdr: Any, state: str) -> None:
    step(herdr, state)

    quiet = [step(herdr, state) for _ in range(20)]

    assert quiet == [()] * 20
    assert len(herdr.wakes_typed()) == 2


def test_leaving_blocked_is_recorded_at_once_without_a_wake(herdr: Any) -> None:
    step(herdr, "blocked")

    reasons = step(herdr, "working")

    assert reasons == ()
    assert herdr.schedule(herdr.member_id).last_native_status == "working"
    assert len(herdr.wakes_typed()) == 2


@pytest.mark.parametrize("state", ["blocked", "done"])
def test_reentering_a_waking_state_wakes_again(herdr: Any, state: str) -> None:
    step(herdr, state)
    step(herdr, "working")

    assert step(herdr, state) == (f"status:{state}",)
    assert len(herdr.wakes_typed()) == 3


def test_blocked_then_done_wakes_for_each(herdr: Any) -> None:
    assert step(herdr, "blocked") == ("status:blocked",)
    assert step(herdr, "done") == ("status:done",)
    assert step(herdr, "done") == ()


def test_idle_and_unknown_never_wake(herdr: Any) -> None:
    reasons = [step(herdr, s) for s in ("idle", "unknown", "working", "idle")]

    assert reasons == [()] * 4
    assert herdr.schedule(herdr.member_id).last_native_status == "idle"


def test_a_pane_without_a_detected_state_keeps_the_recorded_one(herdr: Any) -> None:
    assert step(herdr, None) == ()
    assert herdr.schedule(herdr.member_id).last_native_status == "working"


def test_a_transition_adds_to_an_interval_already_due(herdr: Any) -> None:
    reasons = step(herdr, "done", seconds=720)

    assert reasons == ("interval", "status:done")


def test_reasons_keep_the_order_interval_stall_check_status(make_fleet: Any) -> None:
    fleet = make_fleet(backend=Multiplexer.HERDR)
    member = fleet.members["worker"]
    fleet.driver.states[fleet.panes[member].pane_id] = "blocked"
    service = fleet.service(stall_interval=240)
    service.claim(fleet.fleet_id, 5)

    report = service.tick(fleet.fleet_id)

    entry = next(d for d in report.due if d.agent_id == member)
    assert entry.reasons == ("interval", "stall-check", "status:blocked")
    assert (
        f"member {member} (worker) [interval,stall-check,status:blocked]"
        in (fleet.wakes_typed()[0])
    )


def test_a_transition_whose_wake_fails_is_retried_on_the_next_tick(herdr: Any) -> None:
    herdr.watcher_pane.command = "bash"
    first = step(herdr, "blocked")
    assert herdr.schedule(herdr.member_id).last_native_status == "working"
    herdr.watcher_pane.command = "demo-agent"

    second = step(herdr, "blocked")

    assert (first, second) == (("status:blocked",), ("status:blocked",))
    assert herdr.schedule(herdr.member_id).last_native_status == "blocked"


def test_a_disabled_agent_is_not_woken_for_a_transition(herdr: Any) -> None:
    herdr.svc.config(herdr.fleet_id, herdr.member_id, enabled=False)

    assert step(herdr, "blocked") == ()
    assert len(herdr.wakes_typed()) == 1


def test_the_director_transitions_wake_too(herdr: Any) -> None:
    herdr.driver.states[herdr.director_pane.pane_id] = "done"
    herdr.clock.advance(5)

    report = herdr.svc.tick(herdr.fleet_id)

    assert [(d.agent_id, d.role, d.reasons) for d in report.due] == [
        (herdr.director_id, "director", ("status:done",))
    ]


def test_states_come_from_the_same_sweep_once_per_tick(herdr: Any) -> None:
    listings, reads = herdr.driver.listings, herdr.driver.state_reads

    for state in ("blocked", "working", "done", "idle"):
        step(herdr, state)

    assert (herdr.driver.listings - listings, herdr.driver.state_reads - reads) == (4, 4)

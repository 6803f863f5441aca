"""Edits that land while a tick is typing its wake (no transaction is open while typing): the
tick records only what it owns — ping, stall-check time, native state — and
must neither undo a `monitor config` edit nor re-enroll a removed agent."""

from __future__ import annotations

from typing import Any


def during_the_wake(fleet: Any, action: Any) -> None:
    """Run `action` when the wake's Enter reaches the watcher's pane."""

    def on_submit(pane: Any, _text: str) -> None:
        if pane is fleet.watcher_pane:
            action()

    fleet.driver.on_submit = on_submit


def test_disabling_an_agent_during_a_wake_is_kept(fleet: Any) -> None:
    member = fleet.members["worker"]
    service = fleet.service()
    service.claim(fleet.fleet_id, 5)
    during_the_wake(fleet, lambda: fleet.service().config(fleet.fleet_id, member, enabled=False))

    service.tick(fleet.fleet_id)

    assert fleet.schedule(member).enabled is False


def test_an_interval_edited_during_a_wake_is_kept(fleet: Any) -> None:
    member = fleet.members["worker"]
    service = fleet.service()
    service.claim(fleet.fleet_id, 5)
    during_the_wake(
        fleet, lambda: fleet.service().config(fleet.fleet_id, member, interval_seconds=60)
    )

    service.tick(fleet.fleet_id)

    assert fleet.schedule(member).interval_seconds == 60


def test_the_wake_still_records_the_ping_of_an_agent_edited_meanwhile(fleet: Any) -> None:
    member = fleet.members["worker"]
    service = fleet.service()
    service.claim(fleet.fleet_id, 5)
    during_the_wake(
        fleet, lambda: fleet.service().config(fleet.fleet_id, member, interval_seconds=60)
    )

    service.tick(fleet.fleet_id)

    assert fleet.schedule(member).last_ping_at == fleet.at(0)


def test_a_member_removed_during_a_wake_is_not_re_enrolled(fleet: Any) -> None:
    member = fleet.members["worker"]
    service = fleet.service()
    service.claim(fleet.fleet_id, 5)
    during_the_wake(fleet, lambda: fleet.deregister(member))

    service.tick(fleet.fleet_id)

    with fleet.store() as uow:
        assert uow.monitor.get(member) is None

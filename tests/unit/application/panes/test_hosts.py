"""Placements on another host: their pane ids mean nothing here, so no pane verb, delivery
or listing of this machine ever uses them (this process's host is the fake drivers' `here`)."""

from __future__ import annotations

import pytest

from cafleet.application.members.registry import ListMode, MemberService
from cafleet.application.panes.keystrokes import Keystrokes
from cafleet.domain.delivery import DeliveryState
from cafleet.domain.errors import Unavailable
from cafleet.domain.placement import PaneState, PushTarget
from support.pane_rig import ENTER, PaneRig, paste


def test_pane_verbs_on_a_member_of_another_host_are_refused_and_type_nothing(
    rig: PaneRig,
) -> None:
    made = rig.fleet()
    worker = rig.member(made, host="build-server")
    assert worker.pane is not None  # a pane with the same id exists here
    panes = rig.member_panes()
    fleet_id = made.fleet.fleet_id

    for verb in (
        lambda: panes.exec(fleet_id, worker.agent_id, "ls"),
        lambda: panes.ping(fleet_id, worker.agent_id),
        lambda: panes.capture(fleet_id, worker.agent_id, 20, ansi=False),
    ):
        with pytest.raises(Unavailable) as raised:
            verb()
        assert "host 'build-server', not this one ('here')" in raised.value.message

    assert worker.pane.typed == []


def test_a_member_recorded_on_this_host_or_before_hosts_is_reached(rig: PaneRig) -> None:
    made = rig.fleet()
    here = rig.member(made, "here", host="here")
    legacy = rig.member(made, "legacy", host=None)

    for member in (here, legacy):
        rig.member_panes().ping(made.fleet.fleet_id, member.agent_id)
        assert member.pane is not None and len(member.pane.typed) == 2


def test_one_delivery_round_types_into_local_panes_and_fails_the_remote_one(
    rig: PaneRig,
) -> None:
    made = rig.fleet()
    local = rig.member(made, "local", host="here")
    remote = rig.member(made, "remote", host="elsewhere")
    targets = {}
    with rig.store() as uow:
        for member in (local, remote):
            placement = uow.placements.get(member.agent_id)
            assert placement is not None
            targets[member.agent_id] = PushTarget.of(placement)

    local_outcome, remote_outcome = rig.keystrokes().deliver_many(
        [(targets[m.agent_id], Keystrokes.preview("hello")) for m in (local, remote)]
    )

    assert local_outcome.state is DeliveryState.SENT
    assert local.pane is not None and local.pane.typed == [paste("hello"), ENTER]
    assert remote_outcome.state is DeliveryState.FAILED
    assert "host 'elsewhere'" in (remote_outcome.error or "")
    assert remote.pane is not None and remote.pane.typed == []


def test_member_list_shows_no_pane_state_for_another_host_s_member(rig: PaneRig) -> None:
    made = rig.fleet()
    local = rig.member(made, "local", host="here")
    remote = rig.member(made, "remote", host="elsewhere")

    listing = MemberService(rig.store, rig.clock, rig.drivers).list(
        made.fleet.fleet_id, ListMode.MEMBERS
    )

    states = {v.agent.agent_id: v.pane for v in listing.members}
    assert states[local.agent_id] is PaneState.RUNNING
    assert states[remote.agent_id] is None  # unknown here, not gone
    assert {v.agent.agent_id: v.placement.host for v in listing.members if v.placement} == {
        local.agent_id: "here",
        remote.agent_id: "elsewhere",
    }

"""FleetService.delete: tear down member panes first, then soft-delete the fleet."""

from __future__ import annotations

import pytest

from cafleet.application.fleets import FleetDeleted, MemberPane, PaneFate
from cafleet.domain.errors import NotFound, Unavailable
from cafleet.domain.fleet import AgentStatus
from support.pane_rig import ENTER, PaneRig, text


def assert_soft_deleted(rig: PaneRig, fleet_id: int, agent_ids: list[int]) -> None:
    fleet = rig.fleet_row(fleet_id)
    assert fleet is not None
    assert fleet.deleted_at is not None
    for agent_id in agent_ids:
        agent = rig.agent(agent_id)
        assert agent is not None
        assert agent.status is AgentStatus.DEREGISTERED
        assert rig.placement(agent_id) is None
        assert rig.schedule(agent_id) is None


def test_member_panes_are_closed_killed_or_found_gone_then_the_fleet_is_deleted(
    rig: PaneRig,
) -> None:
    made = rig.fleet()
    obedient = rig.member(made, "obedient")
    stubborn = rig.member(made, "stubborn")
    shell = rig.member(made, "shell", command="bash")
    gone = rig.member(made, "gone", command=None)
    pending = rig.member(made, "pending", pending=True)
    watcher = rig.member(made, "watcher", monitor=True)
    rig.driver.obey_exit(str(obedient.pane_id), str(watcher.pane_id))

    deleted = rig.fleet_service().delete(made.fleet.fleet_id)

    assert deleted == FleetDeleted(
        made.fleet.fleet_id,
        8,
        (
            MemberPane(obedient.agent_id, str(obedient.pane_id), PaneFate.CLOSED),
            MemberPane(stubborn.agent_id, str(stubborn.pane_id), PaneFate.KILLED),
            MemberPane(shell.agent_id, str(shell.pane_id), PaneFate.KILLED),
            MemberPane(gone.agent_id, str(gone.pane_id), PaneFate.GONE),
            MemberPane(watcher.agent_id, str(watcher.pane_id), PaneFate.CLOSED),
        ),
    )
    assert set(rig.driver.panes) == {"%0"}
    assert shell.pane is not None
    assert shell.pane.typed == []
    everyone = [made.director.agent_id, made.administrator.agent_id]
    everyone += [m.agent_id for m in (obedient, stubborn, shell, gone, pending, watcher)]
    assert_soft_deleted(rig, made.fleet.fleet_id, everyone)


def test_the_directors_pane_is_never_touched(rig: PaneRig) -> None:
    made = rig.fleet(director_command="bash")  # even a Director pane showing a shell stays
    rig.member(made)

    rig.fleet_service().delete(made.fleet.fleet_id, timeout=1)

    assert rig.director_pane().typed == []
    assert "%0" in rig.driver.panes


def test_exit_is_typed_into_every_agent_pane_and_the_wait_is_shared(rig: PaneRig) -> None:
    made = rig.fleet()
    members = [rig.member(made, f"m{n}") for n in range(3)]

    deleted = rig.fleet_service().delete(made.fleet.fleet_id, timeout=15)

    assert [p.fate for p in deleted.panes] == [PaneFate.KILLED] * 3
    for member in members:
        assert member.pane is not None
        assert member.pane.typed == [text("/exit"), ENTER]
    assert rig.clock.slept.count(0.5) == 30


def test_keep_panes_leaves_every_member_pane_running(rig: PaneRig) -> None:
    made = rig.fleet()
    first = rig.member(made, "first")
    second = rig.member(made, "second", command="bash")

    deleted = rig.fleet_service().delete(made.fleet.fleet_id, keep_panes=True)

    assert deleted.panes == (
        MemberPane(first.agent_id, str(first.pane_id), PaneFate.KEPT),
        MemberPane(second.agent_id, str(second.pane_id), PaneFate.KEPT),
    )
    assert set(rig.driver.panes) == {"%0", first.pane_id, second.pane_id}
    assert all(p.typed == [] for p in rig.driver.panes.values())
    assert_soft_deleted(rig, made.fleet.fleet_id, [first.agent_id, second.agent_id])


def test_a_pane_that_cannot_be_killed_is_reported_failed_and_the_fleet_still_goes(
    rig: PaneRig,
) -> None:
    made = rig.fleet()
    stuck = rig.member(made, "stuck", command="bash")
    fine = rig.member(made, "fine", command="bash")
    rig.driver.kill_failures[str(stuck.pane_id)] = Unavailable("tmux kill-pane timed out after 5s")

    deleted = rig.fleet_service().delete(made.fleet.fleet_id)

    assert deleted.panes == (
        MemberPane(
            stuck.agent_id, str(stuck.pane_id), PaneFate.FAILED, "tmux kill-pane timed out after 5s"
        ),
        MemberPane(fine.agent_id, str(fine.pane_id), PaneFate.KILLED),
    )
    assert_soft_deleted(rig, made.fleet.fleet_id, [stuck.agent_id, fine.agent_id])


def test_a_fleet_without_member_panes_reports_no_panes(rig: PaneRig) -> None:
    made = rig.fleet()
    pending = rig.member(made, pending=True)

    deleted = rig.fleet_service().delete(made.fleet.fleet_id)

    assert deleted == FleetDeleted(made.fleet.fleet_id, 3, ())
    assert_soft_deleted(rig, made.fleet.fleet_id, [pending.agent_id])


def test_an_already_deleted_fleet_is_a_no_op(rig: PaneRig) -> None:
    made = rig.fleet()
    rig.fleet_service().delete(made.fleet.fleet_id)
    late = rig.driver.add_pane("claude")

    again = rig.fleet_service().delete(made.fleet.fleet_id)

    assert again == FleetDeleted(made.fleet.fleet_id, 0)
    assert late.typed == []


def test_a_missing_fleet_is_not_found(rig: PaneRig) -> None:
    with pytest.raises(NotFound) as raised:
        rig.fleet_service().delete(9)

    assert raised.value.message == "fleet '9' not found."


def test_panes_of_another_fleet_are_left_alone(rig: PaneRig) -> None:
    made = rig.fleet()
    other = rig.fleet_service().create("beta", made.placement.coding_agent)
    neighbour = rig.member(other, "neighbour")
    rig.member(made, "mine", command=None)

    rig.fleet_service().delete(made.fleet.fleet_id)

    assert neighbour.pane is not None
    assert neighbour.pane.typed == []
    agent = rig.agent(neighbour.agent_id)
    assert agent is not None
    assert agent.status is AgentStatus.ACTIVE

"""MemberRemoval (`member delete`): close the member's pane, then deregister it."""

from __future__ import annotations

import pytest

from cafleet.application.fleets import FleetCreated
from cafleet.application.members.removal import MemberDeleted
from cafleet.domain.errors import Invalid, NotFound, Unavailable
from cafleet.domain.fleet import AgentStatus
from cafleet.domain.placement import CodingAgent
from support.pane_rig import ENTER, START, WINDOW, PaneRig, TimedOutLocks, text

KILL_ERROR = "cannot reach the tmux server at unit-tmux.sock: connection refused"


def assert_deregistered(rig: PaneRig, agent_id: int) -> None:
    agent = rig.agent(agent_id)
    assert agent is not None
    assert agent.status is AgentStatus.DEREGISTERED
    assert agent.deregistered_at is not None
    assert agent.deregistered_at >= START
    assert rig.placement(agent_id) is None
    assert rig.schedule(agent_id) is None


def assert_still_registered(rig: PaneRig, agent_id: int) -> None:
    agent = rig.agent(agent_id)
    assert agent is not None
    assert agent.status is AgentStatus.ACTIVE
    assert rig.placement(agent_id) is not None


def delete(
    rig: PaneRig, made: FleetCreated, member_id: int, *, force: bool = False, timeout: float = 15.0
) -> MemberDeleted:
    return rig.removal().delete(made.fleet.fleet_id, member_id, force=force, timeout=timeout)


# --------------------------------------------------------------------------- graceful


def test_graceful_delete_types_exit_waits_and_deregisters(rig: PaneRig) -> None:
    made = rig.fleet()
    worker = rig.member(made)
    assert worker.pane is not None
    rig.driver.obey_exit(worker.pane.pane_id)

    deleted = delete(rig, made, worker.agent_id)

    assert deleted == MemberDeleted(worker.agent_id, f"{worker.pane_id} (closed)", False)
    assert worker.pane.typed == [text("/exit"), ENTER]
    assert_deregistered(rig, worker.agent_id)
    assert rig.driver.relayouts == [WINDOW]


def test_a_pane_already_gone_counts_as_closed(rig: PaneRig) -> None:
    made = rig.fleet()
    worker = rig.member(made, command=None)

    deleted = delete(rig, made, worker.agent_id)

    assert deleted.pane_status == f"{worker.pane_id} (closed)"
    assert_deregistered(rig, worker.agent_id)


def test_a_pane_not_running_the_agent_is_killed_without_typing(rig: PaneRig) -> None:
    made = rig.fleet()
    worker = rig.member(made, command="bash")
    assert worker.pane is not None

    deleted = delete(rig, made, worker.agent_id)

    assert deleted == MemberDeleted(
        worker.agent_id, f"{worker.pane_id} (killed: not running claude)", False
    )
    assert worker.pane.typed == []
    assert worker.pane_id not in rig.driver.panes
    assert_deregistered(rig, worker.agent_id)


def test_the_not_running_status_names_the_members_coding_agent(rig: PaneRig) -> None:
    made = rig.fleet()
    worker = rig.member(
        made, command="zsh", coding_agent=CodingAgent.CUSTOM, agent_commands=("demo-agent",)
    )

    deleted = delete(rig, made, worker.agent_id)

    assert deleted.pane_status == f"{worker.pane_id} (killed: not running custom)"


def test_a_pane_that_ignores_exit_is_killed_after_the_timeout_with_a_warning(
    rig: PaneRig,
) -> None:
    made = rig.fleet()
    worker = rig.member(made)
    assert worker.pane is not None
    worker.pane.screen = [f"row {n}" for n in range(1, 91)] + [""]
    pane = worker.pane_id

    deleted = delete(rig, made, worker.agent_id)

    tail = "\n".join(f"row {n}" for n in range(11, 91))
    assert deleted == MemberDeleted(
        worker.agent_id,
        f"{pane} (killed after timeout)",
        False,
        f"Warning: pane {pane} did not close within 15.0s after /exit; killing it.\n"
        f"--- pane {pane} tail (last 80 lines) ---\n"
        f"{tail}\n"
        "---",
    )
    assert pane not in rig.driver.panes
    assert_deregistered(rig, worker.agent_id)


def test_the_timeout_warning_names_the_requested_timeout(rig: PaneRig) -> None:
    made = rig.fleet()
    worker = rig.member(made)
    assert worker.pane is not None
    worker.pane.screen = ["thinking…"]

    deleted = delete(rig, made, worker.agent_id, timeout=2.5)

    assert deleted.warning is not None
    assert deleted.warning.splitlines()[0] == (
        f"Warning: pane {worker.pane_id} did not close within 2.5s after /exit; killing it."
    )
    assert rig.clock.slept.count(0.5) == 5


# --------------------------------------------------------------------------- force


def test_force_kills_the_pane_without_typing_and_deregisters(rig: PaneRig) -> None:
    made = rig.fleet()
    worker = rig.member(made)
    assert worker.pane is not None

    deleted = delete(rig, made, worker.agent_id, force=True)

    assert deleted == MemberDeleted(worker.agent_id, f"{worker.pane_id} (killed)", True)
    assert worker.pane.typed == []
    assert worker.pane_id not in rig.driver.panes
    assert_deregistered(rig, worker.agent_id)
    assert rig.clock.slept == []


def test_force_on_a_pane_already_gone_is_fine(rig: PaneRig) -> None:
    made = rig.fleet()
    worker = rig.member(made, command=None)

    deleted = delete(rig, made, worker.agent_id, force=True)

    assert deleted.pane_status == f"{worker.pane_id} (killed)"
    assert_deregistered(rig, worker.agent_id)


# --------------------------------------------------------------------------- no pane


def test_a_pending_member_is_deregistered_without_touching_panes(rig: PaneRig) -> None:
    made = rig.fleet()
    worker = rig.member(made, pending=True)

    deleted = delete(rig, made, worker.agent_id)

    assert deleted == MemberDeleted(worker.agent_id, "(pending — no pane)", False)
    assert_deregistered(rig, worker.agent_id)
    assert rig.driver.relayouts == []
    assert rig.director_pane().typed == []


def test_an_agent_without_placement_is_deregistered_from_the_registry_only(
    rig: PaneRig,
) -> None:
    made = rig.fleet()
    loose = rig.loose_agent(made)

    deleted = delete(rig, made, loose)

    assert deleted == MemberDeleted(loose, "(no placement)", False)
    assert_deregistered(rig, loose)


def test_the_monitoring_member_can_be_deleted(rig: PaneRig) -> None:
    made = rig.fleet()
    watcher = rig.member(made, "watcher", monitor=True)
    assert watcher.pane is not None
    rig.driver.obey_exit(watcher.pane.pane_id)

    deleted = delete(rig, made, watcher.agent_id)

    assert deleted.pane_status == f"{watcher.pane_id} (closed)"
    assert_deregistered(rig, watcher.agent_id)


# --------------------------------------------------------------------------- refusals


def test_the_root_director_cannot_be_deleted_and_its_pane_is_untouched(rig: PaneRig) -> None:
    made = rig.fleet()

    with pytest.raises(Invalid) as raised:
        delete(rig, made, made.director.agent_id)

    assert raised.value.message == (
        "cannot deregister the root Director; use 'cafleet fleet delete' instead"
    )
    assert rig.director_pane().typed == []
    assert "%0" in rig.driver.panes
    assert_still_registered(rig, made.director.agent_id)


def test_the_root_director_is_refused_even_with_force(rig: PaneRig) -> None:
    made = rig.fleet()

    with pytest.raises(Invalid):
        delete(rig, made, made.director.agent_id, force=True)

    assert "%0" in rig.driver.panes


def test_the_administrator_cannot_be_deleted(rig: PaneRig) -> None:
    made = rig.fleet()

    with pytest.raises(Invalid) as raised:
        delete(rig, made, made.administrator.agent_id)

    assert raised.value.message == "Administrator cannot be deregistered"
    admin = rig.agent(made.administrator.agent_id)
    assert admin is not None
    assert admin.status is AgentStatus.ACTIVE


def test_an_unknown_member_is_not_found(rig: PaneRig) -> None:
    made = rig.fleet()

    with pytest.raises(NotFound) as raised:
        delete(rig, made, 99)

    assert raised.value.message == "Agent 99 not found"


def test_a_member_of_another_fleet_is_not_found(rig: PaneRig) -> None:
    made = rig.fleet()
    other = rig.fleet_service().create("beta", CodingAgent.CLAUDE)
    stranger = rig.member(other, "stranger")

    with pytest.raises(NotFound) as raised:
        delete(rig, made, stranger.agent_id)

    assert raised.value.message == f"Agent {stranger.agent_id} not found"
    assert_still_registered(rig, stranger.agent_id)


def test_a_deleted_member_is_not_found_the_second_time(rig: PaneRig) -> None:
    made = rig.fleet()
    worker = rig.member(made, command=None)
    delete(rig, made, worker.agent_id)

    with pytest.raises(NotFound):
        delete(rig, made, worker.agent_id)


# --------------------------------------------------------------------------- kill failures


def kill_error(pane_id: str | None) -> str:
    return (
        f"kill_pane failed for pane {pane_id}: {KILL_ERROR}. The tmux server may be"
        " unreachable. Verify with 'cafleet doctor', then re-run the command."
    )


def test_a_failed_forced_kill_keeps_the_member_registered(rig: PaneRig) -> None:
    made = rig.fleet()
    worker = rig.member(made)
    rig.driver.kill_failures[str(worker.pane_id)] = Unavailable(KILL_ERROR)

    with pytest.raises(Unavailable) as raised:
        delete(rig, made, worker.agent_id, force=True)

    assert raised.value.message == kill_error(worker.pane_id)
    assert_still_registered(rig, worker.agent_id)
    assert rig.schedule(worker.agent_id) is not None


def test_a_failed_kill_of_a_non_agent_pane_keeps_the_member_registered(rig: PaneRig) -> None:
    made = rig.fleet()
    worker = rig.member(made, command="bash")
    rig.driver.kill_failures[str(worker.pane_id)] = Unavailable(KILL_ERROR)

    with pytest.raises(Unavailable) as raised:
        delete(rig, made, worker.agent_id)

    assert raised.value.message == kill_error(worker.pane_id)
    assert_still_registered(rig, worker.agent_id)


def test_a_failed_kill_after_the_timeout_keeps_the_member_registered(rig: PaneRig) -> None:
    made = rig.fleet()
    worker = rig.member(made)
    rig.driver.kill_failures[str(worker.pane_id)] = Unavailable(KILL_ERROR)

    with pytest.raises(Unavailable) as raised:
        delete(rig, made, worker.agent_id, timeout=1)

    assert raised.value.message == kill_error(worker.pane_id)
    assert_still_registered(rig, worker.agent_id)


def test_an_unreachable_server_fails_the_delete_and_keeps_the_member(rig: PaneRig) -> None:
    made = rig.fleet()
    worker = rig.member(made)
    rig.driver.unreachable = "connection refused"

    with pytest.raises(Unavailable) as raised:
        delete(rig, made, worker.agent_id)

    assert raised.value.message.startswith(f"kill_pane failed for pane {worker.pane_id}: ")
    assert raised.value.message.endswith(
        ". The tmux server may be unreachable. Verify with 'cafleet doctor', then re-run the"
        " command."
    )
    assert_still_registered(rig, worker.agent_id)


def test_a_send_lock_timeout_is_not_reported_as_not_running_the_agent(rig: PaneRig) -> None:
    made = rig.fleet()
    worker = rig.member(made)  # the pane does run claude
    rig.locks = TimedOutLocks()

    deleted = delete(rig, made, worker.agent_id)

    assert "not running" not in deleted.pane_status

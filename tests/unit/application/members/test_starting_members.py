"""A message to a member whose agent is still starting waits (bounded) until the agent was
seen ready, then is typed once; if it never becomes ready it is skipped as agent-starting."""

from __future__ import annotations

from datetime import timedelta

from cafleet.domain.delivery import DeliveryState
from cafleet.domain.message import MessageState
from support.pane_rig import START, SUBMIT_DELAYS, PaneRig

HEADER_TS = "2026-01-01T08:00:00.000000+00:00"
POLL = 0.25


def test_a_message_to_a_starting_member_is_typed_once_it_is_ready(rig: PaneRig) -> None:
    made = rig.fleet()
    worker = rig.member(made, starting=True)
    assert worker.pane is not None
    ready_when_typed: list[bool] = []

    def check_ready(pane_id: str, text: str) -> None:
        placement = rig.placement(worker.agent_id)
        ready_when_typed.append(placement is not None and not placement.is_starting)

    rig.driver.before_paste = check_ready
    rig.clock.after(3.0, lambda: rig.mark_ready(worker.agent_id))

    result = rig.messaging().send(
        made.fleet.fleet_id, made.director.agent_id, worker.agent_id, "hi"
    )

    assert result.delivery.state is DeliveryState.SENT
    assert (result.delivery.transport, result.delivery.pane_id) == ("tmux", worker.pane_id)
    assert worker.pane.submitted() == [
        f"[cafleet msg {result.message.task_id} from {made.director.agent_id} {HEADER_TS}]\nhi"
    ]
    assert ready_when_typed == [True]
    # polled every 0.25 s until the member was ready, then the usual submit delay
    assert rig.clock.slept == [POLL] * 12 + [SUBMIT_DELAYS["claude"]]
    assert result.delivery.attempted_at == START + timedelta(seconds=3 + SUBMIT_DELAYS["claude"])


def test_a_member_that_never_becomes_ready_is_skipped_as_agent_starting(rig: PaneRig) -> None:
    made = rig.fleet()
    worker = rig.member(made, starting=True)
    assert worker.pane is not None

    result = rig.messaging(start_wait=5).send(
        made.fleet.fleet_id, made.director.agent_id, worker.agent_id, "hi"
    )

    [row] = rig.deliveries(result.message.task_id)
    assert (row.state, row.transport, row.pane_id, row.error) == (
        DeliveryState.SKIPPED, "tmux", worker.pane_id, "agent-starting",
    )  # fmt: skip
    assert worker.pane.typed == []
    assert rig.clock.slept == [POLL] * 20
    assert result.message.state is MessageState.INPUT_REQUIRED  # still waiting in the inbox


def test_the_default_wait_for_a_starting_member_is_two_minutes(rig: PaneRig) -> None:
    made = rig.fleet()
    worker = rig.member(made, starting=True)

    result = rig.messaging().send(made.fleet.fleet_id, made.director.agent_id, worker.agent_id, "x")

    assert (result.delivery.state, result.delivery.error) == ("skipped", "agent-starting")
    assert sum(rig.clock.slept) == 120
    assert set(rig.clock.slept) == {POLL}


def test_a_start_that_is_rolled_back_ends_the_wait_at_once(rig: PaneRig) -> None:
    made = rig.fleet()
    worker = rig.member(made, starting=True)
    assert worker.pane is not None

    def rolled_back() -> None:
        with rig.store(write=True) as uow:
            uow.placements.remove(worker.agent_id)
            uow.commit()

    rig.clock.after(1.0, rolled_back)

    result = rig.messaging().send(
        made.fleet.fleet_id, made.director.agent_id, worker.agent_id, "hi"
    )

    assert (result.delivery.state, result.delivery.error) == ("skipped", "agent-starting")
    assert worker.pane.typed == []
    assert rig.clock.slept == [POLL] * 4


def test_a_placement_moved_to_another_pane_ends_the_wait(rig: PaneRig) -> None:
    made = rig.fleet()
    worker = rig.member(made, starting=True)
    assert worker.pane is not None

    def respawned() -> None:
        with rig.store(write=True) as uow:
            placement = uow.placements.get(worker.agent_id)
            assert placement is not None
            moved = placement.with_pane("%99").became_ready("hook", rig.clock.now())
            uow.placements.save(moved)
            uow.commit()

    rig.clock.after(0.5, respawned)

    result = rig.messaging().send(
        made.fleet.fleet_id, made.director.agent_id, worker.agent_id, "hi"
    )

    assert (result.delivery.state, result.delivery.error) == ("skipped", "agent-starting")
    assert worker.pane.typed == []


def test_a_ready_member_is_typed_into_without_waiting(rig: PaneRig) -> None:
    made = rig.fleet()
    worker = rig.member(made)
    assert worker.pane is not None

    rig.messaging().send(made.fleet.fleet_id, made.director.agent_id, worker.agent_id, "hi")

    assert rig.clock.slept == [SUBMIT_DELAYS["claude"]]
    assert len(worker.pane.submitted()) == 1


def test_a_broadcast_waits_only_for_the_starting_member(rig: PaneRig) -> None:
    made = rig.fleet()
    ready = rig.member(made, "ready")
    starting = rig.member(made, "starting", starting=True)
    never = rig.member(made, "never", starting=True)
    assert ready.pane is not None and starting.pane is not None and never.pane is not None
    rig.clock.after(2.0, lambda: rig.mark_ready(starting.agent_id))

    result = rig.messaging(start_wait=10).broadcast(
        made.fleet.fleet_id, made.director.agent_id, "sync up"
    )

    outcomes = {d.recipient_agent_id: (d.state.value, d.error) for d in result.deliveries}
    assert outcomes[ready.agent_id] == ("sent", None)
    assert outcomes[starting.agent_id] == ("sent", None)
    assert outcomes[never.agent_id] == ("skipped", "agent-starting")
    assert len(ready.pane.submitted()) == 1
    assert len(starting.pane.submitted()) == 1
    assert never.pane.typed == []

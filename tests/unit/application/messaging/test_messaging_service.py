"""MessagingService on the fakes: send pipeline, ledger, isolation, poll/ack/cancel/show.

The send pipeline itself is described in docs/internals/delivery.md.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from datetime import timedelta

import pytest

from cafleet.adapters.fake.clock import FakeClock
from cafleet.adapters.fake.notifier import RecordingNotifier
from cafleet.adapters.fake.pane_driver import ThreadLocks
from cafleet.adapters.fake.store import MemoryStore
from cafleet.application.fleets import FleetCreated
from cafleet.application.messaging.confirmations import RECEIPT_POLL_SECONDS
from cafleet.application.messaging.service import MessagingService
from cafleet.domain.delivery import JOIN_WINDOW_SECONDS, Announcement, DeliveryState, PushOutcome
from cafleet.domain.errors import CafleetError, ErrorKind, Invalid, NotFound
from cafleet.domain.message import MessageState, MessageType
from cafleet.domain.placement import CodingAgent, Multiplexer


@dataclass
class Team:
    made: FleetCreated
    fleet_id: int
    director: int
    admin: int
    worker: int  # pane %1
    pending: int  # registered, pane not yet recorded


@pytest.fixture
def team(world) -> Team:
    made = world.fleet("alpha")
    return Team(
        made,
        made.fleet.fleet_id,
        made.director.agent_id,
        made.administrator.agent_id,
        world.member(made, "worker", pane_id="%1", coding_agent=CodingAgent.CODEX),
        world.member(made, "pending", pane_id=None),
    )


def error_of(call, *args) -> CafleetError:
    with pytest.raises(CafleetError) as raised:
        call(*args)
    return raised.value


# -- send: storage and ledger ----------------------------------------------------------------


def test_send_stores_an_input_required_unicast_owned_by_the_recipient(
    messaging: MessagingService, team: Team, world, clock: FakeClock
) -> None:
    result = messaging.send(team.fleet_id, team.director, team.worker, "please review")

    stored = world.get_message(result.message.task_id)
    assert stored == result.message
    assert stored.context_id == stored.to_agent_id == team.worker
    assert stored.from_agent_id == team.director
    assert stored.type is MessageType.UNICAST
    assert stored.state is MessageState.INPUT_REQUIRED
    assert stored.created_at == stored.status_timestamp == clock.now()
    assert stored.origin_task_id is None
    assert stored.text == "please review"


def test_send_to_a_pane_bound_member_pushes_and_records_sent(
    messaging: MessagingService, team: Team, world, notifier: RecordingNotifier
) -> None:
    result = messaging.send(team.fleet_id, team.director, team.worker, "hello worker")

    [announcement] = notifier.announced
    assert announcement.task_id == result.message.task_id
    assert announcement.from_agent_id == team.director
    assert announcement.created_at == result.message.created_at
    assert announcement.text == "hello worker"
    target = announcement.target
    assert (target.agent_id, target.pane_id) == (team.worker, "%1")
    assert (target.backend, target.socket) == (Multiplexer.TMUX, "tmux-test.sock")
    assert target.coding_agent is CodingAgent.CODEX

    [delivery] = world.deliveries(result.message.task_id)
    assert delivery == result.delivery
    assert delivery.recipient_agent_id == team.worker
    assert delivery.state is DeliveryState.SENT
    assert (delivery.transport, delivery.pane_id, delivery.error) == ("tmux", "%1", None)
    assert delivery.attempted_at is not None


def test_send_to_the_director_pushes_to_the_directors_pane(
    messaging: MessagingService, team: Team, world
) -> None:
    result = messaging.send(team.fleet_id, team.worker, team.director, "done")

    delivery = world.delivery(result.message.task_id, team.director)
    assert (delivery.state, delivery.pane_id) == (DeliveryState.SENT, "%0")


def test_the_push_happens_after_commit_with_no_transaction_open(
    store: MemoryStore, clock: FakeClock, team: Team
) -> None:
    seen: dict[str, object] = {}

    def outcome(announcement: Announcement) -> PushOutcome:
        seen["write_lock_held"] = store.write_lock.locked()
        with store() as uow:  # a fresh reader, as the recipient's own poll would be
            seen["message"] = uow.messages.get(announcement.task_id)
            seen["delivery"] = uow.deliveries.get(announcement.task_id, team.worker)
        return PushOutcome.sent("tmux", announcement.target.pane_id)

    service = MessagingService(store, clock, RecordingNotifier(outcome), ThreadLocks())
    result = service.send(team.fleet_id, team.director, team.worker, "durable first")

    assert seen["write_lock_held"] is False
    assert seen["message"] == result.message
    assert seen["delivery"].state is DeliveryState.PENDING
    assert seen["delivery"].interrupted  # marked as begun: a sender killed now leaves that mark


@pytest.mark.parametrize(
    "outcome",
    [
        PushOutcome.sent("tmux", "%1"),
        PushOutcome.skipped("not-agent:bash", "tmux", "%1"),
        PushOutcome.skipped("pane-gone", "tmux", "%1"),
        PushOutcome.failed("tmux send-keys timed out after 5s", "tmux", "%1"),
    ],
)
def test_the_push_outcome_is_recorded_in_the_ledger(
    store: MemoryStore, clock: FakeClock, team: Team, world, outcome: PushOutcome
) -> None:
    service = MessagingService(store, clock, RecordingNotifier(lambda a: outcome), ThreadLocks())
    clock.advance(1)
    sent_at = clock.now()

    result = service.send(team.fleet_id, team.director, team.worker, "hi")

    delivery = world.delivery(result.message.task_id, team.worker)
    assert delivery == result.delivery
    assert delivery.state is outcome.state
    assert (delivery.transport, delivery.pane_id, delivery.error) == (
        outcome.transport,
        outcome.pane_id,
        outcome.error,
    )
    assert delivery.created_at == sent_at
    assert delivery.attempted_at is not None


def test_a_notifier_that_raises_records_a_one_line_failure_and_keeps_the_message(
    store: MemoryStore, clock: FakeClock, team: Team, world
) -> None:
    def explode(announcement: Announcement) -> PushOutcome:
        raise RuntimeError("pane driver crashed\nTraceback details\nmore")

    service = MessagingService(store, clock, RecordingNotifier(explode), ThreadLocks())

    result = service.send(team.fleet_id, team.director, team.worker, "still stored")

    assert world.get_message(result.message.task_id).text == "still stored"
    delivery = world.delivery(result.message.task_id, team.worker)
    assert delivery.state is DeliveryState.FAILED
    assert delivery.error == "RuntimeError: pane driver crashed"
    assert delivery.attempted_at is not None


def test_self_send_is_stored_and_skipped_as_self_without_touching_a_pane(
    messaging: MessagingService, team: Team, world, notifier: RecordingNotifier
) -> None:
    result = messaging.send(team.fleet_id, team.worker, team.worker, "note to self")

    assert notifier.announced == []
    assert world.get_message(result.message.task_id).context_id == team.worker
    delivery = world.delivery(result.message.task_id, team.worker)
    assert delivery.state is DeliveryState.SKIPPED
    assert delivery.error == "self"
    assert (delivery.transport, delivery.pane_id) == (None, None)
    assert delivery.attempted_at == delivery.created_at


def test_send_to_the_administrator_is_skipped_with_no_placement(
    messaging: MessagingService, team: Team, world, notifier: RecordingNotifier
) -> None:
    result = messaging.send(team.fleet_id, team.worker, team.admin, "fyi")

    assert notifier.announced == []
    delivery = world.delivery(result.message.task_id, team.admin)
    assert (delivery.state, delivery.error) == (DeliveryState.SKIPPED, "no-placement")
    assert world.get_message(result.message.task_id).context_id == team.admin


def test_send_to_a_pending_placement_is_skipped_with_pending_pane(
    messaging: MessagingService, team: Team, world, notifier: RecordingNotifier
) -> None:
    result = messaging.send(team.fleet_id, team.director, team.pending, "welcome")

    assert notifier.announced == []
    delivery = world.delivery(result.message.task_id, team.pending)
    assert (delivery.state, delivery.error) == (DeliveryState.SKIPPED, "pending-pane")
    assert delivery.attempted_at == delivery.created_at


def test_the_administrator_may_send(messaging: MessagingService, team: Team, world) -> None:
    result = messaging.send(team.fleet_id, team.admin, team.worker, "from the admin")

    assert world.get_message(result.message.task_id).from_agent_id == team.admin


# -- isolation: identical not-found texts ------------------------------------------------------


@pytest.fixture
def other(world) -> FleetCreated:
    return world.fleet("beta")


@pytest.mark.parametrize("case", ["unknown", "other-fleet", "deregistered"])
def test_a_recipient_outside_reach_is_not_found_with_one_message(
    messaging: MessagingService, team: Team, other: FleetCreated, world, case: str
) -> None:
    target = {
        "unknown": 999,
        "other-fleet": other.director.agent_id,
        "deregistered": team.worker,
    }[case]
    if case == "deregistered":
        world.deregister(team.worker)
    before = len(world.all_messages())

    error = error_of(messaging.send, team.fleet_id, team.director, target, "hi")

    assert isinstance(error, NotFound)
    assert error.message == f"Destination agent not found: {target}"
    assert len(world.all_messages()) == before


@pytest.mark.parametrize("case", ["unknown", "other-fleet", "deregistered"])
@pytest.mark.parametrize("operation", ["send", "broadcast", "poll", "ack", "cancel", "show"])
def test_an_acting_agent_outside_the_fleet_is_not_a_member(
    messaging: MessagingService,
    team: Team,
    other: FleetCreated,
    world,
    case: str,
    operation: str,
) -> None:
    actor = {
        "unknown": 999,
        "other-fleet": other.director.agent_id,
        "deregistered": team.worker,
    }[case]
    task = messaging.send(team.fleet_id, team.director, team.worker, "x").message.task_id
    if case == "deregistered":
        world.deregister(team.worker)
    calls = {
        "send": lambda: messaging.send(team.fleet_id, actor, team.director, "hi"),
        "broadcast": lambda: messaging.broadcast(team.fleet_id, actor, "hi"),
        "poll": lambda: messaging.poll(team.fleet_id, actor),
        "ack": lambda: messaging.ack(team.fleet_id, actor, task),
        "cancel": lambda: messaging.cancel(team.fleet_id, actor, task),
        "show": lambda: messaging.show(team.fleet_id, actor, task),
    }

    error = error_of(calls[operation])

    assert isinstance(error, NotFound)
    assert error.message == f"agent {actor} is not a member of fleet {team.fleet_id}."
    assert world.get_message(task).state is MessageState.INPUT_REQUIRED


@pytest.mark.parametrize("operation", ["send", "broadcast", "poll", "ack", "cancel", "nudge"])
def test_message_writes_and_poll_in_a_deleted_fleet_are_refused_as_read_only(
    messaging: MessagingService, team: Team, fleets, world, operation: str
) -> None:
    task = messaging.send(team.fleet_id, team.director, team.worker, "x").message.task_id
    fleets.delete(team.fleet_id)
    fid, actor = team.fleet_id, team.director
    calls = {
        "send": lambda: messaging.send(fid, actor, team.worker, "hi"),
        "broadcast": lambda: messaging.broadcast(fid, actor, "hi"),
        "poll": lambda: messaging.poll(fid, actor),
        "ack": lambda: messaging.ack(fid, team.worker, task),
        "cancel": lambda: messaging.cancel(fid, actor, task),
        "nudge": lambda: messaging.nudge(fid, actor, team.worker, "hi"),
    }

    error = error_of(calls[operation])

    assert error.kind is ErrorKind.CONFLICT
    assert error.message == f"fleet {fid} is deleted; its history is read-only"
    assert world.get_message(task).state is MessageState.INPUT_REQUIRED
    assert len(world.all_messages()) == 1


@pytest.mark.parametrize("reader", ["director", "worker"])
def test_show_reads_a_deleted_fleets_message_as_any_agent_it_had(
    messaging: MessagingService, team: Team, fleets, clock, reader: str
) -> None:
    task = messaging.send(team.fleet_id, team.director, team.worker, "kept").message.task_id
    clock.advance(5)
    fleets.delete(team.fleet_id)
    actor = team.director if reader == "director" else team.worker

    detail = messaging.show(team.fleet_id, actor, task)

    assert detail.message.text == "kept"
    assert detail.fleet_deleted_at == clock.now()
    assert [d.recipient_agent_id for d in detail.deliveries] == [team.worker]


def test_show_in_a_deleted_fleet_still_refuses_a_stranger(
    messaging: MessagingService, team: Team, fleets
) -> None:
    task = messaging.send(team.fleet_id, team.director, team.worker, "kept").message.task_id
    fleets.delete(team.fleet_id)

    error = error_of(messaging.show, team.fleet_id, 999, task)

    assert error.message == f"agent 999 is not a member of fleet {team.fleet_id}."


def test_show_of_a_live_fleet_has_no_deletion_time(messaging: MessagingService, team: Team) -> None:
    task = messaging.send(team.fleet_id, team.director, team.worker, "x").message.task_id

    assert messaging.show(team.fleet_id, team.worker, task).fleet_deleted_at is None


def test_an_unknown_fleet_is_not_found(messaging: MessagingService) -> None:
    error = error_of(messaging.poll, 77, 1)

    assert error.message == "fleet 77 not found."


@pytest.mark.parametrize("operation", ["ack", "cancel", "show"])
def test_a_task_of_another_fleet_reads_like_an_unknown_task(
    messaging: MessagingService, team: Team, other: FleetCreated, world, operation: str
) -> None:
    foreign_member = world.member(other, "foreigner", pane_id="%7")
    foreign = messaging.send(
        other.fleet.fleet_id, other.director.agent_id, foreign_member, "secret"
    ).message.task_id
    call = getattr(messaging, operation)

    foreign_error = error_of(call, team.fleet_id, team.director, foreign)
    unknown_error = error_of(call, team.fleet_id, team.director, 9999)

    assert isinstance(foreign_error, NotFound)
    assert foreign_error.message == f"Task {foreign} not found"
    assert unknown_error.message == "Task 9999 not found"
    assert world.get_message(foreign).state is MessageState.INPUT_REQUIRED


# -- poll -------------------------------------------------------------------------------------


def test_poll_lists_own_input_required_messages_newest_first(
    messaging: MessagingService, team: Team, clock: FakeClock
) -> None:
    ids = []
    for n in range(3):
        clock.advance(10)
        ids.append(messaging.send(team.fleet_id, team.director, team.worker, f"m{n}").message)
    messaging.send(team.fleet_id, team.worker, team.director, "not mine")

    polled = messaging.poll(team.fleet_id, team.worker)

    assert [m.text for m in polled] == ["m2", "m1", "m0"]
    assert polled == list(reversed(ids))


def test_poll_breaks_time_ties_by_higher_id_first(messaging: MessagingService, team: Team) -> None:
    first = messaging.send(team.fleet_id, team.director, team.worker, "a").message.task_id
    second = messaging.send(team.fleet_id, team.director, team.worker, "b").message.task_id

    assert [m.task_id for m in messaging.poll(team.fleet_id, team.worker)] == [second, first]


def test_poll_limit_keeps_the_newest(
    messaging: MessagingService, team: Team, clock: FakeClock
) -> None:
    for n in range(4):
        clock.advance(1)
        messaging.send(team.fleet_id, team.director, team.worker, f"m{n}")

    assert [m.text for m in messaging.poll(team.fleet_id, team.worker, limit=2)] == ["m3", "m2"]
    assert len(messaging.poll(team.fleet_id, team.worker, limit=10)) == 4


def test_poll_leaves_out_acked_and_canceled_messages(
    messaging: MessagingService, team: Team
) -> None:
    acked = messaging.send(team.fleet_id, team.director, team.worker, "acked").message.task_id
    canceled = messaging.send(team.fleet_id, team.director, team.worker, "gone").message.task_id
    messaging.send(team.fleet_id, team.director, team.worker, "open")
    messaging.ack(team.fleet_id, team.worker, acked)
    messaging.cancel(team.fleet_id, team.director, canceled)

    assert [m.text for m in messaging.poll(team.fleet_id, team.worker)] == ["open"]


def test_poll_of_an_empty_inbox_is_empty(messaging: MessagingService, team: Team) -> None:
    assert messaging.poll(team.fleet_id, team.worker) == []


# -- ack / cancel -----------------------------------------------------------------------------


def test_ack_completes_the_message_at_the_ack_time(
    messaging: MessagingService, team: Team, world, clock: FakeClock
) -> None:
    sent = messaging.send(team.fleet_id, team.director, team.worker, "do it").message
    clock.advance(90)

    acked = messaging.ack(team.fleet_id, team.worker, sent.task_id)

    stored = world.get_message(sent.task_id)
    assert stored == acked
    assert stored.state is MessageState.COMPLETED
    assert stored.status_timestamp == clock.now()
    assert stored.created_at == sent.created_at


def test_cancel_by_the_sender_cancels_the_message(
    messaging: MessagingService, team: Team, world, clock: FakeClock
) -> None:
    sent = messaging.send(team.fleet_id, team.director, team.worker, "never mind").message
    clock.advance(5)

    messaging.cancel(team.fleet_id, team.director, sent.task_id)

    stored = world.get_message(sent.task_id)
    assert stored.state is MessageState.CANCELED
    assert stored.status_timestamp == clock.now()


def test_ack_by_someone_else_in_the_fleet_is_refused_and_changes_nothing(
    messaging: MessagingService, team: Team, world
) -> None:
    task = messaging.send(team.fleet_id, team.director, team.worker, "x").message.task_id

    error = error_of(messaging.ack, team.fleet_id, team.director, task)

    assert isinstance(error, Invalid)
    assert error.message == "Only the recipient can ACK a task"
    assert world.get_message(task).state is MessageState.INPUT_REQUIRED


def test_cancel_by_someone_else_in_the_fleet_is_refused_and_changes_nothing(
    messaging: MessagingService, team: Team, world
) -> None:
    task = messaging.send(team.fleet_id, team.director, team.worker, "x").message.task_id

    error = error_of(messaging.cancel, team.fleet_id, team.worker, task)

    assert error.message == "Only the sender can cancel a task"
    assert world.get_message(task).state is MessageState.INPUT_REQUIRED


def test_settling_twice_names_the_terminal_state(
    messaging: MessagingService, team: Team, world
) -> None:
    acked = messaging.send(team.fleet_id, team.director, team.worker, "a").message.task_id
    canceled = messaging.send(team.fleet_id, team.director, team.worker, "c").message.task_id
    messaging.ack(team.fleet_id, team.worker, acked)
    messaging.cancel(team.fleet_id, team.director, canceled)

    assert error_of(messaging.ack, team.fleet_id, team.worker, acked).message == (
        "Cannot ACK task in state completed"
    )
    assert error_of(messaging.ack, team.fleet_id, team.worker, canceled).message == (
        "Cannot ACK task in state canceled"
    )
    assert error_of(messaging.cancel, team.fleet_id, team.director, acked).message == (
        "Cannot cancel task in state completed"
    )
    assert world.get_message(canceled).state is MessageState.CANCELED


def test_messages_of_a_deregistered_owner_stay_reachable_in_the_fleet(
    messaging: MessagingService, team: Team, world
) -> None:
    task = messaging.send(team.fleet_id, team.director, team.worker, "x").message.task_id
    world.deregister(team.worker)

    messaging.cancel(team.fleet_id, team.director, task)

    assert world.get_message(task).state is MessageState.CANCELED
    assert messaging.show(team.fleet_id, team.director, task).message.text == "x"


# -- show -------------------------------------------------------------------------------------


def test_show_returns_the_message_and_its_deliveries_to_any_active_agent(
    messaging: MessagingService, team: Team
) -> None:
    sent = messaging.send(team.fleet_id, team.director, team.worker, "x")

    detail = messaging.show(team.fleet_id, team.admin, sent.message.task_id)

    assert detail.message == sent.message
    assert detail.deliveries == (sent.delivery,)


def test_show_of_a_broadcast_summary_has_no_deliveries(
    messaging: MessagingService, team: Team
) -> None:
    summary = messaging.broadcast(team.fleet_id, team.director, "all hands").summary

    detail = messaging.show(team.fleet_id, team.worker, summary.task_id)

    assert detail.message == summary
    assert detail.deliveries == ()


def test_show_of_a_broadcast_summary_gives_what_each_recipient_was_sent(
    messaging: MessagingService, team: Team
) -> None:
    made = messaging.broadcast(team.fleet_id, team.director, "all hands")
    messaging.broadcast(team.fleet_id, team.director, "later")  # another broadcast's copies
    first_copy = made.deliveries[0].task_id
    messaging.ack(team.fleet_id, made.deliveries[0].recipient_agent_id, first_copy)

    copies = messaging.show(team.fleet_id, team.worker, made.summary.task_id).copies

    assert [(c.task_id, c.to_agent_id, c.text) for c in copies] == [
        (d.task_id, d.recipient_agent_id, "all hands") for d in made.deliveries
    ]
    assert copies[0].state is MessageState.COMPLETED
    assert messaging.show(team.fleet_id, team.worker, first_copy).copies == ()


# -- errors map to kinds ----------------------------------------------------------------------


def test_not_found_and_ownership_errors_have_distinct_kinds(
    messaging: MessagingService, team: Team
) -> None:
    task = messaging.send(team.fleet_id, team.director, team.worker, "x").message.task_id

    assert error_of(messaging.poll, team.fleet_id, 999).kind is ErrorKind.NOT_FOUND
    assert error_of(messaging.ack, team.fleet_id, team.director, task).kind is ErrorKind.INVALID


# -- nudge: an ordinary send to a placed target -------------------------------------------------


def test_nudge_is_an_ordinary_ackable_message_with_a_preview(
    messaging: MessagingService, team: Team, world, notifier: RecordingNotifier
) -> None:
    done = messaging.nudge(team.fleet_id, team.director, team.worker, "wake up")

    stored = world.get_message(done.sent.message.task_id)
    assert (stored.type, stored.state) == (MessageType.UNICAST, MessageState.INPUT_REQUIRED)
    assert (stored.from_agent_id, stored.context_id) == (team.director, team.worker)
    assert done.target.agent_id == team.worker
    assert done.placement.pane_id == "%1"
    assert [a.task_id for a in notifier.announced] == [stored.task_id]
    assert world.delivery(stored.task_id, team.worker).state is DeliveryState.SENT


def test_nudge_of_a_pending_member_queues_the_message(
    messaging: MessagingService, team: Team, world
) -> None:
    done = messaging.nudge(team.fleet_id, team.director, team.pending, "when you are up")

    assert done.placement.pane_id is None
    assert done.sent.delivery.error == "pending-pane"
    assert world.get_message(done.sent.message.task_id) is not None


@pytest.mark.parametrize("case", ["unknown", "other-fleet", "deregistered"])
def test_nudge_of_a_target_outside_reach(
    messaging: MessagingService, team: Team, other: FleetCreated, world, case: str
) -> None:
    target = {
        "unknown": 999,
        "other-fleet": other.director.agent_id,
        "deregistered": team.worker,
    }[case]
    if case == "deregistered":
        world.deregister(team.worker)

    error = error_of(messaging.nudge, team.fleet_id, team.director, target, "x")

    assert error.message == f"Agent {target} not found"
    assert world.all_messages() == []


def test_nudge_of_the_administrator_reports_the_missing_placement(
    messaging: MessagingService, team: Team, world
) -> None:
    error = error_of(messaging.nudge, team.fleet_id, team.director, team.admin, "x")

    assert error.message == (
        f"agent {team.admin} has no placement row; it was not spawned via `cafleet member create`."
    )
    assert world.all_messages() == []


def test_nudge_resolves_the_target_before_the_sender(
    messaging: MessagingService, team: Team, world
) -> None:
    unknown_target = error_of(messaging.nudge, team.fleet_id, 998, 999, "x")
    unknown_sender = error_of(messaging.nudge, team.fleet_id, 998, team.worker, "x")

    assert unknown_target.message == "Agent 999 not found"
    assert unknown_sender.message == "Sender agent not found or not active in fleet: 998"
    assert world.all_messages() == []


# -- attempts and receipts ---------------------------------------------------------------------


def test_every_attempt_of_the_ladder_is_a_ledger_row_in_order(
    store: MemoryStore, clock: FakeClock, team: Team, world
) -> None:
    hook = PushOutcome.skipped("no-waiting-hook", "tmux", "%1", "claude-hook")
    typed = PushOutcome.sent("tmux", "%1").after((hook,))
    service = MessagingService(store, clock, RecordingNotifier(lambda a: typed), ThreadLocks())

    result = service.send(team.fleet_id, team.director, team.worker, "hi")

    rows = world.deliveries(result.message.task_id)
    assert [(d.attempt, d.channel, d.state, d.error) for d in rows] == [
        (1, "claude-hook", DeliveryState.SKIPPED, "no-waiting-hook"),
        (2, "keys", DeliveryState.SENT, None),
    ]
    assert result.delivery == rows[-1]


def test_a_receipt_confirms_the_sent_attempt_once_and_only_for_its_recipient(
    store: MemoryStore, clock: FakeClock, team: Team, world
) -> None:
    hook = PushOutcome.skipped("no-waiting-hook", "tmux", "%1", "claude-hook")
    service = MessagingService(
        store,
        clock,
        RecordingNotifier(lambda a: PushOutcome.sent("tmux", "%1").after((hook,))),
        ThreadLocks(),
    )
    task = service.send(team.fleet_id, team.director, team.worker, "hi").message.task_id
    first, later = clock.now(), clock.now().replace(year=2027)

    assert service.confirm(team.director, [task], first) == 0  # not the Director's message
    assert service.confirm(team.worker, [task], first) == 1
    assert service.confirm(team.worker, [task], later) == 0  # the first word stays

    rows = world.deliveries(task)
    assert [d.confirmed_at for d in rows] == [None, first]  # the skipped try took nothing in
    assert clock.slept == []  # nothing of it was still being announced: no receipt waited


class StillClock(FakeClock):
    """Time stands still while a receipt waits, which lets the announcing thread go on."""

    def __init__(self) -> None:
        super().__init__()
        self.waited = threading.Event()

    def sleep(self, seconds: float) -> None:
        self.waited.set()
        time.sleep(0.005)


def test_a_receipt_that_comes_while_its_message_is_announced_is_written_once_recorded(
    store: MemoryStore, team: Team, world
) -> None:
    clock = StillClock()
    taken_at = clock.now() + timedelta(seconds=1)
    receipts: list[int] = []
    hooks: list[threading.Thread] = []

    def announce(a: Announcement) -> PushOutcome:
        # the agent's prompt hook reports the preview while the sender still checks it
        hook = threading.Thread(
            target=lambda: receipts.append(service.confirm(team.worker, [a.task_id], taken_at))
        )
        hooks.append(hook)
        hook.start()
        assert clock.waited.wait(5)  # the receipt found the row still being announced
        return PushOutcome.sent("tmux", "%1")

    service = MessagingService(store, clock, RecordingNotifier(announce), ThreadLocks())
    task = service.send(team.fleet_id, team.director, team.worker, "hi").message.task_id
    hooks[0].join(5)

    assert receipts == [1]
    [row] = world.deliveries(task)
    assert (row.state, row.confirmed_at) == (DeliveryState.SENT, taken_at)


def test_a_receipt_waits_for_an_announcement_no_longer_than_its_patience(
    store: MemoryStore, clock: FakeClock, team: Team, world
) -> None:
    receipts: list[int] = []

    def announce(a: Announcement) -> PushOutcome:  # a receipt whose announcement never ends
        receipts.append(service.confirm(team.worker, [a.task_id], clock.now(), patience=3))
        return PushOutcome.sent("tmux", "%1")

    service = MessagingService(store, clock, RecordingNotifier(announce), ThreadLocks())
    task = service.send(team.fleet_id, team.director, team.worker, "hi").message.task_id

    assert receipts == [0]
    assert sum(clock.slept) == pytest.approx(3, abs=RECEIPT_POLL_SECONDS)
    assert [d.confirmed_at for d in world.deliveries(task)] == [None]


def test_each_announcement_carries_the_recent_unread_ones_the_agent_has_not_taken_in(
    store: MemoryStore, clock: FakeClock, team: Team
) -> None:
    notifier = RecordingNotifier()
    service = MessagingService(store, clock, notifier, ThreadLocks())
    send = lambda text: service.send(team.fleet_id, team.director, team.worker, text)  # noqa: E731

    first = send("one").message.task_id
    second = send("two").message.task_id
    service.confirm(team.worker, [first], clock.now())  # the agent took the first in
    third = send("three").message.task_id
    service.ack(team.fleet_id, team.worker, second)  # read: no longer waiting for a poll
    send("four")
    clock.advance(JOIN_WINDOW_SECONDS + 1)  # an announcement that old stands for nothing
    send("five")

    assert [a.untaken for a in notifier.announced] == [(), (first,), (second,), (third,), ()]


# -- the body size limit ---------------------------------------------------------------------


@pytest.fixture
def limited(store: MemoryStore, clock: FakeClock, notifier: RecordingNotifier) -> MessagingService:
    return MessagingService(store, clock, notifier, ThreadLocks(), max_body_bytes=8)


LIMIT_LINE = "message body is 9 bytes; the limit is 8 bytes (CAFLEET_MAX_BODY_BYTES)"


def test_the_default_body_limit_is_one_mib(messaging: MessagingService, team: Team, world) -> None:
    messaging.send(team.fleet_id, team.director, team.worker, "é" * (512 * 1024))

    error = error_of(messaging.send, team.fleet_id, team.director, team.worker, "x" * (2**20 + 1))

    assert isinstance(error, Invalid)
    assert error.message == (
        "message body is 1048577 bytes; the limit is 1048576 bytes (CAFLEET_MAX_BODY_BYTES)"
    )
    assert len(world.all_messages()) == 1


@pytest.mark.parametrize("text", ["12345678", "123456é", "🙂🙂"])
def test_a_body_at_the_limit_in_utf8_bytes_is_sent(limited, team: Team, world, text) -> None:
    limited.send(team.fleet_id, team.director, team.worker, text)

    assert [m.text for m in world.all_messages()] == [text]


@pytest.mark.parametrize("text", ["123456789", "1234567é", "🙂🙂x"])
def test_a_body_one_byte_over_is_refused_before_storage(
    limited, team: Team, world, notifier, text
) -> None:
    error = error_of(limited.send, team.fleet_id, team.director, team.worker, text)

    assert (error.kind, error.message) == (ErrorKind.INVALID, LIMIT_LINE)
    assert world.all_messages() == []
    assert notifier.announced == []


def test_a_broadcast_over_the_limit_stores_nothing(limited, team: Team, world) -> None:
    error = error_of(limited.broadcast, team.fleet_id, team.director, "123456789")

    assert (error.kind, error.message) == (ErrorKind.INVALID, LIMIT_LINE)
    assert world.all_messages() == []


def test_a_stored_body_over_a_lowered_limit_stays_readable(
    messaging: MessagingService, limited: MessagingService, team: Team
) -> None:
    sent = messaging.send(team.fleet_id, team.director, team.worker, "a long stored body")

    shown = limited.show(team.fleet_id, team.worker, sent.message.task_id)
    acked = limited.ack(team.fleet_id, team.worker, sent.message.task_id)

    assert shown.message.text == acked.text == "a long stored body"

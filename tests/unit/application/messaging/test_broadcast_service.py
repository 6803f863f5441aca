"""Broadcast on the fakes: recipients, summary row, ledger, delivered count."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from cafleet.adapters.fake.clock import FakeClock
from cafleet.adapters.fake.notifier import RecordingNotifier
from cafleet.adapters.fake.pane_driver import ThreadLocks
from cafleet.adapters.fake.store import MemoryStore
from cafleet.application.members.registry import ListMode, MemberService
from cafleet.application.messaging.service import MessagingService
from cafleet.domain.delivery import Announcement, DeliveryState, PushOutcome
from cafleet.domain.fleet import CardKind
from cafleet.domain.message import MessageState, MessageType


@dataclass
class Team:
    fleet_id: int
    director: int
    admin: int
    alice: int  # pane %1
    bob: int  # pane %2
    watcher: int  # monitoring member, pane %3
    pending: int  # no pane yet


@pytest.fixture
def team(world) -> Team:
    made = world.fleet("alpha")
    return Team(
        made.fleet.fleet_id,
        made.director.agent_id,
        made.administrator.agent_id,
        world.member(made, "alice", pane_id="%1"),
        world.member(made, "bob", pane_id="%2"),
        world.member(made, "watch", pane_id="%3", card_kind=CardKind.MONITORING_MEMBER),
        world.member(made, "pending", pane_id=None),
    )


def deliveries_of(world, summary_id: int) -> list:
    return [m for m in world.all_messages() if m.origin_task_id == summary_id and not m.is_summary]


def test_a_member_broadcast_reaches_everyone_but_itself_and_the_administrator(
    messaging: MessagingService, team: Team, world
) -> None:
    result = messaging.broadcast(team.fleet_id, team.alice, "standup")

    rows = deliveries_of(world, result.summary.task_id)
    assert [m.to_agent_id for m in rows] == [team.director, team.bob, team.watcher, team.pending]
    assert result.recipients == 4
    assert [d.recipient_agent_id for d in result.deliveries] == [m.to_agent_id for m in rows]


def test_an_administrator_broadcast_reaches_everyone_else(
    messaging: MessagingService, team: Team, world
) -> None:
    result = messaging.broadcast(team.fleet_id, team.admin, "maintenance")

    recipients = [m.to_agent_id for m in deliveries_of(world, result.summary.task_id)]
    assert recipients == [team.director, team.alice, team.bob, team.watcher, team.pending]


def test_a_broadcast_skips_deregistered_agents(
    messaging: MessagingService, team: Team, world
) -> None:
    world.deregister(team.bob)

    result = messaging.broadcast(team.fleet_id, team.director, "x")

    recipients = [m.to_agent_id for m in deliveries_of(world, result.summary.task_id)]
    assert team.bob not in recipients
    assert result.recipients == 3


def test_the_summary_row_is_a_completed_self_origin_record_owned_by_the_sender(
    messaging: MessagingService, team: Team, world, clock: FakeClock
) -> None:
    result = messaging.broadcast(team.fleet_id, team.alice, "standup")

    summary = world.get_message(result.summary.task_id)
    assert summary == result.summary
    assert summary.type is MessageType.BROADCAST_SUMMARY
    assert summary.context_id == summary.from_agent_id == team.alice
    assert summary.to_agent_id is None
    assert summary.state is MessageState.COMPLETED
    assert summary.text == "Broadcast sent to 4 recipients"
    assert summary.origin_task_id == summary.task_id
    assert summary.created_at == summary.status_timestamp == clock.now()


def test_each_delivery_is_an_input_required_unicast_pointing_at_the_summary(
    messaging: MessagingService, team: Team, world
) -> None:
    result = messaging.broadcast(team.fleet_id, team.director, "standup")

    for row in deliveries_of(world, result.summary.task_id):
        assert row.type is MessageType.UNICAST
        assert row.state is MessageState.INPUT_REQUIRED
        assert row.context_id == row.to_agent_id
        assert row.from_agent_id == team.director
        assert row.text == "standup"
        assert row.origin_task_id == result.summary.task_id


def test_the_ledger_has_one_row_per_recipient_and_none_for_the_summary(
    messaging: MessagingService, team: Team, world
) -> None:
    result = messaging.broadcast(team.fleet_id, team.director, "standup")

    assert world.deliveries(result.summary.task_id) == []
    states = {}
    for row in deliveries_of(world, result.summary.task_id):
        [delivery] = world.deliveries(row.task_id)
        states[delivery.recipient_agent_id] = (delivery.state, delivery.error)
    assert states == {
        team.alice: (DeliveryState.SENT, None),
        team.bob: (DeliveryState.SENT, None),
        team.watcher: (DeliveryState.SENT, None),
        team.pending: (DeliveryState.SKIPPED, "pending-pane"),
    }
    assert result.delivered == 3


def test_pushes_happen_after_commit_for_every_pane_bound_recipient(
    store: MemoryStore, clock: FakeClock, team: Team
) -> None:
    visible: dict[int, bool] = {}

    def outcome(announcement: Announcement) -> PushOutcome:
        with store() as uow:
            visible[announcement.target.agent_id] = (
                uow.messages.get(announcement.task_id) is not None
            )
        return PushOutcome.sent("tmux", announcement.target.pane_id)

    notifier = RecordingNotifier(outcome)
    MessagingService(store, clock, notifier, ThreadLocks()).broadcast(
        team.fleet_id, team.admin, "x"
    )

    assert visible == {team.director: True, team.alice: True, team.bob: True, team.watcher: True}
    assert sorted(a.target.pane_id for a in notifier.announced) == ["%0", "%1", "%2", "%3"]


def test_delivered_counts_only_sent_rows(
    store: MemoryStore, clock: FakeClock, team: Team, world
) -> None:
    def outcome(announcement: Announcement) -> PushOutcome:
        pane = announcement.target.pane_id
        if pane == "%1":
            return PushOutcome.skipped("not-agent:bash", "tmux", pane)
        if pane == "%2":
            raise OSError("socket closed")
        return PushOutcome.sent("tmux", pane)

    result = MessagingService(store, clock, RecordingNotifier(outcome), ThreadLocks()).broadcast(
        team.fleet_id, team.director, "x"
    )

    by_recipient = {d.recipient_agent_id: d for d in result.deliveries}
    assert by_recipient[team.watcher].state is DeliveryState.SENT
    assert by_recipient[team.alice].state is DeliveryState.SKIPPED
    assert by_recipient[team.alice].error == "not-agent:bash"
    assert by_recipient[team.bob].state is DeliveryState.FAILED
    assert by_recipient[team.bob].error == "OSError: socket closed"
    assert by_recipient[team.pending].error == "pending-pane"
    assert result.delivered == 1
    for delivery in result.deliveries:
        assert world.delivery(delivery.task_id, delivery.recipient_agent_id) == delivery


def test_a_broadcast_with_no_recipients_still_writes_the_summary(
    messaging: MessagingService, world, notifier: RecordingNotifier
) -> None:
    made = world.fleet("lonely")
    fleet_id, director = made.fleet.fleet_id, made.director.agent_id

    result = messaging.broadcast(fleet_id, director, "anyone?")

    assert (result.recipients, result.delivered) == (0, 0)
    summary = world.get_message(result.summary.task_id)
    assert summary.text == "Broadcast sent to 0 recipients"
    assert summary.origin_task_id == summary.task_id
    assert [m.task_id for m in world.all_messages()] == [summary.task_id]
    assert notifier.announced == []


def test_summaries_are_hidden_from_poll_and_activity(
    messaging: MessagingService, members: MemberService, world
) -> None:
    made = world.fleet("alpha")
    alice = world.member(made, "alice", pane_id="%1")
    world.deregister(made.director.agent_id)  # leaves alice with no recipient but the admin

    messaging.broadcast(made.fleet.fleet_id, alice, "anyone?")

    assert messaging.poll(made.fleet.fleet_id, alice) == []
    [view] = members.list(made.fleet.fleet_id, ListMode.ACTIVITY).members
    assert view.activity.last_sent is None
    assert view.activity.last_recv is None


def test_broadcast_deliveries_can_be_canceled_one_by_one(
    messaging: MessagingService, team: Team, world
) -> None:
    result = messaging.broadcast(team.fleet_id, team.director, "x")
    first, second = deliveries_of(world, result.summary.task_id)[:2]

    messaging.cancel(team.fleet_id, team.director, first.task_id)

    assert world.get_message(first.task_id).state is MessageState.CANCELED
    assert world.get_message(second.task_id).state is MessageState.INPUT_REQUIRED
    assert world.get_message(result.summary.task_id).state is MessageState.COMPLETED

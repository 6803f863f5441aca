"""The message state machine: who may settle a message, and that terminal states are final."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from cafleet.domain.errors import Invalid
from cafleet.domain.message import (
    Message,
    MessageState,
    MessageType,
    broadcast_summary,
    unicast,
)

T0 = datetime(2026, 1, 1, tzinfo=UTC)
LATER = T0 + timedelta(minutes=5)
SENDER, RECIPIENT, STRANGER = 10, 20, 30


def stored(message: Message, task_id: int = 7) -> Message:
    return Message(
        task_id=task_id,
        context_id=message.context_id,
        from_agent_id=message.from_agent_id,
        to_agent_id=message.to_agent_id,
        type=message.type,
        created_at=message.created_at,
        state=message.state,
        status_timestamp=message.status_timestamp,
        origin_task_id=message.origin_task_id,
        text=message.text,
    )


@pytest.fixture
def pending() -> Message:
    return stored(unicast(SENDER, RECIPIENT, "do the thing", T0))


def test_unicast_is_owned_by_its_recipient_and_needs_input() -> None:
    message = unicast(SENDER, RECIPIENT, "hello", T0)

    assert message.context_id == RECIPIENT
    assert message.to_agent_id == RECIPIENT
    assert message.from_agent_id == SENDER
    assert message.type is MessageType.UNICAST
    assert message.state is MessageState.INPUT_REQUIRED
    assert message.created_at == message.status_timestamp == T0
    assert message.origin_task_id is None
    assert not message.is_summary


def test_broadcast_summary_is_owned_by_the_sender_and_born_completed() -> None:
    summary = broadcast_summary(SENDER, 3, T0)

    assert summary.context_id == SENDER
    assert summary.to_agent_id is None
    assert summary.type is MessageType.BROADCAST_SUMMARY
    assert summary.state is MessageState.COMPLETED
    assert summary.text == "Broadcast sent to 3 recipients"
    assert summary.is_summary


def test_ack_by_the_recipient_completes_and_stamps_the_time(pending: Message) -> None:
    acked = pending.ack(RECIPIENT, LATER)

    assert acked.state is MessageState.COMPLETED
    assert acked.status_timestamp == LATER
    assert acked.created_at == T0
    assert pending.state is MessageState.INPUT_REQUIRED  # the original is untouched


@pytest.mark.parametrize("actor", [SENDER, STRANGER])
def test_only_the_recipient_can_ack(pending: Message, actor: int) -> None:
    with pytest.raises(Invalid) as raised:
        pending.ack(actor, LATER)

    assert raised.value.message == "Only the recipient can ACK a task"


@pytest.mark.parametrize(
    ("settle", "state"),
    [
        (lambda m: m.ack(RECIPIENT, LATER), "completed"),
        (lambda m: m.cancel(SENDER, LATER), "canceled"),
    ],
)
def test_ack_of_a_terminal_message_names_its_state(pending: Message, settle, state) -> None:
    settled = settle(pending)

    with pytest.raises(Invalid) as raised:
        settled.ack(RECIPIENT, LATER + timedelta(seconds=1))

    assert raised.value.message == f"Cannot ACK task in state {state}"


def test_cancel_by_the_sender_cancels_and_stamps_the_time(pending: Message) -> None:
    canceled = pending.cancel(SENDER, LATER)

    assert canceled.state is MessageState.CANCELED
    assert canceled.status_timestamp == LATER


@pytest.mark.parametrize("actor", [RECIPIENT, STRANGER])
def test_only_the_sender_can_cancel(pending: Message, actor: int) -> None:
    with pytest.raises(Invalid) as raised:
        pending.cancel(actor, LATER)

    assert raised.value.message == "Only the sender can cancel a task"


@pytest.mark.parametrize(
    ("settle", "state"),
    [
        (lambda m: m.ack(RECIPIENT, LATER), "completed"),
        (lambda m: m.cancel(SENDER, LATER), "canceled"),
    ],
)
def test_cancel_of_a_terminal_message_names_its_state(pending: Message, settle, state) -> None:
    settled = settle(pending)

    with pytest.raises(Invalid) as raised:
        settled.cancel(SENDER, LATER)

    assert raised.value.message == f"Cannot cancel task in state {state}"


def test_a_broadcast_summary_can_be_neither_acked_nor_canceled_by_its_sender() -> None:
    summary = stored(broadcast_summary(SENDER, 2, T0))

    with pytest.raises(Invalid) as ack_error:
        summary.ack(SENDER, LATER)
    with pytest.raises(Invalid) as cancel_error:
        summary.cancel(SENDER, LATER)

    assert ack_error.value.message == "Cannot ACK task in state completed"
    assert cancel_error.value.message == "Cannot cancel task in state completed"


def test_a_self_sent_message_can_be_acked_by_its_sender_who_is_also_the_owner() -> None:
    own = stored(unicast(SENDER, SENDER, "note to self", T0))

    assert own.ack(SENDER, LATER).state is MessageState.COMPLETED

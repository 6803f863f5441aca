"""Messages ("tasks" in storage) and their state machine."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from datetime import datetime
from enum import StrEnum
from typing import TypeVar

from cafleet.domain.errors import Invalid

T = TypeVar("T")


class MessageState(StrEnum):
    INPUT_REQUIRED = "input_required"
    COMPLETED = "completed"
    CANCELED = "canceled"


class MessageType(StrEnum):
    UNICAST = "unicast"
    BROADCAST_SUMMARY = "broadcast_summary"


@dataclass(frozen=True)
class Message:
    task_id: int
    context_id: int  # owner: the recipient of a delivery, the sender of a broadcast summary
    from_agent_id: int
    to_agent_id: int | None
    type: MessageType
    created_at: datetime
    state: MessageState
    status_timestamp: datetime
    origin_task_id: int | None
    text: str
    sender_verified: bool = False  # sent from the sender's own member pane, proven by its secret
    in_reply_to: int | None = None  # the message this one answers
    # the message that started its thread (a broadcast's copies: the broadcast's summary);
    # None until stored: a message that answers nothing starts its own
    thread_id: int | None = None

    @property
    def is_summary(self) -> bool:
        return self.type is MessageType.BROADCAST_SUMMARY

    @property
    def is_copy(self) -> bool:
        """One recipient's copy of a broadcast."""
        return not self.is_summary and self.origin_task_id is not None

    def seen_by(self, agent_id: int) -> bool:
        """Whether the agent sent or received this message (a broadcast's summary: sent it;
        its recipients each saw their own copy)."""
        return agent_id in (self.from_agent_id, self.context_id)

    @property
    def thread(self) -> int:
        """The id of the message that started this one's thread."""
        return self.thread_id or self.task_id

    def answered_by_default(self, sender_id: int) -> int | None:
        """Whom a reply from `sender_id` goes to when nobody is named: the other party
        (a broadcast's summary has none: its sender names a recipient)."""
        if self.is_summary:
            return None
        return self.context_id if sender_id == self.from_agent_id else self.from_agent_id

    def ack(self, by_agent_id: int, at: datetime) -> Message:
        if self.context_id != by_agent_id:
            raise Invalid("Only the recipient can ACK a task")
        if self.state is not MessageState.INPUT_REQUIRED:
            raise Invalid(f"Cannot ACK task in state {self.state.value}")
        return replace(self, state=MessageState.COMPLETED, status_timestamp=at)

    def cancel(self, by_agent_id: int, at: datetime) -> Message:
        if self.from_agent_id != by_agent_id:
            raise Invalid("Only the sender can cancel a task")
        if self.state is not MessageState.INPUT_REQUIRED:
            raise Invalid(f"Cannot cancel task in state {self.state.value}")
        return replace(self, state=MessageState.CANCELED, status_timestamp=at)


def unicast(
    sender_id: int,
    recipient_id: int,
    text: str,
    at: datetime,
    origin_task_id: int | None = None,
    *,
    sender_verified: bool = False,
    answers: Message | None = None,
) -> Message:
    """A new delivery owned by its recipient; its id is assigned when stored. `answers`: the
    message it replies to, whose thread it joins (a broadcast's copy: the broadcast's)."""
    thread = answers.thread if answers is not None else origin_task_id
    return Message(
        task_id=0,
        context_id=recipient_id,
        from_agent_id=sender_id,
        to_agent_id=recipient_id,
        type=MessageType.UNICAST,
        created_at=at,
        state=MessageState.INPUT_REQUIRED,
        status_timestamp=at,
        origin_task_id=origin_task_id,
        text=text,
        sender_verified=sender_verified,
        in_reply_to=None if answers is None else answers.task_id,
        thread_id=thread,
    )


def broadcast_summary(
    sender_id: int, recipient_count: int, at: datetime, *, sender_verified: bool = False
) -> Message:
    """The sender's record of a broadcast; born completed, points at itself once stored."""
    return Message(
        task_id=0,
        context_id=sender_id,
        from_agent_id=sender_id,
        to_agent_id=None,
        type=MessageType.BROADCAST_SUMMARY,
        created_at=at,
        state=MessageState.COMPLETED,
        status_timestamp=at,
        origin_task_id=None,
        text=f"Broadcast sent to {recipient_count} recipients",
        sender_verified=sender_verified,
    )


def once_per_broadcast(items: Iterable[T], message_of: Callable[[T], Message]) -> Iterator[T]:
    """The items, but a broadcast once: the first of its copies met (the copies differ only
    in their recipient)."""
    met: set[int] = set()
    for item in items:
        message = message_of(item)
        origin = message.origin_task_id
        if message.is_copy and origin is not None:
            if origin in met:
                continue
            met.add(origin)
        yield item

"""Messages ("tasks" in storage) and their state machine."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from enum import StrEnum

from cafleet.domain.errors import Invalid


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

    @property
    def is_summary(self) -> bool:
        return self.type is MessageType.BROADCAST_SUMMARY

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
) -> Message:
    """A new delivery owned by its recipient; its id is assigned when stored."""
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

"""The push ledger: what happened when a message was announced in its recipient's pane."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from enum import StrEnum


class DeliveryState(StrEnum):
    PENDING = "pending"
    SENT = "sent"
    SKIPPED = "skipped"
    FAILED = "failed"


class SkipReason:
    """The fixed vocabulary of skip reasons (stored in the ledger's error column)."""

    SELF = "self"
    NO_PLACEMENT = "no-placement"
    PENDING_PANE = "pending-pane"
    PANE_GONE = "pane-gone"
    AGENT_NOT_DETECTED = "agent-not-detected"

    @staticmethod
    def not_agent(command: str) -> str:
        return f"not-agent:{command}"


@dataclass(frozen=True)
class PushOutcome:
    """What a Notifier reports for one attempt."""

    state: DeliveryState
    transport: str | None = None
    pane_id: str | None = None
    error: str | None = None

    @staticmethod
    def sent(transport: str, pane_id: str) -> PushOutcome:
        return PushOutcome(DeliveryState.SENT, transport, pane_id)

    @staticmethod
    def skipped(
        reason: str, transport: str | None = None, pane_id: str | None = None
    ) -> PushOutcome:
        return PushOutcome(DeliveryState.SKIPPED, transport, pane_id, reason)

    @staticmethod
    def failed(error: str, transport: str | None = None, pane_id: str | None = None) -> PushOutcome:
        return PushOutcome(DeliveryState.FAILED, transport, pane_id, error)


@dataclass(frozen=True)
class Delivery:
    task_id: int
    recipient_agent_id: int
    state: DeliveryState
    created_at: datetime
    transport: str | None = None
    pane_id: str | None = None
    attempted_at: datetime | None = None
    error: str | None = None

    def settled(self, outcome: PushOutcome, at: datetime) -> Delivery:
        return replace(
            self,
            state=outcome.state,
            transport=outcome.transport,
            pane_id=outcome.pane_id,
            error=outcome.error,
            attempted_at=at,
        )

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

    AGENT_STARTING = "agent-starting"
    AGENT_BUSY = "agent-busy"

    @staticmethod
    def not_agent(command: str) -> str:
        return f"not-agent:{command}"

    @staticmethod
    def dialog(sign: str) -> str:
        return f"dialog:{sign}"


BEFORE_ENTER = " (before Enter)"

_SKIP_WORDS = {
    SkipReason.SELF: "the recipient is the sender",
    SkipReason.NO_PLACEMENT: "the recipient has no pane",
    SkipReason.PENDING_PANE: "the recipient's pane is not recorded yet",
    SkipReason.PANE_GONE: "the pane is gone",
    SkipReason.AGENT_NOT_DETECTED: "cannot tell what runs in the pane",
    SkipReason.AGENT_STARTING: "the agent did not finish starting",
    SkipReason.AGENT_BUSY: "the agent stayed in a turn, during which it drops a shell command",
}


def describe_skip(reason: str | None) -> str:
    """A skip reason from the ledger in words, e.g. `not-agent:bash` -> `pane runs bash`."""
    reason = reason or ""
    late = reason.endswith(BEFORE_ENTER)
    base = reason.removesuffix(BEFORE_ENTER)
    if base.startswith("not-agent:"):
        words = f"pane runs {base.removeprefix('not-agent:')}"
    elif base.startswith("dialog:"):
        words = f"a dialog is on screen ({base.removeprefix('dialog:')})"
    else:
        words = _SKIP_WORDS.get(base, base or "unknown reason")
    return f"{words}; the text was typed but Enter withheld" if late else words


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

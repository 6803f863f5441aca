"""Held deliveries: an announcement that waits for its pane instead of being settled.

A dialog on screen (nothing may be typed into it), a keystroke step the multiplexer did not
answer, or a preview left in the composer without its Enter do not settle a delivery. Its
row stays pending with a hold note (`held:<residue>:<reason>`), later messages to the pane
queue behind it, and whoever holds the pane's queue looks at the pane again until it can
finish the announcement, once (application/delivery_queue).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from cafleet.domain.delivery import (
    BEFORE_ENTER,
    INTERRUPTED,
    Channel,
    Delivery,
    DeliveryState,
    PushOutcome,
    Residue,
    SkipReason,
    describe_skip,
)

HELD = "held:"
# a pane that keeps failing is given up this long after the message was stored; a dialog is
# waited out as long as the message is unread
FAILING_HOLD_SECONDS = 600
MOST_ATTEMPTS = 20  # ledger rows of one delivery past which a new hold is not taken


@dataclass(frozen=True)
class Hold:
    residue: Residue  # what the attempt that left the hold may have left in the composer
    reason: str  # that attempt's skip reason or error

    @property
    def note(self) -> str:
        return f"{HELD}{self.residue}:{self.reason}"

    @staticmethod
    def parse(note: str | None) -> Hold | None:
        if note is None or not note.startswith(HELD):
            return None
        residue, _, reason = note.removeprefix(HELD).partition(":")
        try:
            return Hold(Residue(residue), reason)
        except ValueError:
            return None

    @staticmethod
    def of(outcome: PushOutcome) -> Hold | None:
        """The hold an attempt's outcome asks for: a dialog (the keys' `dialog:<sign>`,
        herdr's `agent-blocked`) or a keystroke step that failed (the pane did not answer);
        None when the outcome settles the delivery."""
        reason = outcome.error or ""
        if outcome.state is DeliveryState.SKIPPED and _is_dialog(reason):
            return Hold(outcome.residue, reason)
        if outcome.state is DeliveryState.FAILED and outcome.channel == Channel.KEYS:
            return Hold(outcome.residue, reason)
        return None

    @staticmethod
    def interrupted() -> Hold:
        return Hold(Residue.UNKNOWN, INTERRUPTED)

    @property
    def for_dialog(self) -> bool:
        return _is_dialog(self.reason)

    def given_up(self, delivery: Delivery, now: datetime) -> bool:
        """Whether the wait is over without an announcement: a failing pane after
        FAILING_HOLD_SECONDS, any hold after MOST_ATTEMPTS rows."""
        if delivery.attempt >= MOST_ATTEMPTS:
            return True
        late = delivery.created_at + timedelta(seconds=FAILING_HOLD_SECONDS)
        return not self.for_dialog and now >= late

    def without_preview(self, transport: str, pane_id: str) -> PushOutcome | None:
        """What it means that the composer no longer shows the preview: it never landed
        (None: announce it again), left without CAFleet's Enter, was submitted by the Enter
        that did not answer, or is lost with the process that typed it."""
        match self.residue:
            case Residue.MAYBE_SUBMITTED:
                return PushOutcome.sent(transport, pane_id)
            case Residue.TEXT:
                left = SkipReason.LEFT_COMPOSER
                return PushOutcome.skipped(left, transport, pane_id, Channel.KEYS)
            case Residue.UNKNOWN:
                return PushOutcome.failed(INTERRUPTED, transport, pane_id)
        return None

    def words(self) -> str:
        """The hold as the CLI says it."""
        waiting = describe_skip(self.reason) if self.for_dialog else self.reason
        if self.residue is Residue.NOTHING:
            return waiting
        return f"{waiting}; the preview may be in its composer, finished before anything else"


def held_after(delivery: Delivery, hold: Hold) -> Delivery:
    """The pending row that waits for the pane after `delivery`'s attempt."""
    return Delivery(
        delivery.task_id,
        delivery.recipient_agent_id,
        DeliveryState.PENDING,
        delivery.created_at,
        delivery.transport,
        delivery.pane_id,
        error=hold.note,
        attempt=delivery.attempt + 1,
    )


def held_in_place(delivery: Delivery, hold: Hold) -> Delivery:
    """A begun row as a held one (its process ended: see `Delivery.interrupted`)."""
    return replace(delivery, attempted_at=None, error=hold.note)


def hold_of(delivery: Delivery) -> Hold | None:
    """The hold of a pending row, if it is one."""
    if delivery.state is not DeliveryState.PENDING:
        return None
    return Hold.parse(delivery.error)


def _is_dialog(reason: str) -> bool:
    base = reason.removesuffix(BEFORE_ENTER)
    return base.startswith("dialog:") or base == SkipReason.AGENT_BLOCKED

"""What became of a sent message's preview, as the send verbs (and `member nudge`) report it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cafleet.entrypoints.cli.app import warn

if TYPE_CHECKING:
    from cafleet.domain.delivery import Delivery


def notification_fields(delivery: Delivery, unrecorded: str | None = None) -> dict[str, Any]:
    """Upstream's `notification_sent` and, beside it, what became of the preview (ours);
    `unrecorded`: the store's error that kept it out of the ledger (the fields say what is
    known), only when there was one."""
    from cafleet.domain.delivery import DeliveryState

    notification: dict[str, Any] = {
        "state": delivery.state.value,
        "transport": delivery.transport,
        "reason": delivery.error,
    }
    if unrecorded is not None:
        notification["unrecorded"] = unrecorded
    return {"notification_sent": delivery.state is DeliveryState.SENT, "notification": notification}


def warn_unrecorded(what: str, delivery: Delivery | None, unrecorded: str | None) -> None:
    """The stderr line of a send that is stored although the store then failed: it succeeded
    and must not be sent again (`what`: e.g. `message 12`)."""
    from cafleet.domain.delivery import DeliveryState

    if unrecorded is None:
        return
    if delivery is None:
        known = "the outcome of some previews is not recorded"
    elif delivery.state is DeliveryState.PENDING:
        known = "its preview stays queued for the next delivery to the pane or the monitor"
    else:
        known = f"its preview was {delivery.state.value}, but that is not recorded"
    warn(f"Warning: {what} is stored; {known} ({unrecorded}). Do not send it again.")


def undelivered_line(delivery: Delivery) -> str | None:
    """What the text output says when no preview reached the pane, e.g.
    `preview skipped: pane runs bash`; None when it was sent."""
    from cafleet.domain.delivery import DeliveryState, describe_skip

    if delivery.state is DeliveryState.SENT:
        return None
    if delivery.state is DeliveryState.PENDING:
        from cafleet.domain.holds import hold_of
        from cafleet.domain.relay import relayed_host

        hold = hold_of(delivery)
        if hold is not None:
            return (
                f"preview held: {hold.words()}; it is announced once, when the pane is clear"
                " (`message show --full` tells the outcome)"
            )
        host = relayed_host(delivery.error)
        if host is not None:
            return (
                f"preview queued for host {host!r}: its relay (`cafleet relay` there) delivers"
                " it (`message show --full` tells the outcome)"
            )
        return (
            "preview queued: another cafleet process is delivering to this pane and delivers"
            " it next, in order (`message show --full` tells the outcome)"
        )
    if delivery.state is DeliveryState.SKIPPED:
        return f"preview skipped: {describe_skip(delivery.error)}"
    return f"preview {delivery.state.value}: {delivery.error or 'no reason recorded'}"

"""`cafleet message ...`: the hot path; keep imports inside the commands."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from cafleet.entrypoints.cli import numbers
from cafleet.entrypoints.cli.app import (
    App,
    GatedGroup,
    acting_agent_option,
    app_of,
    fleet_id_option,
    require_fleet_id,
)
from cafleet.entrypoints.cli.text_input import read_body, text_options

if TYPE_CHECKING:
    from cafleet.domain.delivery import Delivery
    from cafleet.entrypoints.cli.rendering import MessageRenderer

agent_id_option = acting_agent_option()
full_option = click.option("--full", is_flag=True, help="Verbose rendering, no truncation.")
quiet_option = click.option("--quiet", is_flag=True, help="Print only the task id.")


@click.group(cls=GatedGroup, help="Send, poll, acknowledge and cancel messages.")
def message() -> None:
    pass


def _renderer(app: App, full: bool) -> MessageRenderer:
    from cafleet.entrypoints.cli.rendering import MessageRenderer

    return MessageRenderer(app.components.settings.max_text_len, full)


def notification_json(delivery: Delivery) -> dict[str, Any]:
    return {
        "state": delivery.state.value,
        "transport": delivery.transport,
        "reason": delivery.error,
    }


def undelivered_line(delivery: Delivery) -> str | None:
    """What the text output says when no preview reached the pane, e.g.
    `preview skipped: pane runs bash`; None when it was sent."""
    from cafleet.domain.delivery import DeliveryState, describe_skip

    if delivery.state is DeliveryState.SENT:
        return None
    if delivery.state is DeliveryState.PENDING:
        return (
            "preview queued: another cafleet process is delivering to this pane and delivers"
            " it next, in order (`message show --full` tells the outcome)"
        )
    if delivery.state is DeliveryState.SKIPPED:
        return f"preview skipped: {describe_skip(delivery.error)}"
    return f"preview {delivery.state.value}: {delivery.error or 'no reason recorded'}"


@message.command("send", help="Send a message to one agent of the fleet.")
@fleet_id_option
@agent_id_option
@click.option(
    "--to", "to_agent_id", type=numbers.ID, required=True, help="The recipient's agent id."
)
@text_options
@full_option
@quiet_option
@click.pass_context
def send(
    ctx: click.Context,
    fleet_id: int | None,
    agent_id: int | None,
    to_agent_id: int,
    text: str | None,
    text_file: str | None,
    full: bool,
    quiet: bool,
) -> None:
    from cafleet.domain.delivery import DeliveryState

    body = read_body(text, text_file)
    app = app_of(ctx)
    fid = require_fleet_id(fleet_id)
    result = app.components.messaging().send(
        fid, app.acting(agent_id), to_agent_id, body, app.caller
    )
    render = _renderer(app, full)
    out = str(result.message.task_id) if quiet else f"Message sent.\n{render.text(result.message)}"
    if not quiet and (line := undelivered_line(result.delivery)):
        out = f"{out}\n{line}"
    app.emit(
        out,
        lambda: {
            "task": render.json(result.message),
            "notification_sent": result.delivery.state is DeliveryState.SENT,
            "notification": notification_json(result.delivery),
            "sender_verified": result.message.sender_verified,
        },
    )


@message.command("broadcast", help="Send a message to every other agent of the fleet.")
@fleet_id_option
@agent_id_option
@text_options
@full_option
@click.pass_context
def broadcast(
    ctx: click.Context,
    fleet_id: int | None,
    agent_id: int | None,
    text: str | None,
    text_file: str | None,
    full: bool,
) -> None:
    body = read_body(text, text_file)
    app = app_of(ctx)
    fid = require_fleet_id(fleet_id)
    result = app.components.messaging().broadcast(fid, app.acting(agent_id), body, app.caller)
    render = _renderer(app, full)
    out = (
        render.text(result.summary)
        if full
        else f"broadcast id={result.summary.task_id} recipients={result.recipients}"
        f" delivered={result.delivered}"
    )
    misses = [
        f"  to {d.recipient_agent_id}: {line}"
        for d in result.deliveries
        if (line := undelivered_line(d)) is not None
    ]
    if misses:
        out = "\n".join([out, *misses])
    app.emit(
        out,
        lambda: [
            {
                "task": render.json(result.summary),
                "recipients": result.recipients,
                "delivered": result.delivered,
            }
        ],
    )


@message.command("poll", help="List your messages that still need input, newest first.")
@fleet_id_option
@agent_id_option
@full_option
@click.option("--limit", type=numbers.COUNT, default=None, help="At most N messages.")
@click.pass_context
def poll(
    ctx: click.Context, fleet_id: int | None, agent_id: int | None, full: bool, limit: int | None
) -> None:
    app = app_of(ctx)
    fid = require_fleet_id(fleet_id)
    messages = app.components.messaging().poll(fid, app.acting(agent_id), limit, app.caller)
    render = _renderer(app, full)
    text = "\n\n".join(render.text(m) for m in messages) if messages else "No messages found."
    app.emit(text, lambda: [render.json(m) for m in messages])


@message.command("ack", help="Acknowledge a message you received.")
@fleet_id_option
@agent_id_option
@click.option("--task-id", type=numbers.ID, required=True, help="The message to acknowledge.")
@full_option
@quiet_option
@click.pass_context
def ack(
    ctx: click.Context,
    fleet_id: int | None,
    agent_id: int | None,
    task_id: int,
    full: bool,
    quiet: bool,
) -> None:
    app = app_of(ctx)
    fid = require_fleet_id(fleet_id)
    acked = app.components.messaging().ack(fid, app.acting(agent_id), task_id, app.caller)
    render = _renderer(app, full)
    out = str(acked.task_id) if quiet else f"Message acknowledged.\n{render.text(acked)}"
    app.emit(out, lambda: render.json(acked))


@message.command("cancel", help="Retract a message you sent that was not acknowledged yet.")
@fleet_id_option
@agent_id_option
@click.option("--task-id", type=numbers.ID, required=True, help="The message to cancel.")
@full_option
@click.pass_context
def cancel(
    ctx: click.Context, fleet_id: int | None, agent_id: int | None, task_id: int, full: bool
) -> None:
    app = app_of(ctx)
    fid = require_fleet_id(fleet_id)
    canceled = app.components.messaging().cancel(fid, app.acting(agent_id), task_id, app.caller)
    render = _renderer(app, full)
    app.emit(f"Task canceled.\n{render.text(canceled)}", lambda: render.json(canceled))


@message.command("show", help="Show any message of the fleet.")
@fleet_id_option
@agent_id_option
@click.option("--task-id", type=numbers.ID, required=True, help="The message to show.")
@full_option
@click.pass_context
def show(
    ctx: click.Context, fleet_id: int | None, agent_id: int | None, task_id: int, full: bool
) -> None:
    from cafleet.entrypoints.cli.rendering import deleted_fleet_note, iso, with_fleet_deleted

    app = app_of(ctx)
    fid = require_fleet_id(fleet_id)
    detail = app.components.messaging().show(fid, app.acting(agent_id), task_id, app.caller)
    render = _renderer(app, full)

    def payload() -> dict[str, Any]:
        body = render.json(detail.message)
        body["sender_verified"] = detail.message.sender_verified
        if full:
            body["deliveries"] = [
                {
                    "recipient_agent_id": d.recipient_agent_id,
                    "attempt": d.attempt,
                    "channel": d.channel,
                    "state": d.state.value,
                    "transport": d.transport,
                    "pane_id": d.pane_id,
                    "attempted_at": iso(d.attempted_at),
                    "confirmed_at": iso(d.confirmed_at),
                    "error": d.error,
                }
                for d in detail.deliveries
            ]
        return with_fleet_deleted(body, detail.fleet_deleted_at)

    text = render.text(detail.message, sender_check=True)
    if detail.fleet_deleted_at is not None:
        text = f"{text}\n{deleted_fleet_note(detail.fleet_deleted_at)}"
    app.emit(text, payload)

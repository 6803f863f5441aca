"""`cafleet message send`, `broadcast`, `ack` and `cancel`: the verbs that change messages."""

from __future__ import annotations

import click

from cafleet.entrypoints.cli import numbers
from cafleet.entrypoints.cli.app import CafleetCommand, app_of, fleet_id_option, require_fleet_id
from cafleet.entrypoints.cli.message_notices import (
    notification_fields,
    undelivered_line,
    warn_unrecorded,
)
from cafleet.entrypoints.cli.message_options import (
    agent_id_option,
    full_option,
    quiet_option,
    renderer,
)
from cafleet.entrypoints.cli.text_input import read_body, text_options


@click.command("send", cls=CafleetCommand, help="Send a message to one agent of the fleet.")
@fleet_id_option
@agent_id_option
@click.option(
    "--to",
    "to_agent_id",
    type=numbers.ID,
    default=None,
    help="The recipient's agent id (with --reply-to, default: the other party).",
)
@click.option(
    "--reply-to",
    "reply_to",
    type=numbers.ID,
    default=None,
    metavar="TASK_ID",
    help="The message this one answers: it joins that message's thread.",
)
@text_options
@full_option
@quiet_option
@click.pass_context
def send(
    ctx: click.Context,
    fleet_id: int | None,
    agent_id: int | None,
    to_agent_id: int | None,
    reply_to: int | None,
    text: str | None,
    text_file: str | None,
    full: bool,
    quiet: bool,
) -> None:
    if to_agent_id is None and reply_to is None:
        raise click.UsageError("Missing option '--to' (or '--reply-to').", ctx)
    body = read_body(text, text_file)
    app = app_of(ctx)
    fid = require_fleet_id(fleet_id)
    result = app.components.messaging.send(
        fid, app.acting(agent_id), to_agent_id, body, app.caller, reply_to
    )
    render = renderer(app, full)
    out = str(result.message.task_id) if quiet else f"Message sent.\n{render.text(result.message)}"
    if not quiet and (line := undelivered_line(result.delivery)):
        out = f"{out}\n{line}"
    warn_unrecorded(f"message {result.message.task_id}", result.delivery, result.unrecorded)
    app.emit(
        out,
        lambda: {
            "task": render.json(result.message),
            **notification_fields(result.delivery, result.unrecorded),
            "sender_verified": result.message.sender_verified,
        },
    )


@click.command(
    "broadcast", cls=CafleetCommand, help="Send a message to every other agent of the fleet."
)
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
    result = app.components.messaging.broadcast(fid, app.acting(agent_id), body, app.caller)
    render = renderer(app, full)
    out = (
        render.text(result.summary)
        if full
        else f"broadcast id={result.summary.task_id} recipients={result.recipients}"
        f" delivered={result.delivered}"
    )
    # one line per recipient: the id of its own message (to ack, show or cancel) and, when
    # the preview did not reach its pane, why
    lines = [
        f"  to {d.recipient_agent_id}: task {d.task_id}"
        + ("" if (line := undelivered_line(d)) is None else f", {line}")
        for d in result.deliveries
    ]
    warn_unrecorded(f"broadcast {result.summary.task_id}", None, result.unrecorded)
    app.emit(
        "\n".join([out, *lines]),
        lambda: [
            {
                "task": render.json(result.summary),
                "recipients": result.recipients,
                "delivered": result.delivered,
                **({} if result.unrecorded is None else {"unrecorded": result.unrecorded}),
                "recipient_tasks": [
                    {
                        "agent_id": d.recipient_agent_id,
                        "task_id": d.task_id,
                        **notification_fields(d),
                    }
                    for d in result.deliveries
                ],
            }
        ],
    )


@click.command("ack", cls=CafleetCommand, help="Acknowledge a message you received.")
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
    acked = app.components.messaging.ack(fid, app.acting(agent_id), task_id, app.caller)
    render = renderer(app, full)
    out = str(acked.task_id) if quiet else f"Message acknowledged.\n{render.text(acked)}"
    app.emit(out, lambda: {"task": render.json(acked)})


@click.command(
    "cancel", cls=CafleetCommand, help="Retract a message you sent that was not acknowledged yet."
)
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
    canceled = app.components.messaging.cancel(fid, app.acting(agent_id), task_id, app.caller)
    render = renderer(app, full)
    app.emit(f"Task canceled.\n{render.text(canceled)}", lambda: {"task": render.json(canceled)})

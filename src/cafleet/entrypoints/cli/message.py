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
    warn,
)
from cafleet.entrypoints.cli.text_input import read_body, text_options

if TYPE_CHECKING:
    from cafleet.application.messaging import MessageDetail
    from cafleet.domain.delivery import Delivery
    from cafleet.domain.message import Message
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


@message.command("send", help="Send a message to one agent of the fleet.")
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
    render = _renderer(app, full)
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
    result = app.components.messaging.broadcast(fid, app.acting(agent_id), body, app.caller)
    render = _renderer(app, full)
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
    messages = app.components.messaging.poll(fid, app.acting(agent_id), limit, app.caller)
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
    acked = app.components.messaging.ack(fid, app.acting(agent_id), task_id, app.caller)
    render = _renderer(app, full)
    out = str(acked.task_id) if quiet else f"Message acknowledged.\n{render.text(acked)}"
    app.emit(out, lambda: {"task": render.json(acked)})


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
    canceled = app.components.messaging.cancel(fid, app.acting(agent_id), task_id, app.caller)
    render = _renderer(app, full)
    app.emit(f"Task canceled.\n{render.text(canceled)}", lambda: {"task": render.json(canceled)})


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
    detail = app.components.messaging.show(fid, app.acting(agent_id), task_id, app.caller)
    render = _renderer(app, full)

    def payload() -> dict[str, Any]:
        # upstream's shape is {"task": ...}; what we add sits beside it, as in `send`
        body = {
            "task": render.json(detail.message),
            "sender_verified": detail.message.sender_verified,
        }
        if detail.message.is_summary:
            body["broadcast"] = _broadcast_json(render, detail.copies)
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

    text = _shown_text(render, detail)
    if detail.fleet_deleted_at is not None:
        text = f"{text}\n{deleted_fleet_note(detail.fleet_deleted_at)}"
    app.emit(text, payload)


@message.command("thread", help="Print the thread a message belongs to, oldest first.")
@fleet_id_option
@agent_id_option
@click.option("--task-id", type=numbers.ID, required=True, help="Any message of the thread.")
@full_option
@click.pass_context
def thread(
    ctx: click.Context, fleet_id: int | None, agent_id: int | None, task_id: int, full: bool
) -> None:
    from cafleet.entrypoints.cli.rendering import deleted_fleet_note, with_fleet_deleted

    app = app_of(ctx)
    fid = require_fleet_id(fleet_id)
    found = app.components.messaging.thread(fid, app.acting(agent_id), task_id, app.caller)
    render = _renderer(app, full)
    shown = [_in_thread(render, m) for m in found.messages]
    text = f"thread {found.thread_id}: {len(shown)} message{'' if len(shown) == 1 else 's'}"
    text = "\n".join([text, *shown])
    if found.fleet_deleted_at is not None:
        text = f"{text}\n{deleted_fleet_note(found.fleet_deleted_at)}"
    app.emit(
        text,
        lambda: with_fleet_deleted(
            {
                "thread_id": found.thread_id,
                "messages": [
                    {**render.json(m), "to": None if m.is_copy else m.to_agent_id}
                    for m in found.messages
                ],
            },
            found.fleet_deleted_at,
        ),
    )


@message.command("search", help="Search the fleet's messages for words, best match first.")
@fleet_id_option
@acting_agent_option(role="Who searches (optional: any agent of the fleet may).")
@click.argument("words", nargs=-1, required=True)
@click.option("--from", "from_agent_id", type=numbers.ID, default=None, help="Sent by this agent.")
@click.option("--to", "to_agent_id", type=numbers.ID, default=None, help="Sent to this agent.")
@click.option(
    "--since",
    default=None,
    metavar="WHEN",
    help="Sent at or after: an ISO time, or an age such as 30m, 2h, 7d.",
)
@click.option("--limit", type=numbers.COUNT, default=20, show_default=True, help="Hits at most.")
@click.option("--raw", is_flag=True, help="Read the query as the store's own search syntax.")
@full_option
@click.pass_context
def search(
    ctx: click.Context,
    fleet_id: int | None,
    agent_id: int | None,
    words: tuple[str, ...],
    from_agent_id: int | None,
    to_agent_id: int | None,
    since: str | None,
    limit: int,
    raw: bool,
    full: bool,
) -> None:
    from cafleet.domain.search import SearchQuery
    from cafleet.domain.since import parse_since
    from cafleet.entrypoints.cli.rendering import count_line, deleted_fleet_note, iso

    app = app_of(ctx)
    query = SearchQuery(
        " ".join(words),
        raw=raw,
        from_agent_id=from_agent_id,
        to_agent_id=to_agent_id,
        since=None if since is None else parse_since(since, app.components.clock.now()),
        limit=limit,
    )
    searcher = agent_id if agent_id is not None or app.caller is None else app.caller.agent_id
    found = app.components.search.search(require_fleet_id(fleet_id), searcher, query, app.caller)
    render = _renderer(app, full)
    lines = [count_line(len(found.hits), "hit")]
    for hit in found.hits:
        m = hit.message
        to = _addressee(m, folded=query.folds_broadcasts)
        head = f"[{m.task_id} | {m.from_agent_id} -> {to} | {iso(m.created_at)}]"
        if m.in_reply_to is not None:
            head = head[:-1] + f" | re:{m.in_reply_to}]"
        lines += [head, f"  {render.body(m) if full else hit.snippet}"]
    if found.fleet_deleted_at is not None:
        lines.append(deleted_fleet_note(found.fleet_deleted_at))
    app.emit(
        "\n".join(lines),
        lambda: [
            {
                **render.json(h.message),
                "to": h.message.to_agent_id,
                "score": h.score,
                "snippet": h.snippet,
            }
            for h in found.hits
        ],
    )


def _in_thread(render: MessageRenderer, m: Message) -> str:
    """A message as a thread lists it: who wrote to whom (a broadcast: to all)."""
    return f"{m.from_agent_id} -> {_addressee(m)}: {render.text(m)}"


def _addressee(m: Message, *, folded: bool = True) -> str:
    """Whom a message went to, as lists show it: a broadcast's copy went to all, where the
    list shows each broadcast once."""
    return "all" if m.is_copy and folded else str(m.to_agent_id)


def _shown_text(render: MessageRenderer, detail: MessageDetail) -> str:
    """The message; for a broadcast summary, whose own text only counts the recipients,
    what was sent and to whom (each recipient's own task and its state)."""
    from dataclasses import replace

    from cafleet.entrypoints.cli.rendering import labelled

    if not detail.copies:
        return render.text(detail.message, sender_check=True)
    sent = replace(detail.message, text=detail.copies[0].text)
    went_to = ", ".join(
        f"{c.to_agent_id} (task {c.task_id}, {c.state.value})" for c in detail.copies
    )
    to_line = labelled([("to", went_to)], 7, indent="  ") if render.full else f"to: {went_to}"
    return f"{render.text(sent, sender_check=True)}\n{to_line}"


def _broadcast_json(render: MessageRenderer, copies: tuple[Message, ...]) -> dict[str, Any]:
    return {
        "text": render.body(copies[0]) if copies else None,
        "recipient_tasks": [
            {"agent_id": c.to_agent_id, "task_id": c.task_id, "state": c.state.value}
            for c in copies
        ],
    }

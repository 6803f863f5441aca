"""`cafleet message poll`, `show`, `thread` and `search`: the verbs that read messages."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from cafleet.entrypoints.cli import numbers
from cafleet.entrypoints.cli.app import (
    CafleetCommand,
    acting_agent_option,
    app_of,
    fleet_id_option,
    require_fleet_id,
)
from cafleet.entrypoints.cli.message_options import agent_id_option, full_option, renderer

if TYPE_CHECKING:
    from cafleet.application.messaging.service import MessageDetail
    from cafleet.domain.message import Message
    from cafleet.entrypoints.cli.rendering import MessageRenderer


@click.command(
    "poll", cls=CafleetCommand, help="List your messages that still need input, newest first."
)
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
    render = renderer(app, full)
    text = "\n\n".join(render.text(m) for m in messages) if messages else "No messages found."
    app.emit(text, lambda: [render.json(m) for m in messages])


@click.command("show", cls=CafleetCommand, help="Show any message of the fleet.")
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
    render = renderer(app, full)

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


@click.command(
    "thread", cls=CafleetCommand, help="Print the thread a message belongs to, oldest first."
)
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
    render = renderer(app, full)
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


@click.command(
    "search", cls=CafleetCommand, help="Search the fleet's messages for words, best match first."
)
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
    render = renderer(app, full)
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

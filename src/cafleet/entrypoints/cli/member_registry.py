"""`cafleet member show` and `member list`: the registry view of members."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from cafleet.entrypoints.cli import numbers
from cafleet.entrypoints.cli.app import CafleetCommand, app_of, fleet_id_option, require_fleet_id

if TYPE_CHECKING:
    from datetime import datetime

    from cafleet.application.members.registry import MemberListing, MemberView


def _description(text: str) -> str:
    from cafleet.domain.preview import truncated

    return truncated(text, 60)


def member_json(view: MemberView, *, with_kind: bool = False) -> dict[str, Any]:
    from cafleet.entrypoints.cli.rendering import iso, placement_json

    a = view.agent
    body: dict[str, Any] = {
        "agent_id": a.agent_id,
        "name": a.name,
        "description": a.description,
        "status": a.status.value,
        "registered_at": iso(a.registered_at),
    }
    if with_kind:
        body["kind"] = view.kind.value
    body["placement"] = None if view.placement is None else placement_json(view.placement)
    if view.relay is not None:  # the relay of the pane's host, for a store several share
        beat = view.relay.beat
        body["placement"]["relay"] = {
            "alive": view.relay.alive,
            "pid": None if beat is None else beat.pid,
            "seen_at": None if beat is None else iso(beat.seen_at),
        }
    body["pane_state"] = None if view.pane is None else view.pane.value
    told = view.agent_status
    body["agent_status"] = None if told is None else told.status.value
    body["agent_status_since"] = None if told is None else iso(told.since)
    body["agent_status_note"] = None if told is None else told.note  # e.g. `hooks off`
    return body


def agent_word(view: MemberView, now: datetime) -> str:
    """What the member's agent is doing and for how long, e.g. `working 12s`."""
    from cafleet.entrypoints.cli.rendering import humanize

    told = view.agent_status
    if told is None:
        return "-"
    if told.note is not None:
        return f"{told.status.value} ({told.note})"
    if told.since is None:
        return told.status.value
    return f"{told.status.value} {humanize(now - told.since)}"


def host_word(view: MemberView) -> str:
    """The pane's host; for another host's pane, whether its relay is down (nothing here
    reaches the pane then)."""
    p = view.placement
    if p is None or p.host is None:
        return "-"
    down = view.elsewhere and view.relay is not None and not view.relay.alive
    return f"{p.host} (no relay)" if down else p.host


def status_word(view: MemberView) -> str:
    """The registry status, unless the member's pane says otherwise (closed, or starting)."""
    from cafleet.domain.placement import PaneState

    if view.pane is PaneState.GONE:
        return "pane-gone"
    if view.pane is PaneState.STARTING:
        return "starting"
    return view.agent.status.value


@click.command("show", cls=CafleetCommand, help="Show one agent of the fleet from the registry.")
@fleet_id_option
@click.option("--member-id", "member_id", type=numbers.ID, required=True, help="The agent to show.")
@click.option("--full", is_flag=True, help="Show every field.")
@click.pass_context
def show(ctx: click.Context, fleet_id: int | None, member_id: int, full: bool) -> None:
    from cafleet.entrypoints.cli.rendering import (
        deleted_fleet_note,
        dumps,
        iso,
        labelled,
        with_fleet_deleted,
    )

    app = app_of(ctx)
    view = app.components.members.show(require_fleet_id(fleet_id), member_id)
    a, p = view.agent, view.placement
    gone = view.fleet_deleted_at
    text = f"{a.agent_id} {a.name} {status_word(view)}"
    if gone is not None:
        text = f"{text} {deleted_fleet_note(gone)}"
    if full:
        skills = dumps(list(a.skills)) if a.skills else "-"
        lines = [
            labelled(
                [
                    ("agent_id", a.agent_id),
                    ("name", a.name),
                    ("description", _description(a.description)),
                    ("status", status_word(view)),
                    ("kind", view.kind.value),
                    ("skills", skills),
                    *([("fleet", f"deleted {iso(gone)}")] if gone is not None else []),
                ],
                13,
                indent="  ",
            )
        ]
        if p is None:
            lines.append("  placement:   none")
        else:
            lines.append("  placement:")
            lines.append(
                labelled(
                    [
                        (
                            "director_agent_id",
                            "-" if p.director_agent_id is None else p.director_agent_id,
                        ),
                        ("coding_agent", p.coding_agent.value),
                        ("backend", p.backend.value),
                        ("session", p.session),
                        ("window_id", p.window_id),
                        ("pane_id", p.pane_id or "-"),
                        *([("host", host_word(view))] if view.elsewhere else []),
                        ("created_at", iso(p.created_at)),
                    ],
                    19,
                    indent="    ",
                )
            )
        text = "\n".join(lines)

    def payload() -> dict[str, Any]:
        body = member_json(view, with_kind=True)
        body["skills"] = list(a.skills)
        return with_fleet_deleted(body, gone)

    app.emit(text, payload)


@click.command(
    "list", cls=CafleetCommand, help="List the fleet's members (or every agent with --all)."
)
@fleet_id_option
@click.option("--all", "show_all", is_flag=True, help="Every active agent, with its kind.")
@click.option("--activity", is_flag=True, help="Members with their message activity.")
@click.pass_context
def list_members(ctx: click.Context, fleet_id: int | None, show_all: bool, activity: bool) -> None:
    from cafleet.application.members.registry import ListMode

    if show_all and activity:
        raise click.UsageError("--all and --activity are mutually exclusive.", ctx)
    app = app_of(ctx)
    mode = ListMode.ALL if show_all else ListMode.ACTIVITY if activity else ListMode.MEMBERS
    listing = app.components.members.list(require_fleet_id(fleet_id), mode)
    app.emit(_listing_text(listing), lambda: _listing_json(listing))


def _listing_text(listing: MemberListing) -> str:
    from cafleet.entrypoints.cli.rendering import deleted_fleet_note

    text = _listing_table(listing)
    if listing.fleet_deleted_at is None:
        return text
    return f"{deleted_fleet_note(listing.fleet_deleted_at)}\n{text}"


def _listing_table(listing: MemberListing) -> str:
    from cafleet.application.members.registry import ListMode
    from cafleet.entrypoints.cli.rendering import count_line, humanize, iso, table

    views, mode = listing.members, listing.mode
    noun = "agent" if mode is ListMode.ALL else "member"
    if not views:
        return count_line(0, noun)
    if mode is ListMode.ACTIVITY:
        headers = [
            "agent_id", "name", "status", "agent", "last_sent", "last_recv", "last_ack", "idle"
        ]  # fmt: skip
        rows: list[list[object]] = []
        for v in views:
            act = v.activity
            assert act is not None
            last = act.last_contact
            rows.append(
                [
                    v.agent.agent_id,
                    v.agent.name,
                    status_word(v),
                    agent_word(v, listing.now),
                    *(
                        t.strftime("%H:%M:%S") if t else "-"
                        for t in (act.last_sent, act.last_recv, act.last_ack)
                    ),
                    humanize(listing.now - last) if last else "-",
                ]
            )
    else:
        headers = [
            "agent_id",
            "name",
            "status",
            "agent",
            "coding_agent",
            "session",
            "window_id",
            "pane_id",
            "created_at",
        ]
        if mode is ListMode.ALL:
            headers.insert(3, "kind")
        rows = []
        for v in views:
            p = v.placement
            place = (
                ["-"] * 5
                if p is None
                else [
                    p.coding_agent.value,
                    p.session,
                    p.window_id,
                    p.pane_id or "-",
                    iso(p.created_at),
                ]
            )
            row: list[object] = [
                v.agent.agent_id, v.agent.name, status_word(v), agent_word(v, listing.now), *place
            ]  # fmt: skip
            if mode is ListMode.ALL:
                row.insert(3, v.kind.value)
            rows.append(row)
        if len({v.placement.host for v in views if v.placement and v.placement.host}) > 1:
            at = headers.index("pane_id") + 1  # a fleet over several hosts: where each pane is
            headers.insert(at, "host")
            for row, v in zip(rows, views, strict=True):
                row.insert(at, host_word(v))
    return f"{count_line(len(views), noun)}\n{table(headers, rows, indent='  ')}"


def _listing_json(listing: MemberListing) -> list[dict[str, Any]]:
    from cafleet.application.members.registry import ListMode
    from cafleet.entrypoints.cli.rendering import iso, whole_seconds, with_fleet_deleted

    out = []
    for v in listing.members:
        body = with_fleet_deleted(
            member_json(v, with_kind=listing.mode is ListMode.ALL), v.fleet_deleted_at
        )
        if listing.mode is ListMode.ACTIVITY and v.activity is not None:
            act = v.activity
            last = act.last_contact
            body.update(
                last_sent=iso(act.last_sent),
                last_recv=iso(act.last_recv),
                last_ack=iso(act.last_ack),
                idle=whole_seconds(listing.now - last) if last else None,
            )
        out.append(body)
    return out

"""`cafleet member ...`: the registry view of members."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from cafleet.entrypoints.cli.app import CafleetGroup, app_of, fleet_id_option, require_fleet_id

if TYPE_CHECKING:
    from cafleet.application.members import MemberListing, MemberView


@click.group(cls=CafleetGroup, help="Manage multiplexer-backed member agents (Director only).")
def member() -> None:
    pass


def _description(text: str) -> str:
    from cafleet.entrypoints.cli.rendering import truncate

    return truncate(text, 60)


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
    return body


@member.command("show", help="Show one agent of the fleet from the registry.")
@fleet_id_option
@click.option("--member-id", "member_id", type=int, required=True, help="The agent to show.")
@click.option("--full", is_flag=True, help="Show every field.")
@click.pass_context
def show(ctx: click.Context, fleet_id: int | None, member_id: int, full: bool) -> None:
    from cafleet.entrypoints.cli.rendering import dumps, iso, labelled

    app = app_of(ctx)
    view = app.components.members().show(require_fleet_id(fleet_id), member_id)
    a, p = view.agent, view.placement
    text = f"{a.agent_id} {a.name} {a.status.value}"
    if full:
        skills = dumps(list(a.skills)) if a.skills else "-"
        lines = [
            labelled(
                [
                    ("agent_id", a.agent_id),
                    ("name", a.name),
                    ("description", _description(a.description)),
                    ("status", a.status.value),
                    ("kind", view.kind.value),
                    ("skills", skills),
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
                        ("backend", p.coding_agent.value),
                        ("multiplexer", p.backend.value),
                        ("session", p.session),
                        ("window_id", p.window_id),
                        ("pane_id", p.pane_id or "-"),
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
        return body

    app.emit(text, payload)


@member.command("list", help="List the fleet's members (or every agent with --all).")
@fleet_id_option
@click.option("--all", "show_all", is_flag=True, help="Every active agent, with its kind.")
@click.option("--activity", is_flag=True, help="Members with their message activity.")
@click.pass_context
def list_members(ctx: click.Context, fleet_id: int | None, show_all: bool, activity: bool) -> None:
    from cafleet.application.members import ListMode

    if show_all and activity:
        raise click.UsageError("--all and --activity are mutually exclusive.", ctx)
    app = app_of(ctx)
    mode = ListMode.ALL if show_all else ListMode.ACTIVITY if activity else ListMode.MEMBERS
    listing = app.components.members().list(require_fleet_id(fleet_id), mode)
    app.emit(_listing_text(listing), lambda: _listing_json(listing))


def _listing_text(listing: MemberListing) -> str:
    from cafleet.application.members import ListMode
    from cafleet.entrypoints.cli.rendering import count_line, humanize, iso, table

    views, mode = listing.members, listing.mode
    noun = "agent" if mode is ListMode.ALL else "member"
    if not views:
        return count_line(0, noun)
    if mode is ListMode.ACTIVITY:
        headers = ["agent_id", "name", "status", "last_sent", "last_recv", "last_ack", "idle"]
        rows: list[list[object]] = []
        for v in views:
            act = v.activity
            assert act is not None
            last = act.last_contact
            rows.append(
                [
                    v.agent.agent_id,
                    v.agent.name,
                    v.agent.status.value,
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
            "backend",
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
            row: list[object] = [v.agent.agent_id, v.agent.name, v.agent.status.value, *place]
            if mode is ListMode.ALL:
                row.insert(3, v.kind.value)
            rows.append(row)
    return f"{count_line(len(views), noun)}\n{table(headers, rows, indent='  ')}"


def _listing_json(listing: MemberListing) -> list[dict[str, Any]]:
    from cafleet.application.members import ListMode
    from cafleet.entrypoints.cli.rendering import humanize, iso

    out = []
    for v in listing.members:
        body = member_json(v, with_kind=listing.mode is ListMode.ALL)
        if listing.mode is ListMode.ACTIVITY and v.activity is not None:
            act = v.activity
            last = act.last_contact
            body.update(
                last_sent=iso(act.last_sent),
                last_recv=iso(act.last_recv),
                last_ack=iso(act.last_ack),
                idle=humanize(listing.now - last) if last else None,
            )
        out.append(body)
    return out

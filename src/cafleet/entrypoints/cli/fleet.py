"""`cafleet fleet ...`."""

from __future__ import annotations

from typing import Any

import click

from cafleet.entrypoints.cli import numbers
from cafleet.entrypoints.cli.app import (
    GatedGroup,
    app_of,
    fleet_id_option,
    require_fleet_id,
    warn,
)

CODING_AGENTS = click.Choice(["claude", "codex", "opencode", "custom"])


@click.group(cls=GatedGroup, help="Create, list, show and delete fleets.")
def fleet() -> None:
    pass


@fleet.command("create", help="Create a fleet; the calling pane becomes its root Director.")
@click.option("--name", required=True, help="The fleet's name.")
@click.option(
    "--coding-agent",
    type=CODING_AGENTS,
    default="claude",
    show_default=True,
    help="What the Director runs (nothing is spawned).",
)
@click.option("--full", is_flag=True, help="Show every field.")
@click.pass_context
def create(ctx: click.Context, name: str, coding_agent: str, full: bool) -> None:
    from cafleet.domain.placement import CodingAgent
    from cafleet.entrypoints.cli.rendering import iso, labelled, placement_json

    app = app_of(ctx)
    made = app.components.fleets.create(name, CodingAgent(coding_agent))
    f, director, placement = made.fleet, made.director, made.placement
    if full:
        pane = f"{placement.session}:{placement.window_id}:{placement.pane_id}"
        text = labelled(
            [
                ("fleet_id", f.fleet_id),
                ("director", director.agent_id),
                ("name", f.name),
                ("created_at", iso(f.created_at)),
                ("director_name", director.name),
                ("pane", pane),
                ("administrator", made.administrator.agent_id),
            ],
            18,
        )
    else:
        text = f"{f.fleet_id} director={director.agent_id} admin={made.administrator.agent_id}"
    app.emit(
        text,
        lambda: {
            "fleet_id": f.fleet_id,
            "name": f.name,
            "created_at": iso(f.created_at),
            "administrator_agent_id": made.administrator.agent_id,
            "director": {
                "agent_id": director.agent_id,
                "name": director.name,
                "description": director.description,
                "registered_at": iso(director.registered_at),
                "placement": placement_json(placement),
            },
        },
    )


@fleet.command(
    "list", help="List fleets that were not deleted, newest first (--all: deleted ones too)."
)
@click.option(
    "--all", "show_all", is_flag=True, help="Include deleted fleets (their history is kept)."
)
@click.pass_context
def list_fleets(ctx: click.Context, show_all: bool) -> None:
    from cafleet.entrypoints.cli.rendering import iso, table

    app = app_of(ctx)
    listing = app.components.fleets.list(include_deleted=show_all)
    headers = ["FLEET_ID", "DIRECTOR", "NAME", "AGENTS", "CREATED_AT"]
    rows: list[list[object]] = [
        [
            r.fleet.fleet_id,
            r.fleet.director_agent_id,
            r.fleet.name or "",
            r.agent_count,
            iso(r.fleet.created_at),
        ]
        for r in listing
    ]
    if show_all:
        headers.append("DELETED_AT")
        for row, r in zip(rows, listing, strict=True):
            row.append(iso(r.fleet.deleted_at) or "-")
    text = table(headers, rows) if rows else "No fleets found."
    app.emit(
        text,
        lambda: [
            {
                "fleet_id": r.fleet.fleet_id,
                "director_agent_id": r.fleet.director_agent_id,
                "name": r.fleet.name,
                "created_at": iso(r.fleet.created_at),
                "agent_count": r.agent_count,
                "deleted_at": iso(r.fleet.deleted_at),
            }
            for r in listing
        ],
    )


@fleet.command("show", help="Show one fleet (deleted fleets included).")
@fleet_id_option
@click.pass_context
def show(ctx: click.Context, fleet_id: int | None) -> None:
    from cafleet.entrypoints.cli.rendering import iso, labelled

    app = app_of(ctx)
    f = app.components.fleets.show(require_fleet_id(fleet_id))
    pairs: list[tuple[str, Any]] = [
        ("fleet_id", f.fleet_id),
        ("name", f.name or ""),
        ("created_at", iso(f.created_at)),
    ]
    if f.deleted_at is not None:
        pairs.append(("deleted_at", iso(f.deleted_at)))
    app.emit(
        labelled(pairs, 12),
        lambda: {
            "fleet_id": f.fleet_id,
            "name": f.name,
            "created_at": iso(f.created_at),
            "deleted_at": iso(f.deleted_at),
            "director_agent_id": f.director_agent_id,
        },
    )


@fleet.command("delete", help="Close member panes, then soft-delete the fleet.")
@fleet_id_option
@click.option("--keep-panes", is_flag=True, help="Leave member panes running.")
@click.option(
    "--timeout",
    type=numbers.EXIT_TIMEOUT,
    default=15.0,
    show_default=True,
    help="Seconds to wait for members to exit before killing their panes.",
)
@click.pass_context
def delete(ctx: click.Context, fleet_id: int | None, keep_panes: bool, timeout: float) -> None:
    from cafleet.application.fleets import PaneFate

    app = app_of(ctx)
    done = app.components.fleets.delete(
        require_fleet_id(fleet_id), keep_panes=keep_panes, timeout=timeout
    )
    for pane in done.panes:
        if pane.fate is PaneFate.FAILED:
            warn(f"Warning: could not close pane {pane.pane_id}: {pane.error}")
    lines = [f"Deleted fleet {done.fleet_id}. Deregistered {done.deregistered} agents."]
    if done.panes and keep_panes:
        lines.append(f"  panes: {len(done.panes)} left running (--keep-panes)")
    elif done.panes:
        count = {fate: sum(1 for p in done.panes if p.fate is fate) for fate in PaneFate}
        failed = f", {count[PaneFate.FAILED]} failed" if count[PaneFate.FAILED] else ""
        lines.append(
            f"  panes: {count[PaneFate.CLOSED]} closed, {count[PaneFate.KILLED]} killed,"
            f" {count[PaneFate.GONE]} already gone{failed}"
        )
    app.emit(
        "\n".join(lines),
        lambda: {
            "fleet_id": done.fleet_id,
            "deregistered": done.deregistered,
            "panes": [
                {"agent_id": p.agent_id, "pane_id": p.pane_id, "status": p.fate.value}
                for p in done.panes
            ],
        },
    )

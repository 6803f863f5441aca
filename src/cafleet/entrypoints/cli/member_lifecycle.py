"""`cafleet member create` and `member delete`: a member's pane opened with its agent, or closed."""

from __future__ import annotations

import click

from cafleet.entrypoints.cli import numbers
from cafleet.entrypoints.cli.app import (
    CafleetCommand,
    acting_agent_option,
    app_of,
    fleet_id_option,
    require_fleet_id,
    warn,
)
from cafleet.entrypoints.cli.member_panes import member_id_option
from cafleet.entrypoints.cli.text_input import read_body, text_options


def _host_name(value: str | None) -> str | None:
    from cafleet.domain.placement import HOST_NAME_RULE, is_host_name

    if value is not None and not is_host_name(value):
        raise click.BadParameter(f"{value!r} is not a host name: {HOST_NAME_RULE}.")
    return value


@click.command("delete", cls=CafleetCommand, help="Close a member's pane and deregister it.")
@fleet_id_option
@member_id_option
@click.option("-f", "--force", is_flag=True, help="Kill the pane instead of asking /exit.")
@click.option(
    "--timeout",
    type=numbers.EXIT_TIMEOUT,
    default=15.0,
    show_default=True,
    help="Seconds to wait for the agent to exit before killing the pane.",
)
@click.pass_context
def delete(
    ctx: click.Context, fleet_id: int | None, member_id: int, force: bool, timeout: float
) -> None:
    from cafleet.entrypoints.cli.rendering import labelled

    app = app_of(ctx)
    done = app.components.member_removal.delete(
        require_fleet_id(fleet_id), member_id, force=force, timeout=timeout
    )
    if done.warning:
        warn(done.warning)
    header = "Member deleted (--force)." if force else "Member deleted."
    body = labelled([("agent_id", done.agent_id), ("pane_id", done.pane_status)], 11, indent="  ")
    app.emit(
        f"{header}\n{body}", lambda: {"agent_id": done.agent_id, "pane_status": done.pane_status}
    )


@click.command(
    "create",
    cls=CafleetCommand,
    help="Register a member and spawn its coding agent beside the Director.",
)
@fleet_id_option
@acting_agent_option("director_id", role="The fleet's root Director (you).")
@click.option("--name", required=True, help="The member's name.")
@click.option("--description", required=True, help="What the member is for.")
@click.option(
    "--coding-agent",
    type=click.Choice(["claude", "codex", "opencode", "custom"]),
    default=None,
    help="The agent CLI to run (default claude; a monitor inherits the Director's).",
)
@click.option("--model", default=None, help="Model for the agent CLI.")
@click.option("--agent-command", default=None, help="Command template for --coding-agent custom.")
@click.option(
    "--role",
    type=click.Choice(["member", "monitor"]),
    default="member",
    show_default=True,
    help="An ordinary member or the fleet's monitoring member.",
)
@click.option(
    "--host",
    default=None,
    metavar="NAME",
    callback=lambda ctx, param, value: _host_name(value),
    help="The host whose relay opens the pane (default: the Director's, beside its pane).",
)
@text_options
@click.option("--full", is_flag=True, help="Show every field.")
@click.pass_context
def create(
    ctx: click.Context,
    fleet_id: int | None,
    director_id: int | None,
    name: str,
    description: str,
    coding_agent: str | None,
    model: str | None,
    agent_command: str | None,
    role: str,
    host: str | None,
    text: str | None,
    text_file: str | None,
    full: bool,
) -> None:
    from cafleet.application.members.spawning import MemberRequest
    from cafleet.domain.placement import CodingAgent
    from cafleet.entrypoints.cli.rendering import iso, labelled, placement_json

    body = read_body(text, text_file)
    app = app_of(ctx)
    request = MemberRequest(
        fleet_id=require_fleet_id(fleet_id),
        director_id=app.acting(director_id),
        name=name,
        description=description,
        prompt=body,
        coding_agent=CodingAgent(coding_agent) if coding_agent else None,
        model=model,
        agent_command=agent_command,
        monitor=role == "monitor",
        caller=app.caller,
        host=host,
    )
    made = app.components.member_spawner.create(request)
    a, p = made.agent, made.placement
    if full:
        text_out = "Member registered and spawned.\n" + labelled(
            [
                ("agent_id", a.agent_id),
                ("name", a.name),
                ("coding_agent", p.coding_agent.value),
                ("pane_id", p.pane_id or "(pending)"),
                ("window_id", p.window_id),
            ],
            14,
            indent="  ",
        )
    else:
        text_out = (
            f"{a.agent_id} {a.name} coding_agent={p.coding_agent.value}"
            f" pane={p.pane_id or '(pending)'}"
        )
    app.emit(
        text_out,
        lambda: {
            "agent_id": a.agent_id,
            "name": a.name,
            "registered_at": iso(a.registered_at),
            "placement": placement_json(p),
        },
    )

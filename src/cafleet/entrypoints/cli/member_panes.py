"""`cafleet member capture`, `exec`, `ping` and `nudge`: the verbs that reach a member's pane."""

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
from cafleet.entrypoints.cli.text_input import read_body, text_options

member_id_option = click.option(
    "--member-id",
    "member_id",
    type=numbers.ID,
    required=True,
    help="The member (any placed agent for pane verbs).",
)


@click.command("capture", cls=CafleetCommand, help="Print the last lines of a member's pane.")
@fleet_id_option
@member_id_option
@click.option(
    "--lines",
    "--tail",
    "lines",
    type=numbers.CAPTURE_LINES,
    default=20,
    show_default=True,
    help="How many lines.",
)
@click.option("--ansi/--no-ansi", default=False, help="Keep terminal escape sequences.")
@click.pass_context
def capture(
    ctx: click.Context, fleet_id: int | None, member_id: int, lines: int, ansi: bool
) -> None:
    from cafleet.entrypoints.cli.rendering import iso

    app = app_of(ctx)
    shot = app.components.member_panes.capture(
        require_fleet_id(fleet_id), member_id, lines, ansi=ansi
    )
    if app.json:
        app.emit(
            None,
            lambda: {
                "member_agent_id": shot.member_agent_id,
                "pane_id": shot.pane_id,
                "lines": shot.lines if shot.cut_at is None else shot.lines_returned,
                "truncated": shot.cut_at is not None,
                "content": shot.content,
                "captured_at": iso(shot.captured_at),
                "content_sha256": shot.content_sha256,
            },
        )
    else:
        from cafleet.domain.terminal import escaped

        # the shell prompt or the next output must not land on the last captured row
        content = shot.content if ansi else escaped(shot.content)
        click.echo(content, nl=bool(content) and not content.endswith("\n"))
        if shot.cut_at is not None:
            warn(
                f"Warning: captured the last {shot.lines_returned} of the {shot.lines} lines"
                f" asked: the multiplexer reads at most {shot.cut_at} rows of a pane."
            )


@click.command(
    "exec", cls=CafleetCommand, help="Run a shell command in a member's agent (typed as `! cmd`)."
)
@fleet_id_option
@member_id_option
@click.argument("command")
@click.pass_context
def exec_command(ctx: click.Context, fleet_id: int | None, member_id: int, command: str) -> None:
    command = command.strip()
    if "\n" in command or "\r" in command:
        raise click.UsageError("command may not contain newlines.", ctx)
    if not command:
        raise click.UsageError("command may not be empty.", ctx)
    app = app_of(ctx)
    placed = app.components.member_panes.exec(require_fleet_id(fleet_id), member_id, command)
    pane = placed.target.pane_id
    app.emit(
        f"Sent bash command {command!r} to member {placed.agent.name} ({pane}).",
        lambda: {"member_agent_id": member_id, "pane_id": pane, "command": command},
    )


@click.command("ping", cls=CafleetCommand, help="Make an agent poll its messages now.")
@fleet_id_option
@member_id_option
@click.option("--quiet", is_flag=True, help="Print only the agent id.")
@click.pass_context
def ping(ctx: click.Context, fleet_id: int | None, member_id: int, quiet: bool) -> None:
    app = app_of(ctx)
    placed = app.components.member_panes.ping(require_fleet_id(fleet_id), member_id)
    pane = placed.target.pane_id
    text = (
        str(member_id)
        if quiet
        else f"Pinged member {placed.agent.name} ({pane}) — poll command submitted."
    )
    app.emit(text, lambda: {"member_agent_id": member_id, "pane_id": pane})


@click.command(
    "nudge", cls=CafleetCommand, help="Send a member an ordinary message with its pane preview."
)
@fleet_id_option
@acting_agent_option(role="The sender (you).")
@member_id_option
@text_options
@click.pass_context
def nudge(
    ctx: click.Context,
    fleet_id: int | None,
    agent_id: int | None,
    member_id: int,
    text: str | None,
    text_file: str | None,
) -> None:
    from cafleet.domain.delivery import DeliveryState
    from cafleet.entrypoints.cli.message_notices import (
        notification_fields,
        undelivered_line,
        warn_unrecorded,
    )

    body = read_body(text, text_file)
    app = app_of(ctx)
    done = app.components.messaging.nudge(
        require_fleet_id(fleet_id), app.acting(agent_id), member_id, body, app.caller
    )
    delivery, task_id = done.sent.delivery, done.sent.message.task_id
    warn_unrecorded(f"message {task_id}", delivery, done.sent.unrecorded)
    pane, name = done.placement.pane_id, done.target.name
    if pane is None:
        out = f"Nudged {name} — no pane; task {task_id} queued."
    elif delivery.state is DeliveryState.SENT:
        out = f"Nudged {name} ({pane}) — task {task_id} queued, preview submitted."
    else:
        out = f"Nudged {name} ({pane}) — task {task_id} queued; {undelivered_line(delivery)}."
    app.emit(
        out,
        lambda: {
            "member_agent_id": member_id,
            "pane_id": pane,
            "task_id": task_id,
            **notification_fields(delivery, done.sent.unrecorded),
        },
    )

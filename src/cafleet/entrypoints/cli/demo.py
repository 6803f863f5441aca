"""`cafleet demo`: the whole product in one command, in a private tmux server."""

from __future__ import annotations

import click

from cafleet.entrypoints.cli.app import CafleetCommand


@click.command(
    "demo",
    cls=CafleetCommand,
    help="Run a demo fleet (two members playing ping-pong) in a private"
    " tmux server, print the timeline, and clean up.",
)
@click.option(
    "--rounds",
    type=click.IntRange(min=1, max=20),
    default=3,
    show_default=True,
    help="Ping-pong rounds.",
)
@click.option(
    "--coding-agent",
    type=click.Choice(["custom", "claude", "codex", "opencode"]),
    default="custom",
    show_default=True,
    help="What members run: the built-in demo agent (custom) or a real agent CLI.",
)
@click.option("--keep", is_flag=True, help="Leave the fleet running to watch it.")
def demo(rounds: int, coding_agent: str, keep: bool) -> None:
    from cafleet.demo.scenario import DemoError, run_demo

    try:
        code = run_demo(rounds, coding_agent, keep, echo=click.echo)
    except DemoError as exc:
        raise click.ClickException(str(exc)) from None
    raise SystemExit(code)

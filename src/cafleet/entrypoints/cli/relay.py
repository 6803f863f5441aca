"""`cafleet relay`: this host's relay, in the foreground (docs/multi-host.md)."""

from __future__ import annotations

import click

from cafleet.entrypoints.cli.app import CafleetCommand, app_of

RELAY_HELP = """Carry out the pane work that commands on other hosts leave for this one.

Run one relay on each host that has member panes, when the fleet's store is shared by
several machines (PostgreSQL). It delivers the messages sent to this host's members from
elsewhere, spawns and deletes members here for commands run elsewhere (beside its own pane;
run outside any pane, as a service, in a tmux session of its own: `tmux -L cafleet attach -t
members` shows them), runs the pane verbs (capture, ping, exec, the monitor's wake) asked of
them, and reports what its panes show, until Ctrl-C or SIGTERM.
Work left while it was down is carried out when it starts. This host's name is
CAFLEET_HOST, else the machine's name.
"""


@click.command("relay", cls=CafleetCommand, help=RELAY_HELP)
@click.option(
    "--poll",
    "poll_seconds",
    type=click.FloatRange(0.05, 60),
    default=None,
    help="Seconds between looks for new work (default 0.25; 1 on PostgreSQL, whose"
    " notifications wake the relay at once).",
)
@click.pass_context
def relay(ctx: click.Context, poll_seconds: float | None) -> None:
    from cafleet.adapters.store.select import work_signals
    from cafleet.entrypoints.cli.foreground import echo_out, stop_on_signals
    from cafleet.entrypoints.relay.loop import run_relay

    components = app_of(ctx).components
    service = components.relay
    should_stop = stop_on_signals()
    if poll_seconds is None:
        poll_seconds = 1.0 if components.settings.on_postgres else 0.25
    code = run_relay(
        service,
        components.clock,
        poll_seconds,
        work_signals(components.settings, service.host, components.clock),
        should_stop=should_stop,
        out=echo_out,
        err=lambda line: click.echo(line, err=True),
    )
    ctx.exit(code)

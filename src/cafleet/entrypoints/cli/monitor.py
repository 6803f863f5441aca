"""`cafleet monitor ...`: the heartbeat loop, its status, and per-agent schedules."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from cafleet.entrypoints.cli import numbers
from cafleet.entrypoints.cli.app import (
    GatedGroup,
    app_of,
    fleet_id_option,
    require_fleet_id,
)

if TYPE_CHECKING:
    from cafleet.application.monitoring.service import MonitorStatus
    from cafleet.domain.monitor import MonitorSchedule


@click.group(cls=GatedGroup, help="Run and inspect the fleet's heartbeat monitor.")
def monitor() -> None:
    pass


START_HELP = """Run the monitor loop in the foreground until stopped.

It stops on Ctrl-C or SIGTERM, and by itself when its fleet is deleted; there is no stop
command. To keep it running, give it a pane of its own, or start it in the background and
stop it with the pid that `monitor status` shows:

\b
  nohup cafleet monitor start --fleet-id 1 > monitor.log 2>&1 &
  cafleet monitor status --fleet-id 1     # running (pid 4242, ...)
  kill 4242
"""


@monitor.command("start", help=START_HELP)
@fleet_id_option
@click.option(
    "--tick",
    type=numbers.MONITOR_TICK,
    default=5,
    show_default=True,
    help="Seconds between ticks.",
)
@click.pass_context
def start(ctx: click.Context, fleet_id: int | None, tick: int) -> None:
    from cafleet.composition.container import build_container
    from cafleet.entrypoints.cli.foreground import echo_out, stop_on_signals
    from cafleet.entrypoints.monitor.loop import run_loop

    fid = require_fleet_id(fleet_id)
    container = build_container(app_of(ctx).components.settings)
    should_stop = stop_on_signals()

    feeds = container.state_feeds()
    try:
        code = run_loop(
            container.monitor(),
            container.clock(),
            fid,
            tick,
            pid=container.process().pid(),
            should_stop=should_stop,
            out=echo_out,
            err=lambda line: click.echo(line, err=True),
        )
    finally:
        feeds.close()
    ctx.exit(code)


@monitor.command("status", help="Show whether the loop runs and each watched agent's schedule.")
@fleet_id_option
@click.pass_context
def status(ctx: click.Context, fleet_id: int | None) -> None:
    app = app_of(ctx)
    report = app.components.monitoring.status(require_fleet_id(fleet_id))
    app.emit(_status_text(report), lambda: _status_json(report))


def _age(report: MonitorStatus, at: Any) -> int | None:
    from cafleet.entrypoints.cli.rendering import whole_seconds

    return None if at is None else whole_seconds(report.now - at)


def _status_text(report: MonitorStatus) -> str:
    from cafleet.entrypoints.cli.rendering import deleted_fleet_note, humanize, iso, table

    runtime = report.runtime
    if report.running and runtime is not None and runtime.last_tick_at is not None:
        head = (
            f"monitor: running (pid {runtime.pid}, last tick"
            f" {humanize(report.now - runtime.last_tick_at)} ago, tick"
            f" {runtime.tick_seconds}s, started {iso(runtime.started_at)})"
        )
    else:
        head = "monitor: stopped"
    if report.fleet_deleted_at is not None:
        head = f"{head} {deleted_fleet_note(report.fleet_deleted_at)}"
    if not report.rows:
        return head
    rows = [
        [
            r.agent.agent_id,
            r.agent.name,
            r.role,
            f"{r.schedule.interval_seconds}s",
            f"{humanize(report.now - r.schedule.last_ping_at)} ago"
            if r.schedule.last_ping_at
            else "-",
            "yes" if r.schedule.enabled else "no",
            r.pending,
        ]
        for r in report.rows
    ]
    headers = ["agent_id", "name", "role", "interval", "last_ping", "enabled", "pending"]
    return f"{head}\n{table(headers, rows, indent='  ')}"


def _status_json(report: MonitorStatus) -> dict[str, Any]:
    from cafleet.entrypoints.cli.rendering import iso, with_fleet_deleted

    runtime, running = report.runtime, report.running
    live = runtime if running else None
    body = {
        "runtime": {
            "running": running,
            "pid": live.pid if live else None,
            "host": live.host if live else None,
            "tick_seconds": runtime.tick_seconds if runtime else None,
            "last_tick_at": iso(live.last_tick_at) if live else None,
            "last_tick_age_seconds": _age(report, live.last_tick_at) if live else None,
            "started_at": iso(live.started_at) if live else None,
        },
        "agents": [
            {
                "agent_id": r.agent.agent_id,
                "name": r.agent.name,
                "role": r.role,
                "interval_seconds": r.schedule.interval_seconds,
                "last_ping_at": iso(r.schedule.last_ping_at),
                "last_ping_age_seconds": _age(report, r.schedule.last_ping_at),
                "enabled": r.schedule.enabled,
                "pending_count": r.pending,
            }
            for r in report.rows
        ],
    }
    return with_fleet_deleted(body, report.fleet_deleted_at)


@monitor.command("config", help="Show or change one agent's monitoring interval and switch.")
@fleet_id_option
@click.option("--member-id", "member_id", type=numbers.ID, default=None, help="The watched agent.")
# --agent-id means "you" everywhere else; upstream's scripts name the watched agent with it here
@click.option("--agent-id", "old_member_id", type=numbers.ID, default=None, hidden=True)
@click.option("--interval", type=numbers.MONITOR_INTERVAL, default=None, help="Seconds (1-86400).")
@click.option("--enable", "enable", is_flag=True, help="Watch this agent.")
@click.option("--disable", "disable", is_flag=True, help="Stop watching this agent.")
@click.pass_context
def config(
    ctx: click.Context,
    fleet_id: int | None,
    member_id: int | None,
    old_member_id: int | None,
    interval: int | None,
    enable: bool,
    disable: bool,
) -> None:
    if enable and disable:
        raise click.UsageError("--enable and --disable are mutually exclusive.", ctx)
    if old_member_id is not None:
        if member_id is not None:
            raise click.UsageError("--agent-id is the old name of --member-id; pass one.", ctx)
        member_id = old_member_id
    if member_id is None:
        raise click.UsageError("Missing option '--member-id' (the watched agent).", ctx)
    app = app_of(ctx)
    enabled = True if enable else False if disable else None
    schedule = app.components.monitoring.config(
        require_fleet_id(fleet_id), member_id, interval, enabled
    )
    app.emit(_config_text(schedule), lambda: _config_json(schedule))


def _config_text(s: MonitorSchedule) -> str:
    from cafleet.entrypoints.cli.rendering import iso

    state = "enabled" if s.enabled else "disabled"
    return (
        f"agent {s.agent_id}: interval {s.interval_seconds}s, {state},"
        f" last_ping {iso(s.last_ping_at) or '-'}"
    )


def _config_json(s: MonitorSchedule) -> dict[str, Any]:
    from cafleet.entrypoints.cli.rendering import iso

    return {
        "agent_id": s.agent_id,
        "interval_seconds": s.interval_seconds,
        "last_ping_at": iso(s.last_ping_at),
        "enabled": s.enabled,
    }

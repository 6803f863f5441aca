"""The `cafleet` root command. Subcommand modules load only when invoked or listed."""

from __future__ import annotations

import importlib
from typing import Any

import click

from cafleet import __version__
from cafleet.entrypoints.cli.app import App, CafleetGroup

# name -> (module, attribute, one-line help shown by `cafleet --help` without importing it)
SUBCOMMANDS: dict[str, tuple[str, str, str]] = {
    "demo": (
        "cafleet.entrypoints.cli.demo",
        "demo",
        "Run a demo fleet in a private tmux server, then clean up.",
    ),
    "doctor": (
        "cafleet.entrypoints.cli.doctor",
        "doctor",
        "Report the multiplexer, the database and the installed skills.",
    ),
    "fleet": ("cafleet.entrypoints.cli.fleet", "fleet", "Create, list, show and delete fleets."),
    "member": (
        "cafleet.entrypoints.cli.member",
        "member",
        "Manage multiplexer-backed member agents (Director only).",
    ),
    "message": (
        "cafleet.entrypoints.cli.message",
        "message",
        "Send, poll, acknowledge and cancel messages.",
    ),
    "monitor": (
        "cafleet.entrypoints.cli.monitor",
        "monitor",
        "Run and inspect the fleet's heartbeat monitor.",
    ),
    "relay": (
        "cafleet.entrypoints.cli.relay",
        "relay",
        "Carry out pane work left for this host by other hosts' commands.",
    ),
    "server": (
        "cafleet.entrypoints.cli.server",
        "server",
        "Run the admin WebUI server in the foreground.",
    ),
    "setup": (
        "cafleet.entrypoints.cli.setup",
        "setup",
        "Prepare the database and install the bundled skills.",
    ),
}


class RootGroup(CafleetGroup):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(SUBCOMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = SUBCOMMANDS.get(cmd_name)
        if entry is None:
            return None
        module_name, attribute, _ = entry
        command: click.Command = getattr(importlib.import_module(module_name), attribute)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, SUBCOMMANDS[name][2]) for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=RootGroup, help="CAFleet — CLI for the message broker and agent registry.")
@click.version_option(__version__, "--version", prog_name="cafleet", message="%(prog)s %(version)s")
@click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")
@click.pass_context
def cli(ctx: click.Context, as_json: bool) -> None:
    ctx.obj = App(json=as_json, adapters=ctx.obj)  # obj: the adapters a caller composes on


def main(argv: list[str] | None = None) -> Any:
    return cli.main(args=argv, prog_name="cafleet")

"""`cafleet member ...`: the group; its verbs live in member_registry, member_panes and
member_lifecycle."""

from __future__ import annotations

import click

from cafleet.entrypoints.cli.app import GatedGroup
from cafleet.entrypoints.cli.member_lifecycle import create, delete
from cafleet.entrypoints.cli.member_panes import capture, exec_command, nudge, ping
from cafleet.entrypoints.cli.member_registry import list_members, show


@click.group(cls=GatedGroup, help="Manage multiplexer-backed member agents (Director only).")
def member() -> None:
    pass


for _verb in (show, list_members, capture, exec_command, ping, nudge, delete, create):
    member.add_command(_verb)

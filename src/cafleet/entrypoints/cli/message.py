"""`cafleet message ...`: the hot path; keep imports inside the commands. The verbs live in
message_send and message_read."""

from __future__ import annotations

import click

from cafleet.entrypoints.cli.app import GatedGroup
from cafleet.entrypoints.cli.message_read import poll, search, show, thread
from cafleet.entrypoints.cli.message_send import ack, broadcast, cancel, send


@click.group(cls=GatedGroup, help="Send, poll, acknowledge and cancel messages.")
def message() -> None:
    pass


for _verb in (send, broadcast, poll, ack, cancel, show, thread, search):
    message.add_command(_verb)

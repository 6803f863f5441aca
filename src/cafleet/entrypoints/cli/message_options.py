"""What the message verbs share: their options and their renderer."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from cafleet.entrypoints.cli.app import App, acting_agent_option

if TYPE_CHECKING:
    from cafleet.entrypoints.cli.rendering import MessageRenderer

agent_id_option = acting_agent_option()
full_option = click.option("--full", is_flag=True, help="Verbose rendering, no truncation.")
quiet_option = click.option("--quiet", is_flag=True, help="Print only the task id.")


def renderer(app: App, full: bool) -> MessageRenderer:
    from cafleet.entrypoints.cli.rendering import MessageRenderer

    return MessageRenderer(app.components.settings.max_text_len, full)

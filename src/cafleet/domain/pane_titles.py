"""What a member's pane is titled in its multiplexer (tmux's pane border, herdr's label): who
it is, what its agent is doing and how much mail waits, so a person sees who waits for what
without opening anything."""

from __future__ import annotations

from cafleet.domain.agents.status import AgentStatus

SEPARATOR = " · "
MAX_NAME = 40  # a border has one line; a longer name is cut


def pane_title(name: str, status: AgentStatus | None, unread: int) -> str:
    """`coder · working · 2 unread`; a status no source tells (None, unknown) is left out."""
    shown = "".join(c for c in name if c.isprintable())[:MAX_NAME]
    parts = [shown]
    if status is not None and status is not AgentStatus.UNKNOWN:
        parts.append(status.value)
    parts.append(f"{unread} unread")
    return SEPARATOR.join(parts)

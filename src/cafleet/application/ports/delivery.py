"""Telling a recipient: its agent's own channel, the pane, and a drainer for what waits."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from cafleet.domain.delivery import Announcement, PushOutcome, Residue


class QueueDrains(Protocol):
    """Delivers what is left queued for these recipients' panes away from the command that
    found it, so that command's caller does not wait for other senders' messages."""

    def start(self, recipients: Sequence[int]) -> None: ...


class NativeChannel(Protocol):
    """One way into an agent other than keystrokes (its hook, its own server)."""

    def offer(self, announcement: Announcement, text: str) -> PushOutcome | None:
        """Hand `text` to the agent; SENT settles the delivery, anything else lets the
        next channel try, and None says the channel does not reach this member at all (no
        attempt is recorded). Never raises for trouble with the agent."""
        ...


class Notifier(Protocol):
    def announce(self, announcement: Announcement) -> PushOutcome:
        """Tell the recipient about a stored message; never raises for pane trouble."""
        ...


class Resumption(Protocol):
    """The pane of a held delivery (domain/holds), looked at again."""

    def obstacle(self, announcement: Announcement) -> PushOutcome | None:
        """What stands in the way of typing into the recipient's pane now (a dialog, no
        answer, another program), as the outcome an attempt would give; None when the pane
        is clear. Types nothing."""
        ...

    def complete(self, announcement: Announcement, residue: Residue) -> PushOutcome | None:
        """Enter for the announcement's preview, typed earlier by an attempt that got as far
        as `residue` says, where the composer still shows it; None when it does not."""
        ...

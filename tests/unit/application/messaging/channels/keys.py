"""The keystroke rung as the channel tests see it: it records what it would type."""

from __future__ import annotations

from cafleet.domain.delivery import Announcement, Channel, PushOutcome


class Typed:
    def __init__(self) -> None:
        self.texts: list[str] = []

    def offer(self, announcement: Announcement, text: str) -> PushOutcome:
        self.texts.append(text)
        return PushOutcome.sent("tmux", announcement.target.pane_id, channel=Channel.KEYS)

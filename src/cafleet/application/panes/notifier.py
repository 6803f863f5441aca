"""The last rung of the delivery ladder: type the message preview into the recipient's pane."""

from __future__ import annotations

from cafleet.application.panes.keystrokes import Keystrokes, KeystrokeSender
from cafleet.application.ports.delivery import NativeChannel, Notifier
from cafleet.domain.delivery import Announcement, PushOutcome


class PaneNotifier(Notifier, NativeChannel):
    def __init__(self, sender: KeystrokeSender, max_text_len: int) -> None:
        self._sender = sender
        self._max_text_len = max_text_len

    def announce(self, announcement: Announcement) -> PushOutcome:
        return self.offer(announcement, announcement.preview(self._max_text_len))

    def offer(self, announcement: Announcement, text: str) -> PushOutcome:
        return self._sender.deliver(announcement.target, Keystrokes.preview(text))

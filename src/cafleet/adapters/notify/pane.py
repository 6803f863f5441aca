"""The Notifier that types a message preview into the recipient's pane."""

from __future__ import annotations

from cafleet.application.keystrokes import Keystrokes, KeystrokeSender
from cafleet.application.ports import Announcement, Notifier
from cafleet.domain.delivery import PushOutcome
from cafleet.domain.preview import preview


class PaneNotifier(Notifier):
    def __init__(self, sender: KeystrokeSender, max_text_len: int) -> None:
        self._sender = sender
        self._max_text_len = max_text_len

    def announce(self, announcement: Announcement) -> PushOutcome:
        text = preview(
            announcement.task_id,
            announcement.from_agent_id,
            announcement.created_at,
            announcement.text,
            self._max_text_len,
        )
        return self._sender.deliver(announcement.target, Keystrokes.preview(text))

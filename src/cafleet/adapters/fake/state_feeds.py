"""Pushed agent states a test hands in, one feed per herdr server socket (none for tmux)."""

from __future__ import annotations

from cafleet.application.ports.panes import AgentStateFeed, AgentStateFeeds
from cafleet.domain.placement import Multiplexer


class FakeStateFeeds(AgentStateFeeds):
    def __init__(self) -> None:
        self.feeds: dict[str | None, AgentStateFeed] = {}  # socket -> its feed
        self.closed = False

    def __call__(self, backend: Multiplexer, socket: str | None) -> AgentStateFeed | None:
        return self.feeds.get(socket) if backend is Multiplexer.HERDR else None

    def close(self) -> None:
        self.closed = True

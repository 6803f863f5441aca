"""A PaneLocator that reports a fixed pane, or fails like a process outside any multiplexer."""

from __future__ import annotations

from cafleet.application.ports.panes import PaneLocator
from cafleet.domain.errors import Unavailable
from cafleet.domain.placement import Multiplexer, PaneLocation


class FakePaneLocator(PaneLocator):
    def __init__(self, pane: PaneLocation | None = None, error: str | None = None) -> None:
        self._pane = pane or PaneLocation(Multiplexer.TMUX, "main", "@0", "%0", "/tmp/fake.sock")
        self._error = error

    def current_pane(self) -> PaneLocation:
        if self._error is not None:
            raise Unavailable(self._error)
        return self._pane

"""Finding the calling pane through herdr, from HERDR_PANE_ID and the server socket."""

from __future__ import annotations

from collections.abc import Mapping

from cafleet.adapters.herdr.client import socket_path
from cafleet.adapters.herdr.driver import HerdrPaneDriver
from cafleet.application.ports.panes import PaneLocator
from cafleet.domain.errors import Unavailable
from cafleet.domain.placement import PaneLocation


class HerdrPaneLocator(PaneLocator):
    def __init__(self, env: Mapping[str, str]) -> None:
        self._env = env

    def current_pane(self) -> PaneLocation:
        pane = self._env.get("HERDR_PANE_ID")
        if not pane:
            raise Unavailable("HERDR_PANE_ID is not set; not running inside a herdr pane")
        return HerdrPaneDriver(socket_path(self._env)).locate(pane)

"""Finds the calling pane through whichever multiplexer the environment names."""

from __future__ import annotations

from collections.abc import Mapping

from cafleet.adapters.herdr.locator import HerdrPaneLocator
from cafleet.adapters.tmux.locator import TmuxPaneLocator
from cafleet.application.ports import PaneLocator
from cafleet.domain.multiplexer import resolve_multiplexer
from cafleet.domain.placement import Multiplexer, PaneLocation


class EnvironmentPaneLocator(PaneLocator):
    def __init__(self, env: Mapping[str, str]) -> None:
        self._env = env

    def current_pane(self) -> PaneLocation:
        if resolve_multiplexer(self._env) is Multiplexer.TMUX:
            return TmuxPaneLocator(self._env).current_pane()
        return HerdrPaneLocator(self._env).current_pane()

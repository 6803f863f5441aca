"""Finds the calling pane through whichever multiplexer the environment names."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from cafleet.adapters.system.hosts import this_host
from cafleet.application.ports.panes import PaneLocator
from cafleet.domain.multiplexer import resolve_multiplexer
from cafleet.domain.placement import Multiplexer, PaneLocation


class EnvironmentPaneLocator(PaneLocator):
    def __init__(self, env: Mapping[str, str]) -> None:
        self._env = env

    def current_pane(self) -> PaneLocation:
        """The calling pane, on this host. Only the named multiplexer's adapter is
        imported: a CLI call pays for one."""
        if resolve_multiplexer(self._env) is Multiplexer.TMUX:
            from cafleet.adapters.tmux.locator import TmuxPaneLocator

            found = TmuxPaneLocator(self._env).current_pane()
        else:
            from cafleet.adapters.herdr.locator import HerdrPaneLocator

            found = HerdrPaneLocator(self._env).current_pane()
        return replace(found, host=this_host(self._env))

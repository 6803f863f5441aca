"""Which service runs each verb another host asks of this host's relay.

Each service encodes its own verb's argument and answer (`run_relayed` beside the method a
local command calls), so a verb runs here exactly as the same command run on this host.
The services are built on first use: a relay that only delivers never builds a spawner.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from cafleet.application.ports.panes import PaneDrivers, PaneLocator
from cafleet.domain.errors import CafleetError
from cafleet.domain.placement import PaneLocation
from cafleet.domain.relay import PaneVerb, RelayRequest

if TYPE_CHECKING:
    from cafleet.application.fleets import FleetService
    from cafleet.application.members.panes import MemberPanes
    from cafleet.application.members.removal import MemberRemoval
    from cafleet.application.members.spawning import MemberSpawner


class RelayedVerbs:
    def __init__(
        self,
        panes: Callable[[], MemberPanes],
        spawner: Callable[[], MemberSpawner],
        removal: Callable[[], MemberRemoval],
        fleets: Callable[[], FleetService],
    ) -> None:
        self._panes = panes
        self._spawner = spawner
        self._removal = removal
        self._fleets = fleets

    def __call__(self, request: RelayRequest) -> str:
        match request.verb:
            case PaneVerb.SPAWN:
                return self._spawner().run_relayed(request)
            case PaneVerb.DELETE:
                return self._removal().run_relayed(request)
            case PaneVerb.CLOSE:
                return self._fleets().run_relayed(request)
            case _:
                return self._panes().run_relayed(request)


def pane_of_process(locator: PaneLocator, drivers: PaneDrivers) -> PaneLocation | None:
    """The pane this process runs in, claimed (a pane that later takes its id is not taken
    for it), or None outside a multiplexer."""
    try:
        pane = locator.current_pane()
        identity = drivers(pane.backend, pane.socket, pane.host).claim(pane.pane_id)
    except CafleetError:
        return None
    return replace(pane, identity=identity)

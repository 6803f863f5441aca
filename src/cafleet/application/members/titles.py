"""PaneTitles: keeps each placed agent's pane title (domain/pane_titles.py) current where the
multiplexer shows titles (the PaneLabels capability: tmux, herdr).

A command that changes someone's mail (send, broadcast, ack, cancel) refreshes the panes of
the agents concerned; the relays refresh every pane they watch each round, and the monitor
every pane of a server it listed that tick and, on a server whose event feed served the
tick (herdr), the panes whose state changed, which catches a status that changed by itself.
A pane is titled only when what it shows differs (the listing reports the current title, so
any process may refresh without knowing what another set; a pane whose report does not say
is titled), and only on this host: another host's relay titles its own panes. A title is
cosmetic: nothing here ever fails its caller.
"""

from __future__ import annotations

from collections.abc import Iterable

from cafleet.application.members.registry import Listings, PaneSurvey
from cafleet.application.members.status import AgentStatusReader
from cafleet.application.ports.panes import PaneDrivers, PaneLabels
from cafleet.application.ports.store import UnitOfWorkFactory
from cafleet.domain.errors import CafleetError
from cafleet.domain.pane_titles import pane_title
from cafleet.domain.placement import Multiplexer

Server = tuple[Multiplexer, str | None, str | None]  # backend, socket, host


class PaneTitles:
    def __init__(
        self,
        uow: UnitOfWorkFactory,
        drivers: PaneDrivers,
        statuses: AgentStatusReader | None = None,
    ) -> None:
        self._uow = uow
        self._drivers = drivers
        self._statuses = statuses

    def refresh(self, agent_ids: Iterable[int], listed: Listings | None = None) -> int:
        """Title the panes of these agents that live here; the number of titles changed.
        `listed`: servers already read this round, which are not listed again."""
        wanted = list(dict.fromkeys(agent_ids))
        if not wanted:
            return 0
        try:
            with self._uow() as uow:
                placements = {
                    agent_id: placement
                    for agent_id, placement in uow.placements.for_agents(wanted).items()
                    if placement.pane_id is not None and self._drivers.reaches(placement.host)
                }
                agents = {a: uow.agents.get(a) for a in placements}
                unread = uow.messages.pending_counts(list(placements))
        except CafleetError:
            return 0
        survey = PaneSurvey(self._drivers, self._statuses, listed)
        wanted_titles: dict[Server, dict[str, str]] = {}
        for agent_id, placement in placements.items():
            agent, pane = agents[agent_id], survey.pane(placement)
            if agent is None or pane is None or pane.dead or placement.pane_id is None:
                continue  # never title a pane that is not (or no longer) the agent's
            _, told, _ = survey.read(placement)
            status = None if told is None else told.status
            title = pane_title(agent.label, status, unread.get(agent_id, 0))
            if pane.title != title:
                server = (placement.backend, placement.socket, placement.host)
                wanted_titles.setdefault(server, {})[placement.pane_id] = title
        return sum(self._label(server, titles) for server, titles in wanted_titles.items())

    def _label(self, server: Server, titles: dict[str, str]) -> int:
        """Every title of one multiplexer server in one go; how many were set."""
        try:
            driver = self._drivers(*server)
            if not isinstance(driver, PaneLabels):
                return 0
            return len(titles) - len(driver.label_all(titles))
        except CafleetError:
            return 0

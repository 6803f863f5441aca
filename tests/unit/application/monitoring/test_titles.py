"""The monitor keeps pane titles in step: each tick titles the panes it watches (the watcher's
included) with name, status and unread count, and sets a title again only when it changed."""

from __future__ import annotations

from typing import Any

from cafleet.application.members.titles import PaneTitles
from cafleet.domain.agents.status import AgentStatus, StatusReport


class Told:
    def __init__(self, status: AgentStatus) -> None:
        self.status = status

    def report(self, placement: Any, pane: Any, detected: Any = None) -> StatusReport:
        return StatusReport(self.status)


def test_a_tick_titles_every_watched_pane_and_only_changes_are_set_again(fleet: Any) -> None:
    told = Told(AgentStatus.IDLE)
    titles = PaneTitles(fleet.store, fleet.drivers, told)  # type: ignore[arg-type]
    service = fleet.service(titles=titles)
    service.claim(fleet.fleet_id, 5)
    worker = fleet.members["worker"]

    service.tick(fleet.fleet_id)
    first = {pane.pane_id: pane.title for pane in fleet.driver.panes.values()}
    fleet.message(worker, fleet.director_id)
    told.status = AgentStatus.WORKING
    fleet.clock.advance(5)
    service.tick(fleet.fleet_id)

    assert first[fleet.panes[worker].pane_id] == f"worker #{worker} · idle · 0 unread"
    assert first[fleet.director_pane.pane_id] == f"Director #{fleet.director_id} · idle · 0 unread"
    assert fleet.watcher_pane is not None and first[fleet.watcher_pane.pane_id] is not None
    assert fleet.panes[worker].title == f"worker #{worker} · working · 1 unread"


def test_an_unchanged_title_costs_no_second_label(fleet: Any) -> None:
    labels: list[str] = []
    real_label = fleet.driver.label

    def counted(pane_id: str, label: str) -> None:
        labels.append(pane_id)
        real_label(pane_id, label)

    fleet.driver.label = counted
    service = fleet.service(titles=PaneTitles(fleet.store, fleet.drivers))
    service.claim(fleet.fleet_id, 5)

    service.tick(fleet.fleet_id)
    once = len(labels)
    fleet.clock.advance(5)
    service.tick(fleet.fleet_id)

    assert once == 3  # the Director, the worker and the watcher
    assert len(labels) == once

"""Pane titles on the fakes: the recipient's pane says how much mail waits once a message is
sent, read (ack) or withdrawn (cancel), every recipient of a broadcast's does, a status is
shown when one is told, only a changed title is set again, and panes that are gone, taken by
another program or on another host are left alone."""

from __future__ import annotations

from dataclasses import dataclass, replace

import pytest

from cafleet.adapters.fake.notifier import RecordingNotifier
from cafleet.adapters.fake.pane_driver import FakePaneDriver, FakePaneDrivers, ThreadLocks
from cafleet.application.members.titles import PaneTitles
from cafleet.application.messaging.service import MessagingService
from cafleet.domain.agents.status import AgentStatus, StatusReport
from cafleet.domain.pane_titles import pane_title


@dataclass
class Team:
    fleet_id: int
    director: int
    coder: int
    tester: int
    server: FakePaneDriver


@pytest.fixture
def team(world, pane_drivers: FakePaneDrivers) -> Team:
    made = world.fleet("alpha")
    server = pane_drivers(made.placement.backend, made.placement.socket)
    for pane_id in ("%1", "%2"):
        server.add_pane("claude", made.placement.window_id, pane_id)
    return Team(
        made.fleet.fleet_id,
        made.director.agent_id,
        world.member(made, "coder", pane_id="%1"),
        world.member(made, "tester", pane_id="%2"),
        server,
    )


@pytest.fixture
def titles(store, pane_drivers) -> PaneTitles:
    return PaneTitles(store, pane_drivers)


@pytest.fixture
def messaging(store, clock, titles) -> MessagingService:
    return MessagingService(store, clock, RecordingNotifier(), ThreadLocks(), titles=titles)


def title(team: Team, pane_id: str) -> str | None:
    return team.server.panes[pane_id].title


def test_a_message_counts_in_the_recipients_title_until_it_is_acked(
    messaging: MessagingService, team: Team
) -> None:
    first = messaging.send(team.fleet_id, team.director, team.coder, "one").message
    messaging.send(team.fleet_id, team.director, team.coder, "two")
    assert title(team, "%1") == f"coder #{team.coder} · 2 unread"
    assert title(team, "%2") is None  # nobody wrote to the tester

    messaging.ack(team.fleet_id, team.coder, first.task_id)

    assert title(team, "%1") == f"coder #{team.coder} · 1 unread"


def test_a_cancelled_message_no_longer_counts(messaging: MessagingService, team: Team) -> None:
    sent = messaging.send(team.fleet_id, team.director, team.tester, "stale").message

    messaging.cancel(team.fleet_id, team.director, sent.task_id)

    assert title(team, "%2") == f"tester #{team.tester} · 0 unread"


def test_a_broadcast_titles_every_recipient(messaging: MessagingService, team: Team) -> None:
    messaging.broadcast(team.fleet_id, team.director, "standup")

    assert title(team, "%1") == f"coder #{team.coder} · 1 unread"
    assert title(team, "%2") == f"tester #{team.tester} · 1 unread"


class ToldStatus:
    """Stands in for AgentStatusReader: every agent's status is the one set here."""

    def __init__(self) -> None:
        self.status = AgentStatus.WORKING

    def report(self, placement, pane, detected=None) -> StatusReport:
        return StatusReport(self.status)


def test_the_status_is_shown_and_only_a_changed_title_is_set_again(
    store, pane_drivers, team: Team
) -> None:
    told = ToldStatus()
    titles = PaneTitles(store, pane_drivers, told)  # type: ignore[arg-type]

    first = titles.refresh([team.coder, team.tester])
    again = titles.refresh([team.coder, team.tester])
    told.status = AgentStatus.IDLE
    changed = titles.refresh([team.coder])

    assert (first, again, changed) == (2, 0, 1)
    assert title(team, "%1") == pane_title(f"coder #{team.coder}", AgentStatus.IDLE, 0)
    assert title(team, "%1") == f"coder #{team.coder} · idle · 0 unread"
    assert title(team, "%2") == f"tester #{team.tester} · working · 0 unread"


def test_gone_and_foreign_panes_are_not_titled(
    store, pane_drivers: FakePaneDrivers, world, team: Team
) -> None:
    team.server.panes["%1"].dead = True
    team.server.kill("%2")
    team.server.add_pane("vim", pane_id="%2")  # a later pane took the id: not the tester's
    titles = PaneTitles(store, pane_drivers)

    assert titles.refresh([team.coder, team.tester, 999]) == 0
    assert title(team, "%1") is None and title(team, "%2") is None


def test_a_pane_on_another_host_is_left_to_its_relay(
    store, pane_drivers: FakePaneDrivers, world, team: Team
) -> None:
    with store(write=True) as uow:
        placement = uow.placements.get(team.coder)
        uow.placements.save(replace(placement, host="build-box"))
        uow.commit()
    on_that_host = FakePaneDrivers(here="build-box")
    on_that_host.servers = pane_drivers.servers

    assert PaneTitles(store, pane_drivers).refresh([team.coder]) == 0
    assert title(team, "%1") is None
    assert PaneTitles(store, on_that_host).refresh([team.coder]) == 1  # as its relay does


def test_names_are_printable_and_bounded() -> None:
    shown = pane_title("evil\x1b]2;pwned\x07" + "x" * 80, AgentStatus.UNKNOWN, 3)

    assert "\x1b" not in shown and "\x07" not in shown
    assert shown.endswith(" · 3 unread") and "unknown" not in shown
    assert len(shown.split(" · ")[0]) == 40

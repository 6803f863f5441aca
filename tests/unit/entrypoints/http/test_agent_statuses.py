"""Each member's agent status: in AdminService's roster and GET /api/agents, and in the
fingerprint the event stream compares (read once per interval, however many streams ask)."""

from __future__ import annotations

from datetime import datetime

import pytest
from dependency_injector import providers

from cafleet.adapters.fake.launch_pads import FakeLaunchPad, FakeLaunchPads
from cafleet.application.admin.service import STATUS_SECONDS, AdminService
from cafleet.application.admin.views import FleetEvent
from cafleet.application.members.registry import ListMode
from cafleet.domain.agents.status import AgentStatus, HookEvent, StatusReport


@pytest.fixture
def pads(container) -> FakeLaunchPads:
    made = FakeLaunchPads()
    container.launch_pads.override(providers.Object(made))
    return made


@pytest.fixture
def admin(container, pads) -> AdminService:
    built: AdminService = container.admin()
    return built


@pytest.fixture
def member(fleets, alpha, pads):
    """A ready Claude member whose pane runs; returns its id and its launch pad."""

    def make(name: str, pane: str) -> tuple[int, FakeLaunchPad]:
        pad = pads.prepare(alpha.fleet.fleet_id, 100 + len(pads.pads))
        return fleets.member(alpha, name, pane=pane, launch_pad=pad.location), pad

    return make


def hook(clock, pad: FakeLaunchPad, event: str) -> datetime:
    at: datetime = clock.now()
    pad.reported.append(HookEvent(event, at))
    return at


def test_the_roster_carries_each_members_status_as_member_list_reads_it(
    container, admin, fleets, alpha, member, clock
) -> None:
    working, pad = member("working", "%1")
    since = hook(clock, pad, "prompt")
    asking, other = member("asking", "%2")
    asked = hook(clock, other, "waiting:permission_prompt")
    silent, quiet = member("silent", "%3")
    hook(clock, quiet, "session")  # its hooks run; none told a status yet
    gone, _ = member("gone", "%4")
    fleets.server(alpha).kill("%4")

    told = {e.agent.agent_id: e.agent_status for e in admin.roster(alpha.fleet.fleet_id)}

    assert told == {
        alpha.director.agent_id: None,  # the Director and the Administrator have none
        alpha.administrator.agent_id: None,
        working: StatusReport(AgentStatus.WORKING, since),
        asking: StatusReport(AgentStatus.WAITING, asked),
        silent: StatusReport(AgentStatus.UNKNOWN),
        gone: StatusReport(AgentStatus.EXITED),
    }
    listed = container.members().list(alpha.fleet.fleet_id, ListMode.MEMBERS).members
    assert {v.agent.agent_id: v.agent_status for v in listed} == {
        k: v for k, v in told.items() if v is not None
    }


def test_agents_route_shows_the_status_and_since_when(
    pads, client, member, alpha, clock, scoped
) -> None:
    # pads first: the app takes its services when it is made
    worker, pad = member("worker", "%1")
    since = hook(clock, pad, "waiting:permission_prompt")

    agents = client.get("/api/agents", headers=scoped(alpha.fleet.fleet_id)).json()["agents"]

    rows = {a["agent_id"]: (a["agent_status"], a["agent_status_since"]) for a in agents}
    assert rows == {
        alpha.director.agent_id: (None, None),
        alpha.administrator.agent_id: (None, None),
        worker: ("waiting", since.isoformat(timespec="microseconds")),
    }


def test_a_deleted_fleet_shows_no_agent_status(admin, fleets, alpha, member, clock) -> None:
    worker, pad = member("worker", "%1")
    hook(clock, pad, "prompt")
    fleets.send(alpha, alpha.director.agent_id, worker, "keeps it in the roster")
    fleets.delete(alpha)

    roster = admin.roster(alpha.fleet.fleet_id)

    assert worker in [e.agent.agent_id for e in roster]
    assert [e.agent_status for e in roster] == [None] * len(roster)


def test_a_status_change_is_a_change_of_the_agents(admin, alpha, member, clock) -> None:
    _, pad = member("worker", "%1")
    hook(clock, pad, "prompt")
    before = admin.mark(alpha.fleet.fleet_id)

    hook(clock, pad, "waiting:permission_prompt")
    clock.advance(STATUS_SECONDS)
    after = admin.mark(alpha.fleet.fleet_id)

    assert after.changes_since(before) == {FleetEvent.STATE: ("agents",)}
    assert after.changes_since(after) == {}


def test_the_mark_reads_statuses_once_per_interval(admin, fleets, alpha, member, clock) -> None:
    _, pad = member("worker", "%1")
    hook(clock, pad, "prompt")
    before = admin.mark(alpha.fleet.fleet_id)
    listings = fleets.server(alpha).calls

    hook(clock, pad, "idle")
    clock.advance(STATUS_SECONDS / 2)
    soon = [admin.mark(alpha.fleet.fleet_id) for _ in range(5)]  # five streams asking
    assert fleets.server(alpha).calls == listings  # no pane was listed again
    assert all(mark.changes_since(before) == {} for mark in soon)

    clock.advance(STATUS_SECONDS)
    later = admin.mark(alpha.fleet.fleet_id)
    assert later.changes_since(before) == {FleetEvent.STATE: ("agents",)}
    assert [status for _, status, _ in later.agent_statuses] == ["idle"]


def test_a_receipt_is_a_change_of_the_deliveries(
    container, admin, fleets, alpha, member, clock
) -> None:
    worker, _ = member("worker", "%1")
    task_id = fleets.send(alpha, alpha.director.agent_id, worker, "hello")
    before = admin.mark(alpha.fleet.fleet_id)

    with container.uow()(write=True) as uow:
        assert uow.deliveries.confirm(worker, [task_id], clock.now()) == 1
        uow.commit()

    assert admin.mark(alpha.fleet.fleet_id).changes_since(before) == {
        FleetEvent.STATE: ("deliveries",)
    }

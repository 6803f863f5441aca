"""What a command on one host asks of another host's relay beyond the pane verbs: spawning a
member there, deleting one, closing a fleet's panes there, the monitor's wake, and what the
relay reports of its panes. The rig's panes and relay are on host "here"; the Director and
the commands are on "laptop", whose processes see the same fake servers but may not use them.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from cafleet.adapters.fake.locator import FakePaneLocator
from cafleet.adapters.fake.pane_driver import FakePaneDrivers
from cafleet.application.fleets import FleetCreated, FleetService, PaneFate
from cafleet.application.members.registry import ListMode, MemberService, PaneSurvey
from cafleet.application.members.removal import MemberRemoval
from cafleet.application.members.spawning import MemberSpawner
from cafleet.application.members.status import AgentStatusReader
from cafleet.application.monitoring.service import MonitorService
from cafleet.application.ports.system import ProcessIdentity
from cafleet.application.relay.service import RelayClient, RelayDuties, RelayService
from cafleet.composition.relay_verbs import RelayedVerbs
from cafleet.domain.agents.status import AgentStatus
from cafleet.domain.errors import Invalid, Unavailable
from cafleet.domain.placement import Multiplexer, PaneLocation, PaneState
from cafleet.domain.relay import RELAY_ALIVE_SECONDS, PaneVerb
from support.pane_rig import ENTER, SOCKET, PaneRig

from .test_spawning import Spawning

LAPTOP = "laptop"
RELAY_WINDOW = "@7"


class Process(ProcessIdentity):
    def __init__(self, host: str) -> None:
        self._host = host

    def pid(self) -> int:
        return 100

    def host(self) -> str:
        return self._host

    def alive(self, pid: int) -> bool:
        return True


class TwoHosts:
    """A fleet whose Director is on the laptop, the relay of "here" in a pane of its own,
    and the services a command on the laptop runs."""

    def __init__(self, rig: PaneRig) -> None:
        self.rig = rig
        self.spawning = Spawning(rig)
        self.made: FleetCreated = self.spawning.made
        with rig.store(write=True) as uow:
            director = uow.placements.get(self.made.director.agent_id)
            assert director is not None
            uow.placements.save(replace(director, host=LAPTOP))
            uow.commit()
        pane = rig.driver.add_pane("bash", RELAY_WINDOW, pane_id="%50")
        self.relay_pane = PaneLocation(
            Multiplexer.TMUX, "build", RELAY_WINDOW, pane.pane_id, SOCKET,
            rig.driver.claim(pane.pane_id), "here",
        )  # fmt: skip
        self.laptop = rig.on_host(LAPTOP)
        self.client = RelayClient(rig.store, rig.clock)

    @property
    def fleet_id(self) -> int:
        return self.made.fleet.fleet_id

    def relay(self, *, in_pane: bool = True) -> RelayService:
        rig = self.rig
        verbs = RelayedVerbs(rig.member_panes, self.spawning.spawner, rig.removal, self.fleets_here)
        statuses = AgentStatusReader(rig.pads, rig.profiles(), rig.clock)
        duties = RelayDuties(
            rig.messaging().drain_queued,
            verbs,
            read_panes=lambda placements: PaneSurvey(rig.drivers, statuses).reports(
                placements, "here"
            ),
            own_pane=lambda: self.relay_pane if in_pane else None,
        )
        relay = RelayService(rig.store, rig.clock, Process("here"), "here", duties)
        relay.start()
        return relay

    def fleets_here(self) -> FleetService:
        return self.rig.fleet_service()

    def answer_with(self, relay: RelayService) -> None:
        """The relay takes the next request as the laptop's command waits for it."""
        self.rig.clock.after(0.01, relay.tick)

    # -- the laptop's services

    def spawner(self, drivers: FakePaneDrivers | None = None) -> MemberSpawner:
        """`member create` as the laptop (or the drivers' host) runs it."""
        s = self.spawning
        return MemberSpawner(
            self.rig.store, self.rig.clock, drivers or self.laptop, s.programs, s.context,
            s.preset, self.rig.pads, self.rig.profiles(), self.client,
        )  # fmt: skip

    def removal(self) -> MemberRemoval:
        return MemberRemoval(
            self.rig.store, self.rig.clock, self.laptop, self.rig.teardown(), self.client
        )

    def fleets(self) -> FleetService:
        rig = self.rig
        return FleetService(rig.store, rig.clock, FakePaneLocator(), rig.teardown(), self.laptop,
                            self.client)  # fmt: skip

    def members(self) -> MemberService:
        return MemberService(self.rig.store, self.rig.clock, self.laptop)

    def monitor(self) -> MonitorService:
        rig = self.rig
        return MonitorService(rig.store, rig.clock, self.laptop, rig.keystrokes(),
                              Process(LAPTOP), 0, relay=self.client)  # fmt: skip


@pytest.fixture
def hosts(rig: PaneRig) -> TwoHosts:
    return TwoHosts(rig)


def test_a_member_spawned_for_another_host_opens_beside_that_host_s_relay(
    rig: PaneRig, hosts: TwoHosts
) -> None:
    relay = hosts.relay()
    hosts.answer_with(relay)

    created = hosts.spawner().create(hosts.spawning.request(host="here"))

    [call] = rig.driver.spawned
    assert call.beside == hosts.relay_pane.pane_id
    placement = created.placement
    assert (placement.host, placement.session, placement.window_id) == (
        "here", "build", RELAY_WINDOW,
    )  # fmt: skip
    assert (placement.pane_id, placement.director_agent_id) == (
        call.pane_id, hosts.made.director.agent_id,
    )  # fmt: skip
    assert placement.ready_at is not None
    assert created.agent.name == "coder"
    [answered] = relay.tick().answered or [None]
    assert answered is None  # answered while the laptop waited, reported then
    with rig.store() as uow:
        assert uow.relays.pending("here") == []


def test_without_a_host_a_member_goes_to_the_director_s_host_s_relay(
    rig: PaneRig, hosts: TwoHosts
) -> None:
    with pytest.raises(Unavailable) as raised:
        hosts.spawner(rig.drivers).create(hosts.spawning.request())  # run on "here"

    assert raised.value.message == (
        "no relay of host 'laptop' is alive (never seen); start `cafleet relay` on that host"
    )
    assert rig.driver.spawned == []
    assert [a.name for a in rig.store.tables.agents.values() if a.name == "coder"] == []


def test_a_relay_with_no_pane_and_no_session_refuses_to_spawn_in_one_line(
    rig: PaneRig, hosts: TwoHosts
) -> None:
    hosts.answer_with(hosts.relay(in_pane=False))

    with pytest.raises(Invalid) as raised:
        hosts.spawner().create(hosts.spawning.request(host="here"))

    assert raised.value.message == (
        "the relay of host 'here' has no pane to open members beside: it runs in no tmux or"
        " herdr pane and could not make a tmux session of its own (its first line of output"
        " says why)"
    )
    assert rig.driver.spawned == []


def test_a_member_of_another_host_is_deleted_by_its_relay(rig: PaneRig, hosts: TwoHosts) -> None:
    worker = rig.member(hosts.made, host="here")
    assert worker.pane_id is not None
    rig.driver.obey_exit(worker.pane_id)
    hosts.answer_with(hosts.relay())

    done = hosts.removal().delete(hosts.fleet_id, worker.agent_id, timeout=5)

    assert (done.agent_id, done.pane_status, done.warning) == (
        worker.agent_id, f"{worker.pane_id} (closed)", None,
    )  # fmt: skip
    assert worker.pane_id not in rig.driver.panes
    agent = rig.agent(worker.agent_id)
    assert agent is not None and not agent.is_active
    assert rig.placement(worker.agent_id) is None


def test_with_its_host_s_relay_down_a_member_is_deleted_only_when_forced(
    rig: PaneRig, hosts: TwoHosts
) -> None:
    worker = rig.member(hosts.made, host="here")
    assert worker.pane is not None

    with pytest.raises(Unavailable) as refused:
        hosts.removal().delete(hosts.fleet_id, worker.agent_id)
    forced = hosts.removal().delete(hosts.fleet_id, worker.agent_id, force=True)

    assert refused.value.message == (
        "no relay of host 'here' is alive (never seen); start `cafleet relay` on that host,"
        " or pass --force to deregister the member and leave its pane"
    )
    assert forced.pane_status == f"{worker.pane_id} (left open: host 'here' is unreachable)"
    assert forced.warning is not None and forced.warning.startswith("Warning: no relay of host")
    assert worker.pane.typed == []  # nothing on the laptop could reach it
    agent = rig.agent(worker.agent_id)
    assert agent is not None and not agent.is_active


def test_fleet_delete_on_one_host_closes_the_member_panes_of_another_through_its_relay(
    rig: PaneRig, hosts: TwoHosts
) -> None:
    one = rig.member(hosts.made, "one", host="here")
    two = rig.member(hosts.made, "two", host="here")
    rig.driver.obey_exit(*(m.pane_id or "" for m in (one, two)))
    hosts.answer_with(hosts.relay())

    done = hosts.fleets().delete(hosts.fleet_id, timeout=5)

    assert [(p.agent_id, p.fate) for p in done.panes] == [
        (one.agent_id, PaneFate.CLOSED),
        (two.agent_id, PaneFate.CLOSED),
    ]
    assert one.pane_id not in rig.driver.panes and two.pane_id not in rig.driver.panes
    fleet = rig.fleet_row(hosts.fleet_id)
    assert fleet is not None and fleet.is_deleted


def test_fleet_delete_with_a_host_s_relay_down_deletes_the_fleet_and_says_which_panes_stay(
    rig: PaneRig, hosts: TwoHosts
) -> None:
    worker = rig.member(hosts.made, host="here")

    done = hosts.fleets().delete(hosts.fleet_id, timeout=5)

    [pane] = done.panes
    assert (pane.agent_id, pane.fate) == (worker.agent_id, PaneFate.FAILED)
    assert pane.error is not None and pane.error.startswith("no relay of host 'here' is alive")
    assert worker.pane_id in rig.driver.panes
    fleet = rig.fleet_row(hosts.fleet_id)
    assert fleet is not None and fleet.is_deleted


def test_member_list_on_another_host_shows_the_relay_s_report_while_the_relay_lives(
    rig: PaneRig, hosts: TwoHosts
) -> None:
    worker = rig.member(hosts.made, host="here")
    relay = hosts.relay()
    relay.tick()

    def listed() -> tuple[PaneState | None, AgentStatus | None, bool | None]:
        [view] = hosts.members().list(hosts.fleet_id, ListMode.MEMBERS).members
        status = None if view.agent_status is None else view.agent_status.status
        return view.pane, status, None if view.relay is None else view.relay.alive

    assert listed() == (PaneState.RUNNING, AgentStatus.UNKNOWN, True)

    rig.driver.panes.pop(worker.pane_id or "")  # the agent left
    rig.clock.advance(3)
    relay.tick()
    assert listed() == (PaneState.GONE, AgentStatus.EXITED, True)

    rig.clock.advance(RELAY_ALIVE_SECONDS + 1)  # the relay went quiet: nobody can tell
    assert listed() == (None, AgentStatus.UNKNOWN, False)


def test_a_relayed_send_and_a_pane_request_each_tell_the_host_s_relay(
    rig: PaneRig, hosts: TwoHosts
) -> None:
    worker = rig.member(hosts.made, host="here")
    laptop = rig.messaging(drivers=hosts.laptop)

    laptop.send(hosts.fleet_id, hosts.made.director.agent_id, worker.agent_id, "hi")
    relay = hosts.relay()
    hosts.answer_with(relay)
    hosts.client.run("here", hosts.fleet_id, worker.agent_id, PaneVerb.CAPTURE, "5")

    assert rig.store.tables.wakes == ["here", "here"]


def test_the_monitor_on_one_host_wakes_a_watcher_on_another_through_its_relay(
    rig: PaneRig, hosts: TwoHosts
) -> None:
    worker = rig.member(hosts.made, host="here")
    watcher = rig.member(hosts.made, "watcher", host="here", monitor=True)
    assert watcher.pane is not None
    relay = hosts.relay()
    relay.tick()
    monitor = hosts.monitor()
    monitor.claim(hosts.fleet_id, 5)
    rig.clock.advance(721)  # the member's interval is up
    relay.tick()  # a fresh beat and report

    hosts.answer_with(relay)
    woken_at = rig.clock.now()
    report = monitor.tick(hosts.fleet_id)

    director = hosts.made.director.agent_id  # on the laptop, seen there
    assert [d.agent_id for d in report.due] == [director, worker.agent_id]
    assert report.woke, report.not_delivered
    [line, enter] = watcher.pane.typed
    assert enter == ENTER and f"{worker.agent_id}" in line[1]
    schedule = rig.schedule(worker.agent_id)
    assert schedule is not None and schedule.last_ping_at == woken_at


def test_the_monitor_leaves_a_member_whose_host_s_relay_is_down_alone(
    rig: PaneRig, hosts: TwoHosts
) -> None:
    rig.member(hosts.made, host="here")
    watcher = rig.member(hosts.made, "watcher", host="here", monitor=True)
    assert watcher.pane is not None
    monitor = hosts.monitor()
    monitor.claim(hosts.fleet_id, 5)
    rig.clock.advance(721)

    report = monitor.tick(hosts.fleet_id)

    # the member is not running as far as anyone can tell; the Director, on the laptop, is
    # due, and its wake is not delivered for want of the watcher's relay
    assert [d.agent_id for d in report.due] == [hosts.made.director.agent_id]
    assert report.not_delivered is not None
    assert report.not_delivered.startswith("no relay of host 'here' is alive")
    assert watcher.pane.typed == []


def test_a_relayed_wake_that_cannot_be_typed_is_the_tick_s_reason(
    rig: PaneRig, hosts: TwoHosts
) -> None:
    worker = rig.member(hosts.made, host="here")
    watcher = rig.member(hosts.made, "watcher", host="here", monitor=True, command="bash")
    relay = hosts.relay()
    monitor = hosts.monitor()
    monitor.claim(hosts.fleet_id, 5)
    rig.clock.advance(721)
    relay.tick()

    hosts.answer_with(relay)
    report = monitor.tick(hosts.fleet_id)

    assert not report.woke
    assert report.not_delivered is not None and "bash" in report.not_delivered
    assert watcher.pane is not None and watcher.pane.typed == []
    schedule = rig.schedule(worker.agent_id)
    assert schedule is not None and schedule.last_ping_at is None  # due again next tick

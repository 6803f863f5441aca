"""The relay of a host and its client, on the fake store and panes: the rig's panes are on
host "here"; a command on another host ("laptop") leaves its pane work for here's relay."""

from __future__ import annotations

import pytest

from cafleet.application.ports.system import ProcessIdentity
from cafleet.application.relay.service import RelayClient, RelayDuties, RelayService
from cafleet.domain.delivery import DeliveryState
from cafleet.domain.errors import Conflict, NotFound, Unavailable
from cafleet.domain.relay import RELAY_ALIVE_SECONDS, PaneVerb, RequestState, relay_note
from support.pane_rig import ENTER, PaneRig, text

LAPTOP = "laptop"


class Process(ProcessIdentity):
    def __init__(self, pid: int, dead: tuple[int, ...] = ()) -> None:
        self._pid = pid
        self.dead = set(dead)

    def pid(self) -> int:
        return self._pid

    def host(self) -> str:
        return "here"

    def alive(self, pid: int) -> bool:
        return pid not in self.dead


def relay_of(rig: PaneRig, pid: int = 100, dead: tuple[int, ...] = ()) -> RelayService:
    duties = RelayDuties(rig.messaging().drain_queued, rig.member_panes().run_relayed)
    return RelayService(rig.store, rig.clock, Process(pid, dead), "here", duties)


def test_a_message_from_another_host_is_queued_for_the_relay_which_types_it_once(
    rig: PaneRig,
) -> None:
    made = rig.fleet()
    worker = rig.member(made, host="here")
    assert worker.pane is not None
    laptop = rig.messaging(drivers=rig.on_host(LAPTOP))

    sent = laptop.send(made.fleet.fleet_id, made.director.agent_id, worker.agent_id, "hi")

    assert sent.delivery.state is DeliveryState.PENDING
    assert sent.delivery.error == relay_note("here")
    assert worker.pane.typed == []

    relay = relay_of(rig)
    relay.start()
    first = relay.tick()
    again = relay.tick()

    assert first.delivered_to == (worker.agent_id,)
    assert again.delivered_to == ()
    assert len(worker.pane.typed) == 2 and worker.pane.typed[1] == ENTER
    assert worker.pane.typed[0][1].endswith("\nhi")
    with rig.store() as uow:
        [row] = uow.deliveries.for_task(sent.message.task_id)
    assert row.state is DeliveryState.SENT


def test_a_relay_takes_only_its_own_host_s_queues(rig: PaneRig) -> None:
    made = rig.fleet()
    other = rig.member(made, "other", host="build-server")
    laptop = rig.messaging(drivers=rig.on_host(LAPTOP))
    sent = laptop.send(made.fleet.fleet_id, made.director.agent_id, other.agent_id, "hi")

    relay = relay_of(rig)
    relay.start()

    assert relay.tick().delivered_to == ()
    with rig.store() as uow:
        [row] = uow.deliveries.for_task(sent.message.task_id)
    assert (row.state, row.error) == (DeliveryState.PENDING, relay_note("build-server"))


def test_a_second_live_relay_of_a_host_is_refused_and_a_dead_one_s_beat_is_taken_over(
    rig: PaneRig,
) -> None:
    relay_of(rig, pid=100).start()

    with pytest.raises(Conflict) as raised:
        relay_of(rig, pid=200).start()
    assert raised.value.message == "a relay for host 'here' is already running (pid 100)"

    successor = relay_of(rig, pid=200, dead=(100,))
    successor.start()
    with rig.store() as uow:
        [beat] = uow.relays.beats()
    assert (beat.host, beat.pid) == ("here", 200)
    rig.clock.advance(5)
    assert relay_of(rig, pid=100).tick().displaced  # the first one, back, stops


def test_pane_verbs_from_another_host_are_answered_by_the_relay(rig: PaneRig) -> None:
    made = rig.fleet()
    worker = rig.member(made, host="here")
    assert worker.pane is not None
    worker.pane.screen = ["line one", "line two"]
    relay = relay_of(rig)
    relay.start()
    client = RelayClient(rig.store, rig.clock)
    panes = rig.member_panes(rig.on_host(LAPTOP), client)
    fleet_id = made.fleet.fleet_id

    rig.clock.after(0.01, relay.tick)
    captured = panes.capture(fleet_id, worker.agent_id, 20, ansi=False)
    rig.clock.after(0.01, relay.tick)
    panes.exec(fleet_id, worker.agent_id, "ls")

    assert captured.content == "line one\nline two"
    assert captured.pane_id == worker.pane_id
    assert worker.pane.typed == [text("! ls"), ENTER]
    with rig.store() as uow:
        assert uow.relays.pending("here") == []


def test_a_verb_s_error_on_the_relay_s_host_is_raised_as_it_was_there(rig: PaneRig) -> None:
    made = rig.fleet()
    worker = rig.member(made, command=None, host="here")  # its pane is gone
    relay = relay_of(rig)
    relay.start()
    panes = rig.member_panes(rig.on_host(LAPTOP), RelayClient(rig.store, rig.clock))

    rig.clock.after(0.01, relay.tick)
    with pytest.raises(NotFound) as raised:
        panes.capture(made.fleet.fleet_id, worker.agent_id, 20, ansi=False)

    assert raised.value.message == f"pane {worker.pane_id} not found"


def test_no_live_relay_is_one_error_and_leaves_no_request(rig: PaneRig) -> None:
    made = rig.fleet()
    worker = rig.member(made, host="here")
    panes = rig.member_panes(rig.on_host(LAPTOP), RelayClient(rig.store, rig.clock))

    with pytest.raises(Unavailable) as never:
        panes.ping(made.fleet.fleet_id, worker.agent_id)
    relay_of(rig).start()
    rig.clock.advance(RELAY_ALIVE_SECONDS + 1)
    with pytest.raises(Unavailable) as stale:
        panes.ping(made.fleet.fleet_id, worker.agent_id)

    assert never.value.message == (
        "no relay of host 'here' is alive (never seen); start `cafleet relay` on that host"
    )
    assert stale.value.message.startswith("no relay of host 'here' is alive (last seen ")
    with rig.store() as uow:
        assert uow.relays.pending("here") == []


def test_an_unanswered_request_is_withdrawn_so_a_late_relay_does_not_run_it(
    rig: PaneRig,
) -> None:
    made = rig.fleet()
    worker = rig.member(made, host="here")
    assert worker.pane is not None
    relay = relay_of(rig)
    relay.start()
    client = RelayClient(rig.store, rig.clock, wait=1.0)

    with pytest.raises(Unavailable) as raised:
        client.run("here", made.fleet.fleet_id, worker.agent_id, PaneVerb.PING, "")
    late = relay.tick()

    assert raised.value.message == "the relay of host 'here' did not answer within 1s"
    assert late.answered == ()
    assert worker.pane.typed == []
    with rig.store() as uow:
        [request] = [uow.relays.request(1)]
    assert request is not None and request.state is RequestState.FAILED

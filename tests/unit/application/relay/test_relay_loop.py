"""The relay's loop and its request workers: what it prints, how it waits for work, and a
slow request (a spawn waiting for its agent) holding up nothing else."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest

from cafleet.application.ports.store import WorkSignals
from cafleet.application.relay.service import (
    PolledWork,
    RelayClient,
    RelayDuties,
    RelayService,
    RelayTick,
)
from cafleet.domain.errors import Unavailable
from cafleet.domain.placement import Multiplexer, PaneLocation
from cafleet.domain.relay import PaneVerb, RelayBeat, RelayRequest, RelaySession, RequestState
from cafleet.entrypoints.relay.loop import run_relay
from support.pane_rig import SOCKET, PaneRig

from .test_relay import LAPTOP, Process


class CountedSignals(WorkSignals):
    """Says there is work for the first `told` waits, then waits out the time."""

    def __init__(self, rig: PaneRig, told: int) -> None:
        self._rig = rig
        self.told = told
        self.waits: list[float] = []
        self.closed = False

    def wait(self, seconds: float) -> bool:
        self.waits.append(seconds)
        if self.told > 0:
            self.told -= 1
            return True
        self._rig.clock.sleep(seconds)
        return False

    def close(self) -> None:
        self.closed = True


class CountedRelay(RelayService):
    ticks = 0

    def tick(self) -> RelayTick:
        self.ticks += 1
        return super().tick()


def service(rig: PaneRig, duties: RelayDuties, workers: int = 0) -> CountedRelay:
    return CountedRelay(rig.store, rig.clock, Process(100), "here", duties, workers)


def after_rounds(relay: CountedRelay, rounds: int) -> Callable[[], bool]:
    """A stop signal once the loop ran this many rounds."""
    return lambda: relay.ticks >= rounds


def test_the_loop_says_where_it_runs_answers_and_leaves(rig: PaneRig) -> None:
    made = rig.fleet()
    worker = rig.member(made, host="here")
    pane = PaneLocation(Multiplexer.TMUX, "main", "@0", "%0", SOCKET, None, "here")
    duties = RelayDuties(
        rig.messaging().drain_queued, rig.member_panes().run_relayed, own_pane=lambda: pane
    )
    relay = service(rig, duties)
    with rig.store(write=True) as uow:
        uow.relays.ask(RelayRequest("here", made.fleet.fleet_id, worker.agent_id,
                                    PaneVerb.PING, "", rig.clock.now()))  # fmt: skip
        uow.commit()
    out: list[str] = []
    signals = CountedSignals(rig, told=0)

    code = run_relay(relay, rig.clock, 0.25, signals, should_stop=after_rounds(relay, 3),
                     out=out.append, err=out.append)  # fmt: skip

    assert code == 0
    assert out[0] == "relay started (host 'here', pid 100, in pane %0)"
    assert out[1].endswith(f"ping of agent {worker.agent_id} (request 1): done")
    assert out[-1] == "relay stopped"
    assert signals.closed
    with rig.store() as uow:
        assert uow.relays.beats() == []  # it left


def first_line(rig: PaneRig, duties: RelayDuties) -> str:
    """What a relay with these duties says when it starts."""
    relay = service(rig, duties)
    out: list[str] = []
    run_relay(relay, rig.clock, 0.25, PolledWork(rig.clock), should_stop=after_rounds(relay, 1),
              out=out.append, err=out.append)  # fmt: skip
    return out[0]


def test_outside_a_pane_it_says_members_cannot_be_spawned_here(rig: PaneRig) -> None:
    assert first_line(rig, RelayDuties(lambda recipients: None, lambda request: "")) == (
        "relay started (host 'here', pid 100, in no multiplexer pane: members cannot be"
        " spawned here from other hosts)"
    )


def test_outside_a_pane_it_opens_members_in_a_session_of_its_own(rig: PaneRig) -> None:
    home = PaneLocation(Multiplexer.TMUX, "members", "@0", "%0", "/run/t/cafleet", "id", "here")
    session = RelaySession("members", home, "tmux -L cafleet attach -t members")
    duties = RelayDuties(
        lambda recipients: None, lambda request: "", own_pane=lambda: None,
        own_session=lambda: session,
    )  # fmt: skip
    relay = service(rig, duties)
    out: list[str] = []
    beats: list[RelayBeat] = []

    def stop() -> bool:
        with rig.store() as uow:
            beats.extend(uow.relays.beats())
        return True

    run_relay(relay, rig.clock, 0.25, PolledWork(rig.clock), should_stop=stop,
              out=out.append, err=out.append)  # fmt: skip

    assert out[0] == (
        "relay started (host 'here', pid 100, in no pane: members spawned here from other hosts"
        " open in tmux session 'members' beside pane %0; attach with"
        " `tmux -L cafleet attach -t members`)"
    )
    assert [b.pane for b in beats] == [home]  # other hosts spawn beside it


def test_a_relay_that_cannot_make_a_session_says_why(rig: PaneRig) -> None:
    def no_tmux() -> RelaySession:
        raise Unavailable("tmux binary not found on PATH")

    duties = RelayDuties(lambda recipients: None, lambda request: "", own_session=no_tmux)

    assert first_line(rig, duties) == (
        "relay started (host 'here', pid 100, in no multiplexer pane: members cannot be"
        " spawned here from other hosts (tmux binary not found on PATH))"
    )


def test_a_word_of_work_ends_the_wait_at_once(rig: PaneRig) -> None:
    relay = service(rig, RelayDuties(lambda recipients: None, lambda request: ""))
    signals = CountedSignals(rig, told=2)
    started = rig.clock.now()

    run_relay(relay, rig.clock, 5.0, signals, should_stop=after_rounds(relay, 4),
              out=lambda line: None, err=lambda line: None)  # fmt: skip

    # the first two waits were cut short by a word of work; the third waited its poll out,
    # in steps short enough to notice a stop signal
    assert signals.waits == pytest.approx([0.2, 0.2] + [0.2] * 25)
    assert (rig.clock.now() - started).total_seconds() == pytest.approx(5.0)


def test_a_slow_request_holds_up_neither_deliveries_nor_other_requests(rig: PaneRig) -> None:
    made = rig.fleet()
    worker = rig.member(made, host="here")
    release = threading.Event()
    ran: list[PaneVerb] = []

    def run_verb(request: RelayRequest) -> str:
        ran.append(request.verb)
        if request.verb is PaneVerb.SPAWN:
            assert release.wait(10)
            return "7"
        return "captured"

    drained: list[list[int]] = []
    relay = service(rig, RelayDuties(drained.append, run_verb), workers=2)
    relay.start()
    fleet_id = made.fleet.fleet_id
    with rig.store(write=True) as uow:
        spawn = uow.relays.ask(RelayRequest("here", fleet_id, made.director.agent_id,
                                            PaneVerb.SPAWN, "{}", rig.clock.now()))  # fmt: skip
        uow.commit()
    assert relay.tick().answered == ()

    laptop = rig.messaging(drivers=rig.on_host(LAPTOP))
    laptop.send(fleet_id, made.director.agent_id, worker.agent_id, "meanwhile")
    rig.clock.after(0.01, relay.tick)  # the capture is answered while the spawn still runs
    captured = RelayClient(rig.store, rig.clock).run(
        "here", fleet_id, worker.agent_id, PaneVerb.CAPTURE, "5"
    )

    assert captured == "captured"
    assert drained == [[worker.agent_id]]  # the delivery was handed on in the same round
    assert ran.count(PaneVerb.SPAWN) == 1  # taken once, not again while it runs
    with rig.store() as uow:
        request = uow.relays.request(spawn)
        assert request is not None and request.state is RequestState.PENDING

    release.set()
    relay.stop()  # waits for the request in hand
    with rig.store() as uow:
        request = uow.relays.request(spawn)
    assert request is not None and (request.state, request.answer) == (RequestState.DONE, "7")

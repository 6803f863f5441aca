"""RelayRepository: beats, pane requests and pane reports read back through the port over
every store of the contract."""

from __future__ import annotations

import pytest

from cafleet.application.ports.store import UnitOfWorkFactory
from cafleet.domain.agents.status import AgentStatus, StatusReport
from cafleet.domain.placement import Multiplexer, PaneLocation, PaneState
from cafleet.domain.relay import PaneReport, PaneVerb, RelayBeat, RelayRequest, RequestState

from .records import ODD_STAMP, ODD_TEXT, T0, assert_same, at, stamps


def test_a_beat_is_replaced_per_host_and_left_only_by_its_own_process(
    store: UnitOfWorkFactory,
) -> None:
    with store(write=True) as uow:
        uow.relays.beat(RelayBeat("b-host", 7, T0, T0))
        uow.relays.beat(RelayBeat("a-host", 9, T0, at(1)))
        uow.commit()
    with store(write=True) as uow:
        uow.relays.beat(RelayBeat("b-host", 7, T0, ODD_STAMP))
        uow.relays.leave("a-host", 8)  # another process's beat stays
        uow.commit()

    with store() as uow:
        beats = uow.relays.beats()
    assert [(b.host, b.pid) for b in beats] == [("a-host", 9), ("b-host", 7)]
    assert_same(beats[1], RelayBeat("b-host", 7, T0, ODD_STAMP))

    with store(write=True) as uow:
        uow.relays.leave("a-host", 9)
        uow.commit()
    with store() as uow:
        assert [b.host for b in uow.relays.beats()] == ["b-host"]


@pytest.mark.parametrize("verb", list(PaneVerb))
def test_a_request_round_trips_and_is_pending_for_its_host_until_settled(
    store: UnitOfWorkFactory, verb: PaneVerb
) -> None:
    asked = RelayRequest("b-host", 3, 4, verb, ODD_TEXT, ODD_STAMP)
    with store(write=True) as uow:
        first = uow.relays.ask(asked)
        second = uow.relays.ask(RelayRequest("b-host", 3, 5, PaneVerb.PING, "", at(1)))
        uow.relays.ask(RelayRequest("c-host", 3, 6, PaneVerb.PING, "", at(2)))
        uow.commit()

    with store() as uow:
        got = uow.relays.request(first)
        pending = [r.request_id for r in uow.relays.pending("b-host")]
        assert uow.relays.request(first + 100) is None
    assert_same(got, RelayRequest("b-host", 3, 4, verb, ODD_TEXT, ODD_STAMP, first))
    assert pending == [first, second]

    assert got is not None
    with store(write=True) as uow:
        uow.relays.settle(got.answered(ODD_TEXT, at(5)))
        uow.commit()
    with store() as uow:
        settled = uow.relays.request(first)
        assert [r.request_id for r in uow.relays.pending("b-host")] == [second]
    assert settled is not None
    assert (settled.state, settled.answer, settled.answered_at) == (
        RequestState.DONE,
        ODD_TEXT,
        at(5),
    )


def test_a_failed_request_keeps_its_error_kind(store: UnitOfWorkFactory) -> None:
    with store(write=True) as uow:
        request_id = uow.relays.ask(RelayRequest("b-host", 1, 2, PaneVerb.EXEC, "ls", T0))
        uow.commit()
    with store(write=True) as uow:
        request = uow.relays.request(request_id)
        assert request is not None
        uow.relays.settle(request.failed("not_found", "pane %9 not found", at(1)))
        uow.commit()

    with store() as uow:
        failed = uow.relays.request(request_id)
    assert failed is not None
    assert (failed.state, failed.error_kind, failed.answer) == (
        RequestState.FAILED,
        "not_found",
        "pane %9 not found",
    )


def test_a_beat_keeps_the_relay_s_pane_and_a_beat_without_one_forgets_it(
    store: UnitOfWorkFactory,
) -> None:
    pane = PaneLocation(Multiplexer.HERDR, "w1", "t2", "w1:p3", "/run/h.sock", "9:42", "b-host")
    with store(write=True) as uow:
        uow.relays.beat(RelayBeat("b-host", 7, T0, T0, pane))
        uow.relays.beat(RelayBeat("a-host", 9, T0, T0))
        uow.commit()
    with store() as uow:
        a_host, b_host = uow.relays.beats()
    assert (a_host.pane, b_host.pane) == (None, pane)

    with store(write=True) as uow:
        uow.relays.beat(RelayBeat("b-host", 7, T0, at(1)))
        uow.commit()
    with store() as uow:
        assert [b.pane for b in uow.relays.beats()] == [None, None]


def test_a_host_s_reports_replace_its_last_and_leave_other_hosts_alone(
    store: UnitOfWorkFactory,
) -> None:
    working = StatusReport(AgentStatus.WORKING, ODD_STAMP)
    first = [
        PaneReport(3, "b-host", PaneState.RUNNING, working, "blocked"),
        PaneReport(4, "b-host", None, StatusReport.unknown()),
    ]
    elsewhere = PaneReport(5, "c-host", PaneState.GONE, StatusReport(AgentStatus.EXITED))
    with store(write=True) as uow:
        uow.relays.report("b-host", first)
        uow.relays.report("c-host", [elsewhere])
        uow.commit()
    with store() as uow:
        assert uow.relays.reports([3, 4, 5, 6]) == {3: first[0], 4: first[1], 5: elsewhere}
        assert stamps(uow.relays.reports([3])[3].status) == {"since": ODD_STAMP.isoformat()}

    later = PaneReport(4, "b-host", PaneState.STARTING, StatusReport(AgentStatus.STARTING, T0))
    with store(write=True) as uow:
        uow.relays.report("b-host", [later])
        uow.commit()
    with store() as uow:
        assert uow.relays.reports([3, 4, 5]) == {4: later, 5: elsewhere}
        assert uow.relays.reports([]) == {}


def test_a_wake_inside_a_unit_of_work_is_accepted_by_every_store(
    store: UnitOfWorkFactory,
) -> None:
    with store(write=True) as uow:
        uow.relays.ask(RelayRequest("b-host", 1, 2, PaneVerb.PING, "", T0))
        uow.relays.wake("b-host")
        uow.commit()
    with store() as uow:
        assert [r.agent_id for r in uow.relays.pending("b-host")] == [2]

"""RelayRepository: beats and pane requests read back through the port over every store of
the contract."""

from __future__ import annotations

import pytest

from cafleet.application.ports import UnitOfWorkFactory
from cafleet.domain.relay import PaneVerb, RelayBeat, RelayRequest, RequestState

from .records import ODD_STAMP, ODD_TEXT, T0, assert_same, at


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

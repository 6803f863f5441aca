"""Gathering: the threads of one broadcast meet, and the last to arrive runs one batch."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import pytest

from cafleet.application.panes.gathering import Gathering, Gatherings


def run_parties(gathering: Gathering[int, int], work: list[object]) -> dict[object, object]:
    """One thread per item: an int is submitted, None leaves at once."""
    results: dict[object, object] = {}

    def party(item: object) -> None:
        try:
            if isinstance(item, int):
                results[item] = gathering.submit(item, doubled)
            else:
                gathering.leave()
        except RuntimeError as exc:
            results[item] = str(exc)

    threads = [threading.Thread(target=party, args=(item,)) for item in work]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=5)
    assert not any(thread.is_alive() for thread in threads)
    return results


batches: list[list[int]] = []


def doubled(requests: Sequence[int]) -> list[int]:
    batches.append(sorted(requests))
    if -1 in requests:
        raise RuntimeError("batch broke")
    return [2 * r for r in requests]


@pytest.fixture(autouse=True)
def fresh_batches() -> None:
    batches.clear()


def test_every_waiting_party_is_served_by_one_batch_once_the_others_left() -> None:
    results = run_parties(Gathering(5), [1, 2, 3, None, None])

    assert results == {1: 2, 2: 4, 3: 6}
    assert batches == [[1, 2, 3]]


def test_an_error_in_the_batch_reaches_every_waiter() -> None:
    results = run_parties(Gathering(2), [-1, 4])

    assert results == {-1: "batch broke", 4: "batch broke"}


def test_a_thread_outside_any_gathering_has_none() -> None:
    gatherings = Gatherings()
    gathering: Gathering[int, int] = Gathering(1)

    with gatherings.member(gathering):
        inside = gatherings.current()
    assert inside is gathering
    assert gatherings.current() is None
    assert gathering.parties == 0

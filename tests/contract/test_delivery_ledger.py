"""The deliveries ledger's queries and the broadcast copies, the same over every store of
the contract (the `store` fixture)."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest

from cafleet.application.ports.store import UnitOfWork, UnitOfWorkFactory
from cafleet.domain.delivery import Channel, Delivery, DeliveryState
from cafleet.domain.fleet import Fleet
from cafleet.domain.message import Message, broadcast_summary, unicast

from .records import ODD_STAMP, ODD_TEXT, T0, agents, assert_same, at, fleet, stamps
from .stores import REFUSALS


def test_announced_untaken_lists_recent_sent_unread_unconfirmed_messages(
    store: UnitOfWorkFactory,
) -> None:
    with store(write=True) as uow:
        fleet = uow.fleets.add(Fleet(0, "f", T0))
        sender, member, other = agents(uow, fleet, "director", "member", "other")

        def sent(text: str, at: float, to: int = member, **row: object) -> int:
            message: Message = unicast(sender, to, text, T0 + timedelta(seconds=at))
            task = uow.messages.add(message)
            when = T0 + timedelta(seconds=at)
            fields = {"state": DeliveryState.SENT, "attempted_at": when, **row}
            uow.deliveries.add(Delivery(task, to, created_at=when, **fields))  # type: ignore[arg-type]
            return task

        old = sent("before the window", 0)
        recent = sent("recent", 100)
        confirmed = sent("taken in", 101, confirmed_at=T0 + timedelta(seconds=102))
        skipped = sent("not announced", 102, state=DeliveryState.SKIPPED)
        read = sent("read already", 103)
        elsewhere = sent("someone else's", 104, to=other)
        latest = sent("latest", 105)
        uow.commit()
    with store(write=True) as uow:
        message = uow.messages.get(read)
        uow.messages.save(message.ack(member, T0 + timedelta(seconds=110)))
        uow.commit()

    with store() as uow:
        found = uow.deliveries.announced_untaken(member, T0 + timedelta(seconds=50))

    assert found == [recent, latest]
    assert not {old, confirmed, skipped, read, elsewhere} & set(found)


def test_stranded_names_recipients_with_rows_pending_since_before_the_limit(
    store: UnitOfWorkFactory,
) -> None:
    with store(write=True) as uow:
        fleet = uow.fleets.add(Fleet(0, "f", T0))
        sender, old, young, settled, unasked = agents(uow, fleet, "d", "o", "y", "s", "u")

        def row(to: int, at: float, state: DeliveryState = DeliveryState.PENDING) -> None:
            when = T0 + timedelta(seconds=at)
            task = uow.messages.add(unicast(sender, to, "text", when))
            uow.deliveries.add(Delivery(task, to, state, created_at=when))

        row(old, 0)
        row(old, 1)
        row(young, 30)
        row(settled, 0, DeliveryState.SENT)
        row(unasked, 0)
        uow.commit()

    with store() as uow:
        found = uow.deliveries.stranded([young, settled, old], T0 + timedelta(seconds=20))

    assert found == [old]


def test_broadcast_copies_are_the_summarys_own_unicast_rows_in_id_order(
    store: UnitOfWorkFactory,
) -> None:
    with store(write=True) as uow:
        fleet = uow.fleets.add(Fleet(0, "f", T0))
        sender, first, second = agents(uow, fleet, "director", "first", "second")

        def broadcast(text: str, *recipients: int) -> tuple[Message, list[int]]:
            summary_id = uow.messages.add(broadcast_summary(sender, len(recipients), T0))
            copies = [
                uow.messages.add(unicast(sender, r, text, T0, summary_id)) for r in recipients
            ]
            summary = uow.messages.get(summary_id)
            assert summary is not None
            return summary, copies

        summary, copies = broadcast("all hands", first, second)
        other, _ = broadcast("later", first)
        uow.messages.add(unicast(sender, first, "plain", T0))
        uow.commit()

    with store() as uow:
        found = uow.messages.broadcast_copies(summary)
        later = uow.messages.broadcast_copies(other)

    assert [(m.task_id, m.to_agent_id, m.text) for m in found] == [
        (copies[0], first, "all hands"),
        (copies[1], second, "all hands"),
    ]
    assert [m.text for m in later] == ["later"]


def message_to(uow: UnitOfWork, to: int, sender: int | None = None) -> int:
    return uow.messages.add(unicast(to if sender is None else sender, to, "text", T0))


def test_a_delivery_round_trips_every_field_and_get_is_the_latest_attempt(
    store: UnitOfWorkFactory,
) -> None:
    with store(write=True) as uow:
        sender, to = agents(uow, fleet(uow), "sender", "to")
        task = message_to(uow, to, sender)
        first = Delivery(task, to, DeliveryState.PENDING, T0)
        uow.deliveries.add(first)
        retried = Delivery(
            task,
            to,
            DeliveryState.FAILED,
            ODD_STAMP,
            transport="herdr",
            pane_id="p_1",
            attempted_at=ODD_STAMP.replace(microsecond=7),
            error=ODD_TEXT,
            attempt=2,
            channel=Channel.HERDR_PROMPT,
            confirmed_at=ODD_STAMP.replace(microsecond=999999),
        )
        uow.deliveries.add(retried)
        uow.commit()

    with store() as uow:
        latest = uow.deliveries.get(task, to)
        rows = uow.deliveries.for_task(task)
        assert uow.deliveries.get(task, sender) is None
        assert uow.deliveries.get(task + 1, to) is None

    assert_same(latest, retried)
    assert rows == [first, retried]


def test_save_settles_one_attempt_and_leaves_the_others(store: UnitOfWorkFactory) -> None:
    with store(write=True) as uow:
        sender, to = agents(uow, fleet(uow), "sender", "to")
        task = message_to(uow, to, sender)
        first = Delivery(task, to, DeliveryState.SKIPPED, T0, error="self")
        second = Delivery(task, to, DeliveryState.PENDING, T0, attempt=2)
        uow.deliveries.add(first)
        uow.deliveries.add(second)
        uow.commit()
    with store(write=True) as uow:
        settled = replace(second, state=DeliveryState.SENT, transport="tmux", attempted_at=at(1))
        uow.deliveries.save(settled)
        uow.deliveries.save(replace(second, attempt=3))  # an attempt never added: no row
        uow.commit()

    with store() as uow:
        assert uow.deliveries.for_task(task) == [first, settled]


def test_a_second_row_for_one_attempt_is_refused(store: UnitOfWorkFactory) -> None:
    with store(write=True) as uow:
        (to,) = agents(uow, fleet(uow), "to")
        task = message_to(uow, to)
        uow.deliveries.add(Delivery(task, to, DeliveryState.SENT, T0))
        uow.commit()

    with pytest.raises(REFUSALS), store(write=True) as uow:
        uow.deliveries.add(Delivery(task, to, DeliveryState.FAILED, T0))
        uow.commit()

    with store() as uow:
        assert [d.state for d in uow.deliveries.for_task(task)] == [DeliveryState.SENT]


def test_for_task_orders_by_recipient_then_attempt(store: UnitOfWorkFactory) -> None:
    with store(write=True) as uow:
        sender, low, high = agents(uow, fleet(uow), "sender", "low", "high")
        task = message_to(uow, low, sender)
        for to, attempt in [(high, 2), (low, 1), (high, 1), (low, 2)]:
            uow.deliveries.add(Delivery(task, to, DeliveryState.SENT, T0, attempt=attempt))
        uow.deliveries.add(Delivery(message_to(uow, low, sender), low, DeliveryState.SENT, T0))
        uow.commit()

    with store() as uow:
        found = [(d.recipient_agent_id, d.attempt) for d in uow.deliveries.for_task(task)]
        assert uow.deliveries.for_task(task + 99) == []

    assert found == [(low, 1), (low, 2), (high, 1), (high, 2)]


def test_for_tasks_over_many_ids_returns_each_row_once_earlier_attempts_first(
    store: UnitOfWorkFactory,
) -> None:
    count = 1234  # more ids than one query may bind at once
    with store(write=True) as uow:
        sender, to = agents(uow, fleet(uow), "sender", "to")
        tasks = [message_to(uow, to, sender) for _ in range(count)]
        for n, task in enumerate(tasks):
            for attempt in range(1, n % 3 + 2):
                uow.deliveries.add(Delivery(task, to, DeliveryState.SKIPPED, T0, attempt=attempt))
        unasked = message_to(uow, to, sender)
        uow.deliveries.add(Delivery(unasked, to, DeliveryState.SENT, T0))
        uow.commit()

    asked = [tasks[0], *tasks[::-1]]  # any order; an id asked twice still gives its rows once
    with store() as uow:
        found = uow.deliveries.for_tasks(asked)
        assert uow.deliveries.for_tasks([]) == []

    keys = [(d.task_id, d.attempt) for d in found]
    assert sorted(keys) == [(t, a) for n, t in enumerate(tasks) for a in range(1, n % 3 + 2)]
    assert [d.attempt for d in found] == sorted(d.attempt for d in found)


def test_confirm_marks_sent_unconfirmed_attempts_to_the_recipient_once(
    store: UnitOfWorkFactory,
) -> None:
    with store(write=True) as uow:
        sender, me, other = agents(uow, fleet(uow), "sender", "me", "other")
        sent, skipped, already, theirs, unasked = (message_to(uow, me, sender) for _ in range(5))
        for task, to, state, confirmed in [
            (sent, me, DeliveryState.SENT, None),
            (skipped, me, DeliveryState.SKIPPED, None),
            (already, me, DeliveryState.SENT, at(1)),
            (theirs, other, DeliveryState.SENT, None),
            (unasked, me, DeliveryState.SENT, None),
        ]:
            uow.deliveries.add(Delivery(task, to, state, T0, confirmed_at=confirmed))
        uow.commit()
    with store(write=True) as uow:
        changed = uow.deliveries.confirm(me, [sent, skipped, already, theirs], ODD_STAMP)
        none_asked = uow.deliveries.confirm(me, [], ODD_STAMP)
        uow.commit()
    with store(write=True) as uow:
        again = uow.deliveries.confirm(me, [sent], at(9))
        uow.commit()

    with store() as uow:
        confirmed = {t: uow.deliveries.get(t, me) for t in (sent, skipped, already, unasked)}
        theirs_row = uow.deliveries.get(theirs, other)

    assert (changed, none_asked, again) == (1, 0, 0)
    assert {t: d.confirmed_at for t, d in confirmed.items() if d} == {
        sent: ODD_STAMP,
        skipped: None,
        already: at(1),
        unasked: None,
    }
    assert stamps(confirmed[sent])["confirmed_at"] == ODD_STAMP.isoformat()
    assert theirs_row is not None and theirs_row.confirmed_at is None


def test_count_pending_since_counts_pending_rows_created_before_the_limit(
    store: UnitOfWorkFactory,
) -> None:
    with store(write=True) as uow:
        (to,) = agents(uow, fleet(uow), "to")
        for seconds, state in [
            (0, DeliveryState.PENDING),
            (1, DeliveryState.PENDING),
            (2, DeliveryState.SENT),
            (10, DeliveryState.PENDING),  # exactly at the limit: not before it
            (11, DeliveryState.PENDING),
        ]:
            uow.deliveries.add(Delivery(message_to(uow, to), to, state, at(seconds)))
        uow.commit()

    with store() as uow:
        assert uow.deliveries.count_pending_since(at(10)) == 2
        assert uow.deliveries.count_pending_since(at(0)) == 0


def test_queued_for_is_the_recipients_pending_rows_in_task_order(
    store: UnitOfWorkFactory,
) -> None:
    with store(write=True) as uow:
        sender, me, other = agents(uow, fleet(uow), "sender", "me", "other")
        first, second, settled = (message_to(uow, me, sender) for _ in range(3))
        theirs = message_to(uow, other, sender)
        uow.deliveries.add(Delivery(second, me, DeliveryState.PENDING, at(0), attempt=2))
        uow.deliveries.add(Delivery(first, me, DeliveryState.PENDING, at(5), attempted_at=at(6)))
        uow.deliveries.add(Delivery(second, me, DeliveryState.FAILED, at(0)))
        uow.deliveries.add(Delivery(settled, me, DeliveryState.SENT, at(0)))
        uow.deliveries.add(Delivery(theirs, other, DeliveryState.PENDING, at(0)))
        uow.commit()

    with store() as uow:
        queue = [(d.task_id, d.attempt) for d in uow.deliveries.queued_for(me)]
        assert uow.deliveries.queued_for(sender) == []

    assert queue == [(first, 1), (second, 2)]


def test_stranded_of_no_recipients_is_empty(store: UnitOfWorkFactory) -> None:
    with store(write=True) as uow:
        (to,) = agents(uow, fleet(uow), "to")
        uow.deliveries.add(Delivery(message_to(uow, to), to, DeliveryState.PENDING, T0))
        uow.commit()

    with store() as uow:
        assert uow.deliveries.stranded([], at(60)) == []
        assert uow.deliveries.stranded(iter([to]), at(60)) == [to]


def test_announced_untaken_counts_only_messages_the_recipient_owns(
    store: UnitOfWorkFactory,
) -> None:
    with store(write=True) as uow:
        sender, me, other = agents(uow, fleet(uow), "sender", "me", "other")
        mine = message_to(uow, me, sender)
        not_mine = message_to(uow, other, sender)
        for task in (mine, not_mine):
            uow.deliveries.add(Delivery(task, me, DeliveryState.SENT, T0, attempted_at=at(1)))
        uow.commit()

    with store() as uow:
        assert uow.deliveries.announced_untaken(me, T0) == [mine]

"""The deliveries ledger's queries and the broadcast copies, the same over every store of
the contract (the `store` fixture)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from cafleet.application.ports import UnitOfWorkFactory
from cafleet.domain.agent import Agent
from cafleet.domain.delivery import Delivery, DeliveryState
from cafleet.domain.fleet import Fleet
from cafleet.domain.message import Message, broadcast_summary, unicast

T0 = datetime(2026, 12, 2, 8, 0, tzinfo=UTC)


def agents(uow, fleet_id: int, *names: str) -> list[int]:  # type: ignore[no-untyped-def]
    return [uow.agents.add(Agent(0, fleet_id, n, "d", T0)) for n in names]


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

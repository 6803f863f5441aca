"""MessageRepository: the same end state read back through the port over every store of the
contract (broadcast copies have their cases in test_delivery_ledger.py)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from cafleet.application.ports.store import (
    Activity,
    ConversationMark,
    UnitOfWork,
    UnitOfWorkFactory,
)
from cafleet.domain.delivery import Delivery, DeliveryState
from cafleet.domain.message import Message, MessageState, MessageType, broadcast_summary, unicast

from .records import ODD_STAMP, ODD_TEXT, agents, assert_same, at, fleet, stamps


def send(uow: UnitOfWork, sender: int, to: int, seconds: float, text: str = "hi") -> int:
    return uow.messages.add(unicast(sender, to, text, at(seconds)))


def acked(uow: UnitOfWork, task_id: int, seconds: float) -> None:
    message = uow.messages.get(task_id)
    assert message is not None
    uow.messages.save(message.ack(message.context_id, at(seconds)))


def open_summary(uow: UnitOfWork, sender: int, seconds: float) -> int:
    """A broadcast summary left open: stores never list one, whatever its state."""
    summary_id = uow.messages.add(broadcast_summary(sender, 2, at(seconds)))
    stored = uow.messages.get(summary_id)
    assert stored is not None
    uow.messages.save(replace(stored, state=MessageState.INPUT_REQUIRED))
    return summary_id


def two_fleets(uow: UnitOfWork) -> tuple[int, int, tuple[int, int, int]]:
    """Our fleet with agents a and b, and another fleet with one stranger."""
    mine, theirs = fleet(uow, "mine"), fleet(uow, "theirs")
    a, b = agents(uow, mine, "a", "b")
    (stranger,) = agents(uow, theirs, "stranger")
    return mine, theirs, (a, b, stranger)


def test_message_ids_increase_and_a_missing_message_is_none(store: UnitOfWorkFactory) -> None:
    with store(write=True) as uow:
        sender, to = agents(uow, fleet(uow), "s", "t")
        ids = [send(uow, sender, to, n) for n in range(3)]
        uow.commit()
    with store(write=True) as uow:
        later = send(uow, sender, to, 9)
        uow.commit()

    assert ids[0] < ids[1] < ids[2] < later
    with store() as uow:
        assert uow.messages.get(later + 1) is None


@pytest.mark.parametrize("verified", [True, False])
def test_a_unicast_round_trips_every_field(store: UnitOfWorkFactory, verified: bool) -> None:
    with store(write=True) as uow:
        sender, to = agents(uow, fleet(uow), "s", "t")
        origin = uow.messages.add(broadcast_summary(sender, 1, ODD_STAMP))
        message = unicast(sender, to, ODD_TEXT, ODD_STAMP, origin, sender_verified=verified)
        task_id = uow.messages.add(message)
        uow.commit()

    with store() as uow:
        got = uow.messages.get(task_id)

    assert got == replace(message, task_id=task_id, thread_id=origin)  # a copy: its broadcast's
    assert stamps(got) == stamps(message)


def test_a_summary_points_at_itself_and_save_stores_a_state_change(
    store: UnitOfWorkFactory,
) -> None:
    with store(write=True) as uow:
        sender, to = agents(uow, fleet(uow), "s", "t")
        summary_id = uow.messages.add(broadcast_summary(sender, 3, at(0), sender_verified=True))
        task_id = send(uow, sender, to, 1)
        uow.commit()
    with store(write=True) as uow:
        message = uow.messages.get(task_id)
        assert message is not None
        canceled = message.cancel(sender, ODD_STAMP)
        uow.messages.save(canceled)
        uow.commit()

    with store() as uow:
        summary = uow.messages.get(summary_id)
        got = uow.messages.get(task_id)

    assert summary == Message(
        summary_id,
        sender,
        sender,
        None,
        MessageType.BROADCAST_SUMMARY,
        at(0),
        MessageState.COMPLETED,
        at(0),
        summary_id,
        "Broadcast sent to 3 recipients",
        True,
        thread_id=summary_id,  # a broadcast starts its own thread
    )
    assert_same(got, canceled)


def test_pending_for_lists_open_owned_messages_newest_change_first_ties_by_higher_id(
    store: UnitOfWorkFactory,
) -> None:
    with store(write=True) as uow:
        sender, me, other = agents(uow, fleet(uow), "s", "me", "other")
        old = send(uow, sender, me, 0)
        tie_low = send(uow, sender, me, 5)
        newest = send(uow, sender, me, 9)
        tie_high = send(uow, sender, me, 5)
        done = send(uow, sender, me, 20)
        acked(uow, done, 21)
        send(uow, sender, other, 30)
        open_summary(uow, me, 40)
        uow.commit()

    with store() as uow:
        every = [m.task_id for m in uow.messages.pending_for(me)]
        first_two = [m.task_id for m in uow.messages.pending_for(me, limit=2)]
        nothing = uow.messages.pending_for(sender)

    assert every == [newest, tie_high, tie_low, old]
    assert first_two == [newest, tie_high]
    assert nothing == []


def test_pending_counts_count_open_owned_messages_summaries_excluded(
    store: UnitOfWorkFactory,
) -> None:
    with store(write=True) as uow:
        sender, busy, done, unasked = agents(uow, fleet(uow), "s", "busy", "done", "unasked")
        send(uow, sender, busy, 0)
        send(uow, sender, busy, 1)
        acked(uow, send(uow, sender, done, 2), 3)
        send(uow, sender, unasked, 4)
        open_summary(uow, sender, 5)
        uow.commit()

    with store() as uow:
        counts = uow.messages.pending_counts([busy, done, sender])
        none_asked = uow.messages.pending_counts([])

    assert counts == {busy: 2}
    assert none_asked == {}


def test_activity_is_the_newest_send_receipt_and_ack_per_agent_summaries_excluded(
    store: UnitOfWorkFactory,
) -> None:
    with store(write=True) as uow:
        a, b, quiet = agents(uow, fleet(uow), "a", "b", "quiet")
        send(uow, a, b, 1)
        first = send(uow, b, a, 2)
        send(uow, a, b, 3)
        acked(uow, first, 4)
        acked(uow, send(uow, b, a, 0), 2.5)  # an older message acked later: acks go by ack time
        open_summary(uow, a, 50)
        uow.commit()

    with store() as uow:
        found = uow.messages.activity([a, b, quiet])
        none_asked = uow.messages.activity([])

    assert found == {
        a: Activity(last_sent=at(3), last_recv=at(2), last_ack=at(4)),
        b: Activity(last_sent=at(2), last_recv=at(3), last_ack=None),
        quiet: Activity(),
    }
    assert none_asked == {}


def test_timeline_lists_what_the_fleets_agents_sent_newest_first_bounded_by_id(
    store: UnitOfWorkFactory,
) -> None:
    with store(write=True) as uow:
        mine, theirs, (a, b, stranger) = two_fleets(uow)
        first = send(uow, a, b, 0)
        tie_low = send(uow, b, a, 5)
        late = send(uow, a, stranger, 9)  # to another fleet: still sent by our agent
        tie_high = send(uow, a, b, 5)
        send(uow, stranger, a, 7)  # received from outside: not ours to list
        open_summary(uow, a, 8)
        uow.commit()

    with store() as uow:
        every = [m.task_id for m in uow.messages.timeline(mine, 10)]
        top = [m.task_id for m in uow.messages.timeline(mine, 2)]
        below = [m.task_id for m in uow.messages.timeline(mine, 10, before=tie_high)]
        empty = uow.messages.timeline(theirs + 1, 10)

    assert every == [late, tie_high, tie_low, first]
    assert top == [late, tie_high]
    assert below == [late, tie_low, first]  # `before` bounds the id, whatever the time
    assert empty == []


def test_owned_by_and_sent_by_are_one_agents_inbox_and_outbox_newest_first(
    store: UnitOfWorkFactory,
) -> None:
    with store(write=True) as uow:
        me, peer = agents(uow, fleet(uow), "me", "peer")
        inbox = [send(uow, peer, me, n) for n in range(4)]
        acked(uow, inbox[1], 10)
        outbox = [send(uow, me, peer, 20 + n) for n in range(3)]
        open_summary(uow, me, 40)
        uow.commit()

    with store() as uow:
        owned = [m.task_id for m in uow.messages.owned_by(me, 10)]
        owned_page = [m.task_id for m in uow.messages.owned_by(me, 2, before=inbox[3])]
        sent = [m.task_id for m in uow.messages.sent_by(me, 10)]
        sent_page = [m.task_id for m in uow.messages.sent_by(me, 1, before=outbox[2])]
        none_before_first = uow.messages.owned_by(me, 10, before=inbox[0])

    assert owned == inbox[::-1]
    assert owned_page == [inbox[2], inbox[1]]
    assert sent == outbox[::-1]
    assert sent_page == [outbox[1]]
    assert none_before_first == []


def test_broadcast_copies_leave_out_rows_of_another_sender(store: UnitOfWorkFactory) -> None:
    with store(write=True) as uow:
        sender, other, to = agents(uow, fleet(uow), "sender", "other", "to")
        summary_id = uow.messages.add(broadcast_summary(sender, 1, at(0)))
        copy = uow.messages.add(unicast(sender, to, "copy", at(0), summary_id))
        uow.messages.add(unicast(other, to, "claims the origin", at(0), summary_id))
        uow.commit()

    with store() as uow:
        summary = uow.messages.get(summary_id)
        assert summary is not None
        found = [m.task_id for m in uow.messages.broadcast_copies(summary)]

    assert found == [copy]


def test_a_message_starts_its_thread_a_reply_and_a_broadcast_s_copies_join_theirs(
    store: UnitOfWorkFactory,
) -> None:
    with store(write=True) as uow:
        a, b, c = agents(uow, fleet(uow), "a", "b", "c")
        root = uow.messages.add(unicast(a, b, "question", at(0)))
        parent = uow.messages.get(root)
        assert parent is not None
        reply = uow.messages.add(unicast(b, a, "answer", at(1), answers=parent))
        summary = uow.messages.add(broadcast_summary(a, 2, at(2)))
        copies = [uow.messages.add(unicast(a, r, "to all", at(2), summary)) for r in (b, c)]
        elsewhere = uow.messages.add(unicast(c, a, "unrelated", at(3)))
        uow.commit()

    with store() as uow:
        answered = uow.messages.get(reply)
        thread = [m.task_id for m in uow.messages.thread(root)]
        broadcast = [m.task_id for m in uow.messages.thread(summary)]
        alone = [m.task_id for m in uow.messages.thread(elsewhere)]
        assert uow.messages.thread(elsewhere + 100) == []

    assert answered is not None
    assert (answered.in_reply_to, answered.thread_id) == (root, root)
    assert thread == [root, reply]
    assert broadcast == [summary, *copies]
    assert alone == [elsewhere]


def test_conversation_mark_of_a_fleet_without_messages_is_the_empty_mark(
    store: UnitOfWorkFactory,
) -> None:
    with store(write=True) as uow:
        quiet = fleet(uow)
        agents(uow, quiet, "alone")
        uow.commit()

    with store() as uow:
        assert uow.messages.conversation_mark(quiet) == ConversationMark()
        assert uow.messages.conversation_mark(quiet + 1) == ConversationMark()


def test_conversation_mark_follows_owned_messages_and_their_deliveries(
    store: UnitOfWorkFactory,
) -> None:
    with store(write=True) as uow:
        mine, _, (a, b, stranger) = two_fleets(uow)
        first = send(uow, a, b, 0)
        second = send(uow, stranger, a, 1)  # owned by our agent, sent from outside
        acked(uow, first, 6)
        summary = uow.messages.add(broadcast_summary(a, 1, at(7)))  # owned by its sender
        elsewhere = send(uow, a, stranger, 30)  # owned by the other fleet
        for task, to, state, confirmed in [
            (first, b, DeliveryState.SENT, True),
            (second, a, DeliveryState.SKIPPED, False),
            (elsewhere, stranger, DeliveryState.SENT, True),
        ]:
            uow.deliveries.add(
                Delivery(
                    task,
                    to,
                    state,
                    at(0),
                    attempted_at=at(1),
                    confirmed_at=at(2) if confirmed else None,
                )
            )
        uow.deliveries.add(Delivery(summary, a, DeliveryState.PENDING, at(7)))
        uow.commit()

    with store() as uow:
        mark = uow.messages.conversation_mark(mine)

    assert mark == ConversationMark(
        last_task_id=summary,
        last_state_change=at(7),
        open_messages=1,
        settled_deliveries=2,
        confirmed_deliveries=1,
    )


def test_saving_a_message_that_was_never_added_stores_nothing(store: UnitOfWorkFactory) -> None:
    with store(write=True) as uow:
        sender, to = agents(uow, fleet(uow), "s", "t")
        uow.messages.save(replace(unicast(sender, to, "ghost", at(0)), task_id=99))
        uow.commit()

    with store() as uow:
        assert uow.messages.get(99) is None
        assert uow.messages.owned_by(to, 10) == []

"""Threads on the fakes: a reply joins the thread of what it answers, goes to the other party
unless told otherwise, is announced as a reply, and a reply to anything the sender could not
see is refused in an unknown id's words; `thread` lists a thread in order."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from cafleet.adapters.fake.notifier import RecordingNotifier
from cafleet.application.messaging.service import MessagingService
from cafleet.domain.errors import CafleetError, ErrorKind, NotFound

pytestmark = pytest.mark.usefixtures("world")


@dataclass
class Team:
    fleet_id: int
    director: int
    admin: int
    coder: int
    tester: int


@pytest.fixture
def team(world) -> Team:
    made = world.fleet("alpha")
    return Team(
        made.fleet.fleet_id,
        made.director.agent_id,
        made.administrator.agent_id,
        world.member(made, "coder", pane_id="%1"),
        world.member(made, "tester", pane_id="%2"),
    )


def refused(call, *args, **kwargs) -> CafleetError:
    with pytest.raises(CafleetError) as raised:
        call(*args, **kwargs)
    return raised.value


def test_a_reply_joins_the_thread_and_answers_the_other_party_by_default(
    messaging: MessagingService, team: Team, notifier: RecordingNotifier
) -> None:
    question = messaging.send(team.fleet_id, team.director, team.coder, "which branch?")
    answer = messaging.send(
        team.fleet_id, team.coder, None, "main", reply_to=question.message.task_id
    )
    again = messaging.send(
        team.fleet_id, team.director, None, "thanks", reply_to=answer.message.task_id
    )

    root = question.message.task_id
    assert question.message.thread_id == root and question.message.in_reply_to is None
    assert (answer.message.to_agent_id, answer.message.in_reply_to) == (team.director, root)
    assert (again.message.to_agent_id, again.message.in_reply_to) == (
        team.coder, answer.message.task_id,
    )  # fmt: skip
    assert answer.message.thread_id == again.message.thread_id == root
    assert notifier.announced[1].preview(200).split("\n")[1] == f"(reply to {root}) main"


def test_a_reply_may_bring_in_someone_else(messaging: MessagingService, team: Team) -> None:
    question = messaging.send(team.fleet_id, team.director, team.coder, "ready?")

    loop_in = messaging.send(
        team.fleet_id, team.coder, team.tester, "please check", reply_to=question.message.task_id
    )

    assert loop_in.message.to_agent_id == team.tester
    assert loop_in.message.thread_id == question.message.task_id


def test_a_reply_to_a_broadcast_joins_the_broadcast_s_thread(
    messaging: MessagingService, team: Team
) -> None:
    made = messaging.broadcast(team.fleet_id, team.director, "standup")
    summary = made.summary.task_id
    coders_copy = next(d.task_id for d in made.deliveries if d.recipient_agent_id == team.coder)

    by_copy = messaging.send(team.fleet_id, team.coder, None, "done", reply_to=coders_copy)
    by_summary = messaging.send(team.fleet_id, team.tester, team.director, "me too",
                                reply_to=summary)  # fmt: skip

    assert by_copy.message.to_agent_id == team.director  # the broadcaster
    assert by_copy.message.thread_id == by_summary.message.thread_id == summary
    shown = messaging.thread(team.fleet_id, team.director, summary)
    # the broadcast once (its first copy: the text), then the two replies
    assert [m.text for m in shown.messages] == ["standup", "done", "me too"]
    assert shown.thread_id == summary


def test_the_broadcaster_answering_its_own_broadcast_must_name_whom(
    messaging: MessagingService, team: Team
) -> None:
    made = messaging.broadcast(team.fleet_id, team.director, "standup")

    error = refused(messaging.send, team.fleet_id, team.director, None, "and?",
                    reply_to=made.summary.task_id)  # fmt: skip

    assert error.kind is ErrorKind.USAGE
    assert "--to" in error.message


def test_replies_to_what_the_sender_could_not_see_are_refused_as_unknown_ids(
    messaging: MessagingService, team: Team, world
) -> None:
    private = messaging.send(team.fleet_id, team.director, team.coder, "between us")
    made = messaging.broadcast(team.fleet_id, team.coder, "coder's news")
    other = world.fleet("beta")
    elsewhere = messaging.send(
        other.fleet.fleet_id, other.director.agent_id, other.administrator.agent_id, "x"
    )

    cases = [
        (team.tester, private.message.task_id),  # neither sent nor received it
        (team.admin, made.summary.task_id),  # a broadcast it did not receive
        (team.tester, elsewhere.message.task_id),  # another fleet's
        (team.tester, 9999),  # unknown
    ]
    for sender, task in cases:
        error = refused(messaging.send, team.fleet_id, sender, team.director, "re", reply_to=task)
        assert isinstance(error, NotFound)
        assert error.message == f"Task {task} not found"


def test_thread_lists_every_message_of_the_thread_from_any_of_them(
    messaging: MessagingService, team: Team
) -> None:
    first = messaging.send(team.fleet_id, team.director, team.coder, "one").message
    second = messaging.send(team.fleet_id, team.coder, None, "two", reply_to=first.task_id).message
    messaging.send(team.fleet_id, team.director, team.tester, "unrelated")
    third = messaging.send(team.fleet_id, team.director, None, "three",
                           reply_to=second.task_id).message  # fmt: skip

    from_the_end = messaging.thread(team.fleet_id, team.tester, third.task_id)
    from_the_start = messaging.thread(team.fleet_id, team.director, first.task_id)

    assert [m.text for m in from_the_end.messages] == ["one", "two", "three"]
    assert from_the_start == from_the_end
    assert isinstance(refused(messaging.thread, team.fleet_id, team.director, 9999), NotFound)

"""Members are bound to their identity: `member create` gives each member a secret that only
its launch file carries and stores its digest; a command from a member's pane acts only as
that member, and a message records whether its sender proved to be it."""

from __future__ import annotations

from dataclasses import replace

import pytest

from cafleet.adapters.fake.notifier import RecordingNotifier
from cafleet.adapters.fake.pane_driver import ThreadLocks
from cafleet.application.messaging.service import MessagingService
from cafleet.domain.errors import CafleetError, ErrorKind
from cafleet.domain.identity import MemberCredential, secret_digest
from support.pane_rig import PaneRig

from .test_spawning import Spawning


@pytest.fixture
def spawning(rig: PaneRig) -> Spawning:
    return Spawning(rig)


def messaging(rig: PaneRig) -> MessagingService:
    return MessagingService(rig.store, rig.clock, RecordingNotifier(), ThreadLocks())


def credential_of(rig: PaneRig, agent_id: int) -> MemberCredential:
    """What the member's pane environment holds, as the launch file handed it over."""
    env = rig.pad(agent_id).env
    return MemberCredential(int(env["CAFLEET_AGENT_ID"]), env["CAFLEET_MEMBER_SECRET"])


def refusal(call, *args, **kwargs) -> CafleetError:
    with pytest.raises(CafleetError) as raised:
        call(*args, **kwargs)
    return raised.value


def test_the_secret_travels_only_in_the_launch_file_and_only_its_digest_is_stored(
    rig: PaneRig, spawning: Spawning
) -> None:
    first = spawning.create().agent.agent_id
    second = spawning.create(name="reviewer").agent.agent_id

    secrets = [credential_of(rig, a).secret for a in (first, second)]
    assert secrets[0] != secrets[1]
    for agent_id, secret in zip((first, second), secrets, strict=True):
        placement = rig.store.tables.placements[agent_id]
        assert placement.identity_digest == secret_digest(secret) != secret
        assert not any(secret in repr(value) for value in vars(placement).values())
    for call in rig.driver.spawned:  # nothing on a command line, nothing in the pane's env
        assert call.env == {}
        assert not any(secret in arg for secret in secrets for arg in call.argv)
    for pad in rig.pads.pads:
        assert not any(secret in text for secret in secrets for text in pad.files.values())


def test_a_member_acting_as_itself_is_recorded_verified(rig: PaneRig, spawning: Spawning) -> None:
    member = spawning.create().agent.agent_id
    caller = credential_of(rig, member)
    service = messaging(rig)

    sent = service.send(spawning.fleet_id, member, spawning.director_id, "done", caller)
    unproven = service.send(spawning.fleet_id, member, spawning.director_id, "done again")

    stored = rig.store.tables.messages
    assert stored[sent.message.task_id].sender_verified is True
    assert stored[unproven.message.task_id].sender_verified is False  # no secret: as before
    assert service.poll(spawning.fleet_id, member, caller=caller) == []


@pytest.mark.parametrize("verb", ["send", "broadcast", "poll", "ack", "cancel", "show", "nudge"])
def test_a_member_pane_claiming_another_agents_id_is_refused_and_nothing_changes(
    rig: PaneRig, spawning: Spawning, verb: str
) -> None:
    member = spawning.create().agent.agent_id
    other = spawning.create(name="reviewer").agent.agent_id
    director = spawning.director_id
    service = messaging(rig)
    to_other = service.send(spawning.fleet_id, director, other, "for the reviewer")
    before = dict(rig.store.tables.messages)
    fid, task = spawning.fleet_id, to_other.message.task_id
    calls = {
        "send": lambda c: service.send(fid, director, other, "as the Director", c),
        "broadcast": lambda c: service.broadcast(fid, director, "as the Director", c),
        "poll": lambda c: service.poll(fid, other, caller=c),
        "ack": lambda c: service.ack(fid, other, task, c),
        "cancel": lambda c: service.cancel(fid, director, task, c),
        "show": lambda c: service.show(fid, other, task, c),
        "nudge": lambda c: service.nudge(fid, director, other, "as the Director", c),
    }

    error = refusal(calls[verb], credential_of(rig, member))

    claimed = other if verb in ("poll", "ack", "show") else director
    assert error.kind is ErrorKind.INVALID
    assert (
        error.message == f"this pane belongs to agent {member}; it cannot act as agent {claimed}."
    )
    assert rig.store.tables.messages == before


def test_a_secret_that_does_not_verify_is_refused(rig: PaneRig, spawning: Spawning) -> None:
    member = spawning.create().agent.agent_id
    forged = replace(credential_of(rig, member), secret="guessed")
    service = messaging(rig)

    error = refusal(service.send, spawning.fleet_id, member, spawning.director_id, "x", forged)

    assert error.message == (
        f"the member secret of this pane (CAFLEET_MEMBER_SECRET) does not verify as agent {member}."
    )
    assert rig.store.tables.messages == {}


def test_a_member_spawned_before_identities_cannot_be_proven(
    rig: PaneRig, spawning: Spawning
) -> None:
    """A placement without a digest (made before migration 0005) verifies no secret."""
    member = spawning.create().agent.agent_id
    caller = credential_of(rig, member)
    placements = rig.store.tables.placements
    placements[member] = replace(placements[member], identity_digest=None)

    error = refusal(messaging(rig).poll, spawning.fleet_id, member, caller=caller)

    assert "does not verify" in error.message


def test_a_verified_broadcast_marks_its_summary_and_every_delivery(
    rig: PaneRig, spawning: Spawning
) -> None:
    member = spawning.create().agent.agent_id
    spawning.create(name="reviewer")

    result = messaging(rig).broadcast(
        spawning.fleet_id, member, "standup", credential_of(rig, member)
    )

    assert result.summary.sender_verified is True
    assert [m.sender_verified for m in rig.store.tables.messages.values()] == [True] * 3


def test_a_member_pane_cannot_create_members_as_the_director(
    rig: PaneRig, spawning: Spawning
) -> None:
    member = spawning.create().agent.agent_id
    agents_before = dict(rig.store.tables.agents)

    error = refusal(
        spawning.create, name="sneaky", caller=credential_of(rig, member)
    )  # director_id is the Director's

    assert error.message == (
        f"this pane belongs to agent {member}; it cannot act as agent {spawning.director_id}."
    )
    assert rig.store.tables.agents == agents_before
    assert len(rig.driver.spawned) == 1

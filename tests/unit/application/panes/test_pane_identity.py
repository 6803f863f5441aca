"""Pane identity: after the multiplexer server restarts, its new panes get the old ids; such a
pane is not the member's (or the Director's) and is never typed into, read or closed."""

from __future__ import annotations

import pytest

from cafleet.adapters.fake.locator import FakePaneLocator
from cafleet.application.fleets import FleetCreated, FleetService, PaneFate
from cafleet.application.members.registry import ListMode, MemberService
from cafleet.domain.delivery import DeliveryState
from cafleet.domain.errors import Invalid
from cafleet.domain.fleet import AgentStatus
from cafleet.domain.panes import PaneGone
from cafleet.domain.placement import CodingAgent, Multiplexer, PaneLocation, PaneState
from support.pane_rig import DIRECTOR_PANE, ENTER, SOCKET, WINDOW, Member, PaneRig, text


def restarted_with_stranger(rig: PaneRig, member: Member, command: str = "claude") -> None:
    """The server restarts; the user's new work takes the Director's and the member's ids."""
    rig.driver.restart()
    rig.driver.add_pane("bash", WINDOW, pane_id=DIRECTOR_PANE)
    stranger = rig.driver.add_pane(command, WINDOW)
    assert stranger.pane_id == member.pane_id  # the new server reuses the id


def stranger(rig: PaneRig, member: Member):  # type: ignore[no-untyped-def]
    return rig.driver.panes[member.pane_id or ""]


@pytest.fixture
def placed(rig: PaneRig) -> tuple[FleetCreated, Member]:
    made = rig.fleet()
    return made, rig.member(made)


def test_a_message_is_not_typed_into_a_pane_that_took_the_members_id(
    rig: PaneRig, placed: tuple[FleetCreated, Member]
) -> None:
    made, member = placed
    restarted_with_stranger(rig, member)

    sent = rig.messaging().send(
        made.fleet.fleet_id, made.director.agent_id, member.agent_id, "SECRET for the member"
    )

    assert (sent.delivery.state, sent.delivery.error) == (DeliveryState.SKIPPED, "pane-gone")
    assert stranger(rig, member).typed == []


def test_exec_and_ping_fail_as_pane_gone_and_type_nothing(
    rig: PaneRig, placed: tuple[FleetCreated, Member]
) -> None:
    made, member = placed
    restarted_with_stranger(rig, member)
    panes = rig.member_panes()

    with pytest.raises(Invalid, match="pane"):
        panes.exec(made.fleet.fleet_id, member.agent_id, "echo typed-into-unrelated-pane")
    with pytest.raises(Invalid, match="pane"):
        panes.ping(made.fleet.fleet_id, member.agent_id)
    assert stranger(rig, member).typed == []


def test_capture_does_not_show_the_pane_that_took_the_members_id(
    rig: PaneRig, placed: tuple[FleetCreated, Member]
) -> None:
    made, member = placed
    restarted_with_stranger(rig, member)
    stranger(rig, member).screen = ["someone else's secrets"]

    with pytest.raises(PaneGone):
        rig.member_panes().capture(made.fleet.fleet_id, member.agent_id, 10, ansi=False)


@pytest.mark.parametrize("force", [False, True])
def test_member_delete_leaves_the_pane_that_took_the_id_untouched(
    rig: PaneRig, placed: tuple[FleetCreated, Member], force: bool
) -> None:
    made, member = placed
    restarted_with_stranger(rig, member, command="bash")

    deleted = rig.removal().delete(made.fleet.fleet_id, member.agent_id, force=force)

    assert deleted.pane_status == (
        f"{member.pane_id} (pane-gone: not the member's pane any more; left untouched)"
    )
    assert member.pane_id in rig.driver.panes
    assert stranger(rig, member).typed == []
    assert rig.driver.relayouts == []  # the window is not the fleet's either
    agent = rig.agent(member.agent_id)
    assert agent is not None and agent.status is AgentStatus.DEREGISTERED


def test_fleet_delete_leaves_panes_that_took_the_ids_untouched(
    rig: PaneRig, placed: tuple[FleetCreated, Member]
) -> None:
    made, member = placed
    restarted_with_stranger(rig, member)  # an agent runs there: /exit would be obeyed

    deleted = rig.fleet_service().delete(made.fleet.fleet_id, timeout=1)

    assert [(p.agent_id, p.fate) for p in deleted.panes] == [(member.agent_id, PaneFate.GONE)]
    assert set(rig.driver.panes) == {DIRECTOR_PANE, member.pane_id}
    assert stranger(rig, member).typed == []


def test_member_list_shows_the_member_pane_gone(
    rig: PaneRig, placed: tuple[FleetCreated, Member]
) -> None:
    made, member = placed
    restarted_with_stranger(rig, member)

    listing = MemberService(rig.store, rig.clock, rig.drivers).list(
        made.fleet.fleet_id, ListMode.MEMBERS
    )

    assert [(v.agent.agent_id, v.pane) for v in listing.members] == [
        (member.agent_id, PaneState.GONE)
    ]


def test_the_directors_pane_is_claimed_and_a_pane_that_took_its_id_is_not_it(
    rig: PaneRig,
) -> None:
    director = rig.driver.add_pane("claude", WINDOW, pane_id=DIRECTOR_PANE)
    locator = FakePaneLocator(PaneLocation(Multiplexer.TMUX, "main", WINDOW, DIRECTOR_PANE, SOCKET))
    fleets = FleetService(rig.store, rig.clock, locator, rig.teardown(), rig.drivers)
    made = fleets.create("alpha", CodingAgent.CLAUDE)
    admin = made.administrator.agent_id
    first = rig.messaging().send(made.fleet.fleet_id, admin, made.director.agent_id, "one")
    rig.driver.restart()
    usurper = rig.driver.add_pane("claude", WINDOW, pane_id=DIRECTOR_PANE)

    second = rig.messaging().send(made.fleet.fleet_id, admin, made.director.agent_id, "two")

    assert first.delivery.state is DeliveryState.SENT
    assert director.submitted() != []
    assert (second.delivery.state, second.delivery.error) == (DeliveryState.SKIPPED, "pane-gone")
    assert usurper.typed == []


# -- placements recorded before identities were kept ------------------------------------------


def test_an_unrecorded_pane_that_runs_no_agent_is_not_closed(rig: PaneRig) -> None:
    made = rig.fleet()
    member = rig.member(made, command="bash", legacy=True)

    deleted = rig.fleet_service().delete(made.fleet.fleet_id)

    assert [(p.agent_id, p.fate) for p in deleted.panes] == [(member.agent_id, PaneFate.GONE)]
    assert member.pane_id in rig.driver.panes
    assert member.pane is not None and member.pane.typed == []


def test_an_unrecorded_pane_that_runs_the_agent_is_closed_as_before(rig: PaneRig) -> None:
    made = rig.fleet()
    member = rig.member(made, legacy=True)
    assert member.pane is not None
    rig.driver.obey_exit(member.pane.pane_id)

    deleted = rig.fleet_service().delete(made.fleet.fleet_id)

    assert [(p.agent_id, p.fate) for p in deleted.panes] == [(member.agent_id, PaneFate.CLOSED)]
    assert member.pane.typed == [text("/exit"), ENTER]


def test_an_unrecorded_pane_whose_runtime_runs_the_agent_is_closed_as_before(
    rig: PaneRig,
) -> None:
    made = rig.fleet()
    member = rig.member(made, command="node", coding_agent=CodingAgent.CODEX, legacy=True)
    assert member.pane is not None
    member.pane.argv = ("node", "/opt/npm/lib/node_modules/@openai/codex/bin/codex.js")

    deleted = rig.fleet_service().delete(made.fleet.fleet_id)

    assert member.pane.typed == [text("/exit"), ENTER]  # the agent check passed
    assert [(p.agent_id, p.fate) for p in deleted.panes] == [(member.agent_id, PaneFate.KILLED)]
    assert member.pane_id not in rig.driver.panes

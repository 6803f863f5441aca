"""`member exec` through the member's own agent server (OpenCode's shell route), and the
fall-back to typing its shell mode where that server cannot take the command."""

from __future__ import annotations

import pytest

from cafleet.adapters.fake.launch_pads import FakeLaunchPad
from cafleet.application.members.shell import SERVER_CHANNEL, AgentServerShell
from cafleet.application.panes.keystroke_checks import (
    SHELL_IDLE_POLL_SECONDS,
    SHELL_IDLE_WAIT_SECONDS,
)
from cafleet.domain.agents.profile import SESSION_FILE
from cafleet.domain.agents.registry import AgentProfiles
from cafleet.domain.delivery import DeliveryState, SkipReason
from cafleet.domain.errors import Invalid
from cafleet.domain.placement import CodingAgent, Multiplexer, PushTarget
from support.pane_rig import ENTER, Member, PaneRig, text

SHELL_PATH = "/session/ses_abc/shell"
STATUS_PATH = "/session/status"


def server_pad(rig: PaneRig, statuses: int | list[int] | None = 200) -> FakeLaunchPad:
    """A pad whose OpenCode server knows session ses_abc and answers the shell route so."""
    pad = rig.pads.prepare(1, 3)
    pad.endpoint()
    pad.files[SESSION_FILE] = "ses_abc\n"
    if statuses is not None:
        pad.post_statuses[SHELL_PATH] = statuses
    return pad


def opencode_target(pad: FakeLaunchPad | None) -> PushTarget:
    return PushTarget(
        3, Multiplexer.TMUX, "sock", "%1", CodingAgent.OPENCODE,
        launch_pad=None if pad is None else pad.location,
    )  # fmt: skip


def shell(rig: PaneRig) -> AgentServerShell:
    return AgentServerShell(rig.pads, AgentProfiles(), rig.clock)


# --------------------------------------------------------------------------- the server route


def test_an_idle_server_runs_the_command_in_the_members_session_at_once(rig: PaneRig) -> None:
    pad = server_pad(rig)

    outcome = shell(rig).run(opencode_target(pad), "make test")

    assert outcome is not None
    assert (outcome.state, outcome.channel, outcome.pane_id) == (
        DeliveryState.SENT, SERVER_CHANNEL, "%1",
    )  # fmt: skip
    assert pad.posted == [(SHELL_PATH, {"agent": "cafleet", "command": "make test"})]
    assert rig.clock.slept == []


def test_a_busy_session_is_asked_again_until_its_turn_ends(rig: PaneRig) -> None:
    pad = server_pad(rig, [409, 409, 200])

    outcome = shell(rig).run(opencode_target(pad), "ls")

    assert outcome is not None and outcome.state is DeliveryState.SENT
    assert len(pad.posted) == 3
    assert rig.clock.slept == [SHELL_IDLE_POLL_SECONDS] * 2


def test_a_turn_that_never_ends_gives_up_after_the_wait_as_agent_busy(rig: PaneRig) -> None:
    pad = server_pad(rig, 409)

    outcome = shell(rig).run(opencode_target(pad), "ls")

    assert outcome is not None
    assert (outcome.state, outcome.error) == (DeliveryState.SKIPPED, SkipReason.AGENT_BUSY)
    assert sum(rig.clock.slept) == pytest.approx(SHELL_IDLE_WAIT_SECONDS)
    assert len(pad.posted) == round(SHELL_IDLE_WAIT_SECONDS / SHELL_IDLE_POLL_SECONDS) + 1


def test_a_command_still_running_when_the_wait_ends_counts_as_taken(rig: PaneRig) -> None:
    pad = server_pad(rig, None)  # the shell route does not answer in time
    pad.answers[STATUS_PATH] = '{"ses_abc": {"type": "busy"}}'  # but the server lives

    outcome = shell(rig).run(opencode_target(pad), "sleep 60")

    assert outcome is not None and outcome.state is DeliveryState.SENT


@pytest.mark.parametrize("status", [None, 404])
def test_a_silent_server_or_one_without_the_route_leaves_it_to_the_keys(
    rig: PaneRig, status: int | None
) -> None:
    pad = server_pad(rig, status)

    assert shell(rig).run(opencode_target(pad), "ls") is None


def test_no_pad_no_session_or_an_agent_without_a_server_leaves_it_to_the_keys(
    rig: PaneRig,
) -> None:
    unknown_session = server_pad(rig)
    unknown_session.files.pop(SESSION_FILE)
    with_session = server_pad(rig)
    claude = PushTarget(3, Multiplexer.TMUX, "sock", "%1", CodingAgent.CLAUDE,
                        launch_pad=with_session.location)  # fmt: skip

    assert shell(rig).run(opencode_target(None), "ls") is None
    assert shell(rig).run(opencode_target(unknown_session), "ls") is None
    assert shell(rig).run(claude, "ls") is None
    assert unknown_session.posted == [] and with_session.posted == []


# --------------------------------------------------------------------------- member exec


def opencode_member(rig: PaneRig, pad: FakeLaunchPad) -> tuple[int, Member]:
    made = rig.fleet()
    worker = rig.member(
        made, command="opencode", coding_agent=CodingAgent.OPENCODE, launch_pad=pad.location
    )
    return made.fleet.fleet_id, worker


def test_exec_to_an_opencode_member_goes_to_its_server_and_types_nothing(rig: PaneRig) -> None:
    pad = server_pad(rig)
    fleet_id, worker = opencode_member(rig, pad)

    rig.member_panes().exec(fleet_id, worker.agent_id, "git status")

    assert pad.posted == [(SHELL_PATH, {"agent": "cafleet", "command": "git status"})]
    assert worker.pane is not None and worker.pane.typed == []


def test_exec_to_an_opencode_member_whose_server_is_silent_types_its_shell_mode(
    rig: PaneRig,
) -> None:
    pad = server_pad(rig, None)
    fleet_id, worker = opencode_member(rig, pad)

    rig.member_panes().exec(fleet_id, worker.agent_id, "git status")

    assert worker.pane is not None and worker.pane.typed == [text("! git status"), ENTER]


def test_exec_to_an_opencode_member_whose_turn_never_ends_is_refused(rig: PaneRig) -> None:
    pad = server_pad(rig, 409)
    fleet_id, worker = opencode_member(rig, pad)

    with pytest.raises(Invalid) as raised:
        rig.member_panes().exec(fleet_id, worker.agent_id, "make test")

    assert "the agent stayed in a turn" in raised.value.message
    assert worker.pane is not None and worker.pane.typed == []

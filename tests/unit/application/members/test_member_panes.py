"""MemberPanes: `member capture`, `member exec` and `member ping`."""

from __future__ import annotations

import hashlib

import pytest

from cafleet.domain.errors import Invalid, NotFound, Unavailable
from cafleet.domain.placement import CodingAgent, Multiplexer
from support.pane_rig import ENTER, ESC, SUBMIT_DELAYS, PaneRig, TimedOutLocks, text

# --------------------------------------------------------------------------- capture


def test_capture_returns_the_last_lines_with_ansi_stripped(rig: PaneRig) -> None:
    made = rig.fleet()
    worker = rig.member(made)
    assert worker.pane is not None
    worker.pane.screen = [
        "old line",
        "\x1b[1;31mred\x1b[0m text",
        "\x1b]0;window title\x07titled",
        "\x1b]8;;https://example.test\x1b\\link\x1b]8;;\x1b\\",
        "progress 10%\rprogress 100%",
        "",
        "",
    ]

    capture = rig.member_panes().capture(made.fleet.fleet_id, worker.agent_id, 4, ansi=False)

    assert capture.content == "red text\ntitled\nlink\nprogress 100%"
    assert (capture.member_agent_id, capture.pane_id, capture.lines) == (
        worker.agent_id, worker.pane_id, 4,
    )  # fmt: skip
    assert capture.captured_at == rig.clock.now()
    assert capture.content_sha256 == hashlib.sha256(capture.content.encode()).hexdigest()


def test_capture_with_ansi_keeps_the_escape_sequences(rig: PaneRig) -> None:
    made = rig.fleet()
    worker = rig.member(made)
    assert worker.pane is not None
    worker.pane.screen = ["\x1b[32mok\x1b[0m", "a\rb"]

    capture = rig.member_panes().capture(made.fleet.fleet_id, worker.agent_id, 20, ansi=True)

    assert capture.content == "\x1b[32mok\x1b[0m\na\rb"
    assert capture.content_sha256 == hashlib.sha256(b"\x1b[32mok\x1b[0m\na\rb").hexdigest()


def test_capture_types_nothing_and_needs_no_agent_check(rig: PaneRig) -> None:
    made = rig.fleet()
    worker = rig.member(made, command="bash")
    assert worker.pane is not None
    worker.pane.screen = ["$ ls"]

    capture = rig.member_panes().capture(made.fleet.fleet_id, worker.agent_id, 20, ansi=False)

    assert capture.content == "$ ls"
    assert worker.pane.typed == []


def test_capture_works_on_the_director(rig: PaneRig) -> None:
    made = rig.fleet()
    rig.director_pane().screen = ["director screen"]

    capture = rig.member_panes().capture(
        made.fleet.fleet_id, made.director.agent_id, 20, ansi=False
    )

    assert (capture.pane_id, capture.content) == ("%0", "director screen")


def test_capture_reads_the_server_the_placement_recorded(rig: PaneRig) -> None:
    made = rig.fleet()
    worker = rig.member(made)
    assert worker.pane is not None
    worker.pane.screen = ["the real pane"]
    decoy = rig.drivers(Multiplexer.TMUX, None).add_pane("claude", pane_id=worker.pane_id)
    decoy.screen = ["a pane of the default server"]

    capture = rig.member_panes().capture(made.fleet.fleet_id, worker.agent_id, 20, ansi=False)

    assert capture.content == "the real pane"


def test_the_sha256_of_an_empty_capture_is_that_of_the_empty_string(rig: PaneRig) -> None:
    made = rig.fleet()
    worker = rig.member(made)

    capture = rig.member_panes().capture(made.fleet.fleet_id, worker.agent_id, 20, ansi=False)

    assert capture.content == ""
    assert capture.content_sha256 == hashlib.sha256(b"").hexdigest()


# --------------------------------------------------------------------------- target errors


@pytest.mark.parametrize("verb", ["capture", "exec", "ping"])
def test_a_pending_member_has_nothing_to_act_on(rig: PaneRig, verb: str) -> None:
    made = rig.fleet()
    worker = rig.member(made, pending=True)

    with pytest.raises(Invalid) as raised:
        run_verb(rig, verb, made.fleet.fleet_id, worker.agent_id)

    assert raised.value.message == (
        f"member {worker.agent_id} has no pane yet (pending placement) — nothing to {verb}."
    )


@pytest.mark.parametrize("verb", ["capture", "exec", "ping"])
def test_an_agent_without_placement_row_is_refused(rig: PaneRig, verb: str) -> None:
    made = rig.fleet()
    admin = made.administrator.agent_id

    with pytest.raises(NotFound) as raised:
        run_verb(rig, verb, made.fleet.fleet_id, admin)

    assert raised.value.message == (
        f"agent {admin} has no placement row; it was not spawned via `cafleet member create`."
    )


@pytest.mark.parametrize("verb", ["capture", "exec", "ping"])
def test_an_unknown_or_foreign_or_deregistered_agent_is_not_found(rig: PaneRig, verb: str) -> None:
    made = rig.fleet()
    other = rig.fleet_service().create("beta", CodingAgent.CLAUDE)
    foreign = rig.member(other, "foreign").agent_id
    retired = rig.member(made, "retired", command=None).agent_id
    rig.removal().delete(made.fleet.fleet_id, retired)

    for agent_id in (99, foreign, retired):
        with pytest.raises(NotFound) as raised:
            run_verb(rig, verb, made.fleet.fleet_id, agent_id)
        assert raised.value.message == f"Agent {agent_id} not found"


def run_verb(rig: PaneRig, verb: str, fleet_id: int, agent_id: int) -> object:
    panes = rig.member_panes()
    if verb == "capture":
        return panes.capture(fleet_id, agent_id, 20, ansi=False)
    if verb == "exec":
        return panes.exec(fleet_id, agent_id, "git status")
    return panes.ping(fleet_id, agent_id)


# --------------------------------------------------------------------------- exec


def test_exec_types_bang_command_then_delay_then_enter_without_esc(rig: PaneRig) -> None:
    made = rig.fleet()
    worker = rig.member(made)
    assert worker.pane is not None

    placed = rig.member_panes().exec(made.fleet.fleet_id, worker.agent_id, "git status")

    assert worker.pane.typed == [text("! git status"), ENTER]
    assert rig.clock.slept == [SUBMIT_DELAYS["claude"]]
    assert (placed.agent.agent_id, placed.target.pane_id) == (worker.agent_id, worker.pane_id)


def test_exec_into_a_shell_pane_is_refused_with_the_foreground_command(rig: PaneRig) -> None:
    made = rig.fleet()
    worker = rig.member(made, command="bash")
    assert worker.pane is not None

    with pytest.raises(Invalid) as raised:
        rig.member_panes().exec(made.fleet.fleet_id, worker.agent_id, "rm -rf build")

    assert raised.value.message == (
        f"the shell command was not typed into pane {worker.pane_id} (claude): pane runs bash."
    )
    assert worker.pane.typed == []


def test_exec_into_a_pane_running_another_program_is_refused(rig: PaneRig) -> None:
    made = rig.fleet()
    worker = rig.member(made, command="htop", coding_agent=CodingAgent.CODEX)

    with pytest.raises(Invalid) as raised:
        rig.member_panes().exec(made.fleet.fleet_id, worker.agent_id, "ls")

    assert raised.value.message == (
        f"the shell command was not typed into pane {worker.pane_id} (codex): pane runs htop."
    )


def test_exec_into_an_opencode_turn_that_does_not_end_is_refused(rig: PaneRig) -> None:
    made = rig.fleet()
    worker = rig.member(made, command="opencode", coding_agent=CodingAgent.OPENCODE)
    assert worker.pane is not None
    worker.pane.screen = ["  ┃  Cafleet · Fake model", "   ⬝⬝■■■■■■  esc interrupt"]

    with pytest.raises(Invalid) as raised:
        rig.member_panes().exec(made.fleet.fleet_id, worker.agent_id, "make test")

    assert raised.value.message == (
        f"the shell command was not typed into pane {worker.pane_id} (opencode): the agent"
        " stayed in a turn, during which it drops a shell command."
    )
    assert worker.pane.typed == []


def test_exec_into_a_gone_pane_is_refused(rig: PaneRig) -> None:
    made = rig.fleet()
    worker = rig.member(made, command=None)

    with pytest.raises(Invalid) as raised:
        rig.member_panes().exec(made.fleet.fleet_id, worker.agent_id, "ls")

    assert raised.value.message == (
        f"the shell command was not typed into pane {worker.pane_id} (claude): the pane is gone."
    )


# --------------------------------------------------------------------------- ping


def test_ping_types_the_poll_line_without_esc(rig: PaneRig) -> None:
    made = rig.fleet()
    worker = rig.member(made, coding_agent=CodingAgent.CODEX, command="codex")
    assert worker.pane is not None
    fleet_id = made.fleet.fleet_id

    rig.member_panes().ping(fleet_id, worker.agent_id)

    assert worker.pane.typed == [
        text(f"cafleet message poll --fleet-id {fleet_id} --agent-id {worker.agent_id}"),
        ENTER,
    ]
    assert ESC not in worker.pane.typed
    assert rig.clock.slept == [SUBMIT_DELAYS["codex"]]


def test_ping_works_on_the_director(rig: PaneRig) -> None:
    made = rig.fleet()
    fleet_id, director = made.fleet.fleet_id, made.director.agent_id

    placed = rig.member_panes().ping(fleet_id, director)

    assert placed.target.pane_id == "%0"
    assert rig.director_pane().submitted() == [
        f"cafleet message poll --fleet-id {fleet_id} --agent-id {director}"
    ]


def test_ping_into_a_shell_pane_is_refused_like_exec(rig: PaneRig) -> None:
    made = rig.fleet()
    worker = rig.member(made, command="zsh")
    assert worker.pane is not None

    with pytest.raises(Invalid) as raised:
        rig.member_panes().ping(made.fleet.fleet_id, worker.agent_id)

    assert raised.value.message == (
        f"the poll-trigger keystroke was not typed into pane {worker.pane_id} (claude):"
        " pane runs zsh."
    )
    assert worker.pane.typed == []


def test_ping_uses_the_pane_on_the_server_the_placement_recorded(rig: PaneRig) -> None:
    made = rig.fleet()
    worker = rig.member(made)
    assert worker.pane is not None
    decoy = rig.drivers(Multiplexer.TMUX, None).add_pane("claude", pane_id=worker.pane_id)

    rig.member_panes().ping(made.fleet.fleet_id, worker.agent_id)

    assert len(worker.pane.submitted()) == 1
    assert decoy.typed == []


def test_a_failed_ping_is_an_unavailable_send_failure(rig: PaneRig) -> None:
    made = rig.fleet()
    worker = rig.member(made)
    rig.locks = TimedOutLocks()

    with pytest.raises(Unavailable) as raised:
        rig.member_panes().ping(made.fleet.fleet_id, worker.agent_id)

    assert raised.value.message.startswith(
        "send failed: tmux send-keys did not deliver the poll-trigger keystroke to pane"
        f" {worker.pane_id}."
    )


def test_a_failed_ping_has_the_exact_spec_message(rig: PaneRig) -> None:
    made = rig.fleet()
    worker = rig.member(made)
    rig.locks = TimedOutLocks()

    with pytest.raises(Unavailable) as raised:
        rig.member_panes().ping(made.fleet.fleet_id, worker.agent_id)

    assert raised.value.message == (
        "send failed: tmux send-keys did not deliver the poll-trigger keystroke to pane"
        f" {worker.pane_id}."
    )


def test_exec_into_a_pane_showing_a_dialog_is_refused_and_names_it(rig: PaneRig) -> None:
    made = rig.fleet()
    worker = rig.member(made)
    assert worker.pane is not None
    worker.pane.screen = ["Bash command", "Do you want to proceed?", "> 1. Yes"]

    with pytest.raises(Invalid) as raised:
        rig.member_panes().exec(made.fleet.fleet_id, worker.agent_id, "ls")

    assert raised.value.message == (
        f"the shell command was not typed into pane {worker.pane_id} (claude):"
        " a dialog is on screen (do you want to proceed)."
    )
    assert worker.pane.typed == []


def test_ping_of_a_starting_member_is_refused(rig: PaneRig) -> None:
    made = rig.fleet()
    worker = rig.member(made, starting=True)
    assert worker.pane is not None

    with pytest.raises(Invalid) as raised:
        rig.member_panes().ping(made.fleet.fleet_id, worker.agent_id)

    assert raised.value.message == (
        f"the poll-trigger keystroke was not typed into pane {worker.pane_id} (claude):"
        " the agent did not finish starting."
    )
    assert worker.pane.typed == []

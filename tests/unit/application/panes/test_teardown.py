"""PaneTeardown: ask agents to /exit, wait for their panes to go, kill what stays."""

from __future__ import annotations

from cafleet.adapters.fake.pane_driver import FakePane
from cafleet.application.panes.teardown import Closing, PaneClosing
from cafleet.domain.errors import Unavailable
from cafleet.domain.placement import CodingAgent
from support.pane_rig import ENTER, SUBMIT_DELAYS, PaneRig, target, text

POLL = 0.5
CLAUDE_DELAY = SUBMIT_DELAYS["claude"]


def test_an_agent_that_obeys_exit_is_closed(rig: PaneRig) -> None:
    pane = rig.driver.add_pane("claude")
    rig.driver.obey_exit(pane.pane_id)

    [closing] = rig.teardown().graceful([target(pane.pane_id)], timeout=15)

    assert closing == PaneClosing(target(pane.pane_id), Closing.CLOSED)
    assert pane.typed == [text("/exit"), ENTER]
    assert pane.pane_id not in rig.driver.panes
    assert rig.clock.slept == [CLAUDE_DELAY]


def test_the_pane_is_polled_every_half_second_until_it_goes(rig: PaneRig) -> None:
    pane = rig.driver.add_pane("claude")
    rig.clock.after(2.0, lambda: rig.driver.panes.pop(pane.pane_id))

    [closing] = rig.teardown().graceful([target(pane.pane_id)], timeout=15)

    assert closing.status is Closing.CLOSED
    assert rig.clock.slept == [CLAUDE_DELAY, POLL, POLL]


def test_a_pane_that_ignores_exit_is_killed_after_the_timeout_with_its_tail(
    rig: PaneRig,
) -> None:
    pane = rig.driver.add_pane("claude")
    pane.screen = [f"line {n}" for n in range(1, 101)] + ["", ""]

    [closing] = rig.teardown().graceful([target(pane.pane_id)], timeout=15)

    assert closing.status is Closing.KILLED_AFTER_TIMEOUT
    assert closing.tail == "\n".join(f"line {n}" for n in range(21, 101))
    assert pane.pane_id not in rig.driver.panes
    assert rig.clock.slept == [CLAUDE_DELAY] + [POLL] * 30


def test_the_timeout_is_configurable(rig: PaneRig) -> None:
    pane = rig.driver.add_pane("claude")

    [closing] = rig.teardown().graceful([target(pane.pane_id)], timeout=2)

    assert closing.status is Closing.KILLED_AFTER_TIMEOUT
    assert rig.clock.slept == [CLAUDE_DELAY] + [POLL] * 4


def test_a_pane_not_running_the_agent_is_killed_without_typing(rig: PaneRig) -> None:
    pane = rig.driver.add_pane("bash")
    member = target(pane.pane_id, identity=rig.driver.claim(pane.pane_id))

    [closing] = rig.teardown().graceful([member], timeout=15)

    assert closing == PaneClosing(member, Closing.KILLED_NOT_AGENT, "bash")
    assert pane.typed == []
    assert pane.pane_id not in rig.driver.panes
    assert rig.clock.slept == []


def test_a_custom_agent_is_checked_against_its_own_command_list(rig: PaneRig) -> None:
    pane = rig.driver.add_pane("perl")
    to = target(
        pane.pane_id,
        coding_agent=CodingAgent.CUSTOM,
        agent_commands=("demo-agent",),
        identity=rig.driver.claim(pane.pane_id),
    )

    [closing] = rig.teardown().graceful([to], timeout=15)

    assert (closing.status, closing.detail) == (Closing.KILLED_NOT_AGENT, "perl")
    assert pane.typed == []


def test_a_pane_already_gone_is_reported_gone(rig: PaneRig) -> None:
    [closing] = rig.teardown().graceful([target("%404")], timeout=15)

    assert closing == PaneClosing(target("%404"), Closing.GONE)
    assert rig.clock.slept == []


def test_a_dead_pane_is_reported_gone_and_never_typed_into(rig: PaneRig) -> None:
    pane = rig.driver.add_pane("claude")
    pane.dead = True

    [closing] = rig.teardown().graceful([target(pane.pane_id)], timeout=15)

    assert closing.status is Closing.GONE
    assert pane.typed == []


def test_no_targets_means_nothing_to_do(rig: PaneRig) -> None:
    assert rig.teardown().graceful([], timeout=15) == []
    assert rig.clock.slept == []


def test_several_panes_share_one_wait(rig: PaneRig) -> None:
    stubborn = [rig.driver.add_pane("claude") for _ in range(3)]
    obedient = rig.driver.add_pane("claude")
    rig.driver.obey_exit(obedient.pane_id)
    targets = [target(p.pane_id) for p in [*stubborn, obedient]]

    closings = rig.teardown().graceful(targets, timeout=15)

    assert [c.target for c in closings] == targets
    assert [c.status for c in closings] == [Closing.KILLED_AFTER_TIMEOUT] * 3 + [Closing.CLOSED]
    assert rig.clock.slept.count(POLL) == 30
    assert rig.driver.panes == {}


def test_force_kills_without_typing(rig: PaneRig) -> None:
    pane = rig.driver.add_pane("claude")

    closing = rig.teardown().force(target(pane.pane_id))

    assert closing == PaneClosing(target(pane.pane_id), Closing.KILLED)
    assert pane.typed == []
    assert pane.pane_id not in rig.driver.panes


def test_force_on_a_pane_already_gone_still_counts_as_killed(rig: PaneRig) -> None:
    assert rig.teardown().force(target("%404")).status is Closing.KILLED


def test_a_failed_kill_is_reported_with_its_reason(rig: PaneRig) -> None:
    pane = rig.driver.add_pane("bash")
    rig.driver.kill_failures[pane.pane_id] = Unavailable("tmux kill-pane timed out after 5s")
    member = target(pane.pane_id, identity=rig.driver.claim(pane.pane_id))

    [closing] = rig.teardown().graceful([member], timeout=15)

    assert closing == PaneClosing(member, Closing.FAILED, "tmux kill-pane timed out after 5s")
    assert pane.pane_id in rig.driver.panes


def test_a_failed_kill_after_the_timeout_is_reported_failed(rig: PaneRig) -> None:
    pane = rig.driver.add_pane("claude")
    rig.driver.kill_failures[pane.pane_id] = Unavailable("tmux kill-pane timed out after 5s")

    [closing] = rig.teardown().graceful([target(pane.pane_id)], timeout=1)

    assert (closing.status, closing.detail) == (Closing.FAILED, "tmux kill-pane timed out after 5s")


def test_an_unreadable_pane_during_the_wait_is_asked_about_again(rig: PaneRig) -> None:
    pane = rig.driver.add_pane("claude")

    def leave_while_the_server_is_busy() -> None:
        rig.driver.panes.clear()
        rig.driver.failures["pane"] = Unavailable("tmux list-panes timed out after 5s")

    # the agent leaves after the first poll, but the server cannot answer the second one
    rig.clock.after(1.5, leave_while_the_server_is_busy)
    rig.clock.after(2.0, rig.driver.failures.clear)

    [closing] = rig.teardown().graceful([target(pane.pane_id)], timeout=15)

    assert closing.status is Closing.CLOSED
    assert rig.clock.slept == [CLAUDE_DELAY, POLL, POLL]


# Claude Code 2.1.332 on /exit while a background task runs (the composer is gone)
BACKGROUND_QUESTION = [
    "✻ Baked for 3s · done 7:15 PM · 1 shell still running",
    "▔▔▔▔▔▔▔▔▔▔▔▔▔▔▔▔▔▔▔▔▔▔▔▔",
    "  Background work is running",
    "  The following will stop when you exit:",
    "  shell · Run the scripted command",
    "  ❯ 1. Exit and stop tasks",
    "    2. Move to background and exit",
    "    3. Stay",
    "  Enter to confirm · Esc to cancel",
]


def ask_about_background_work(rig: PaneRig, pane: FakePane) -> None:
    """The pane asks about its background work when /exit is submitted, and closes once
    the key of "Exit and stop tasks" is typed."""

    def on_submit(asked: FakePane, submitted: str) -> None:
        if submitted == "/exit" and asked is pane:
            pane.screen = list(BACKGROUND_QUESTION)

    rig.driver.on_submit = on_submit
    original = rig.driver.type_text

    def type_text(pane_id: str, value: str) -> None:
        original(pane_id, value)
        if pane_id == pane.pane_id and pane.screen == BACKGROUND_QUESTION and value == "1":
            rig.driver.panes.pop(pane_id)

    rig.driver.type_text = type_text  # type: ignore[method-assign]


def test_the_question_about_background_work_is_answered_with_its_exit_key(
    rig: PaneRig,
) -> None:
    pane = rig.driver.add_pane("claude")
    pane.screen = ["❯ "]
    ask_about_background_work(rig, pane)

    [closing] = rig.teardown().graceful([target(pane.pane_id)], timeout=15)

    assert closing == PaneClosing(target(pane.pane_id), Closing.CLOSED)
    assert pane.typed == [text("/exit"), ENTER, text("1")]


def test_the_question_seen_while_waiting_is_answered_once_it_shows(rig: PaneRig) -> None:
    pane = rig.driver.add_pane("claude")
    pane.screen = ["❯ "]
    ask_about_background_work(rig, pane)
    rig.driver.on_submit = None  # the question comes a moment after the Enter
    rig.clock.after(2.0, lambda: setattr(pane, "screen", list(BACKGROUND_QUESTION)))

    [closing] = rig.teardown().graceful([target(pane.pane_id)], timeout=15)

    assert closing.status is Closing.CLOSED
    assert pane.typed == [text("/exit"), ENTER, text("1")]


def test_the_exit_key_is_the_number_the_screen_shows(rig: PaneRig) -> None:
    pane = rig.driver.add_pane("claude")
    pane.screen = [row.replace("1. Exit", "2. Exit").replace("2. Move", "1. Move")
                   for row in BACKGROUND_QUESTION]  # fmt: skip

    [closing] = rig.teardown().graceful([target(pane.pane_id)], timeout=1)

    assert text("2") in pane.typed and text("1") not in pane.typed
    assert closing.status is Closing.KILLED_AFTER_TIMEOUT  # the fake never leaves


def test_a_permission_dialog_is_never_answered_and_is_named_when_the_pane_is_killed(
    rig: PaneRig,
) -> None:
    pane = rig.driver.add_pane("claude")
    pane.screen = ["Bash command", "  touch x", "Do you want to proceed?", "❯ 1. Yes",
                   "  2. No", "Esc to cancel · Tab to amend"]  # fmt: skip

    [closing] = rig.teardown().graceful([target(pane.pane_id)], timeout=15)

    assert (closing.status, closing.detail) == (Closing.KILLED_AT_DIALOG, "esc to cancel")
    assert pane.typed == []
    assert pane.pane_id not in rig.driver.panes


def test_an_agent_without_exit_questions_is_never_typed_a_digit(rig: PaneRig) -> None:
    pane = rig.driver.add_pane("node", argv=("node", "/x/node_modules/.bin/codex"))
    pane.screen = list(BACKGROUND_QUESTION[:-1])

    codex = target(pane.pane_id, coding_agent=CodingAgent.CODEX)

    [closing] = rig.teardown().graceful([codex], timeout=1)

    assert closing.status is Closing.KILLED_AFTER_TIMEOUT
    assert pane.typed == [text("/exit"), ENTER]

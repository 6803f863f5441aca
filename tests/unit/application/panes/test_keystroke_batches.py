"""KeystrokeSender.deliver_many: many panes through the steps together, one submit delay,
and the submit verified where the profile knows the composer."""

from __future__ import annotations

from cafleet.adapters.fake.pane_driver import FakePane
from cafleet.application.panes.keystrokes import SUBMIT_CHECK_SECONDS, SUBMIT_RETRIES, Keystrokes
from cafleet.domain.delivery import PushOutcome
from cafleet.domain.placement import CodingAgent
from support.pane_rig import ENTER, SUBMIT_DELAYS, PaneRig, paste, target


def preview(n: int) -> str:
    return f"[cafleet msg {n} from 1 2026-01-01T08:00:00.000000+00:00]\nhello {n}"


def panes(rig: PaneRig, count: int, command: str = "claude") -> list[FakePane]:
    return [rig.driver.add_pane(command) for _ in range(count)]


def test_n_panes_share_one_submit_delay_and_the_same_steps_as_one(rig: PaneRig) -> None:
    single = rig.driver.add_pane("claude")
    rig.keystrokes().deliver_many([(target(single.pane_id), Keystrokes.preview(preview(0)))])
    steps_for_one, rig.driver.batches = rig.driver.batches, []
    rig.clock.slept.clear()
    many = panes(rig, 6)

    outcomes = rig.keystrokes().deliver_many(
        [(target(p.pane_id), Keystrokes.preview(preview(n))) for n, p in enumerate(many)]
    )

    assert outcomes == [PushOutcome.sent("tmux", p.pane_id) for p in many]
    assert rig.clock.slept == [SUBMIT_DELAYS["claude"]]
    assert rig.driver.batches == steps_for_one
    for n, pane in enumerate(many):
        assert pane.typed == [paste(preview(n)), ENTER]


def test_the_shared_delay_is_the_longest_of_the_agents(rig: PaneRig) -> None:
    claude, codex = rig.driver.add_pane("claude"), rig.driver.add_pane("codex")

    rig.keystrokes().deliver_many(
        [
            (target(claude.pane_id), Keystrokes.preview(preview(1))),
            (target(codex.pane_id, coding_agent=CodingAgent.CODEX), Keystrokes.preview(preview(2))),
        ]
    )

    assert rig.clock.slept == [max(SUBMIT_DELAYS["claude"], SUBMIT_DELAYS["codex"])]


def test_a_pane_failing_its_check_before_enter_gets_no_enter_while_the_others_do(
    rig: PaneRig,
) -> None:
    trio = panes(rig, 3)
    dialog = trio[1]

    def open_dialog(pane_id: str, text: str) -> None:
        if pane_id == dialog.pane_id:
            dialog.screen = ["Do you want to proceed?", "1. Yes", "2. No"]

    rig.driver.before_paste = open_dialog

    outcomes = rig.keystrokes().deliver_many(
        [(target(p.pane_id), Keystrokes.preview(preview(n))) for n, p in enumerate(trio)]
    )

    assert [o.state.value for o in outcomes] == ["sent", "skipped", "sent"]
    assert outcomes[1].error == "dialog:do you want to proceed (before Enter)"
    assert dialog.typed == [paste(preview(1))]
    for n in (0, 2):
        assert trio[n].typed == [paste(preview(n)), ENTER]


def test_panes_failing_before_typing_get_nothing_and_do_not_stop_the_others(rig: PaneRig) -> None:
    ok, shell = rig.driver.add_pane("claude"), rig.driver.add_pane("bash")

    outcomes = rig.keystrokes().deliver_many(
        [
            (target("%404"), Keystrokes.preview(preview(0))),
            (target(shell.pane_id), Keystrokes.preview(preview(1))),
            (target(ok.pane_id), Keystrokes.preview(preview(2))),
        ]
    )

    assert [(o.state.value, o.error) for o in outcomes] == [
        ("skipped", "pane-gone"),
        ("skipped", "not-agent:bash"),
        ("sent", None),
    ]
    assert shell.typed == []
    assert ok.typed == [paste(preview(2)), ENTER]


def test_a_pane_named_twice_gets_its_texts_in_order(rig: PaneRig) -> None:
    pane = rig.driver.add_pane("claude")

    outcomes = rig.keystrokes().deliver_many(
        [(target(pane.pane_id), Keystrokes.preview(preview(n))) for n in (1, 2)]
    )

    assert [o.state.value for o in outcomes] == ["sent", "sent"]
    assert pane.typed == [paste(preview(1)), ENTER, paste(preview(2)), ENTER]


# --------------------------------------------------------------------------- verified submit


def composer(pane: FakePane, dropped_enters: int) -> None:
    """The pasted text shows in the pane's composer until an Enter beyond the first
    `dropped_enters` arrives."""
    shown = {"text": ""}

    def redraw() -> None:
        enters = pane.typed.count(ENTER)
        row = shown["text"] if enters <= dropped_enters else ""
        pane.screen = ["● earlier answer", "────", f"❯ {row}", "────", "  ? for shortcuts"]

    original = pane.typed

    class Watching(list[tuple[str, str]]):
        def append(self, step: tuple[str, str]) -> None:
            super().append(step)
            if step[0] == "paste":
                shown["text"] = step[1].replace("\n", " ")
            redraw()

    pane.typed = Watching(original)
    redraw()


def test_an_enter_the_agent_dropped_is_pressed_again(rig: PaneRig) -> None:
    pane = rig.driver.add_pane("claude")
    composer(pane, dropped_enters=1)

    [outcome] = rig.keystrokes().deliver_many(
        [(target(pane.pane_id), Keystrokes.preview(preview(7)))]
    )

    assert outcome == PushOutcome.sent("tmux", pane.pane_id)
    assert list(pane.typed) == [paste(preview(7)), ENTER, ENTER]
    assert rig.clock.slept == [SUBMIT_DELAYS["claude"], SUBMIT_CHECK_SECONDS]


def test_enter_is_retried_a_bounded_number_of_times(rig: PaneRig) -> None:
    pane = rig.driver.add_pane("claude")
    composer(pane, dropped_enters=99)

    rig.keystrokes().deliver_many([(target(pane.pane_id), Keystrokes.preview(preview(7)))])

    assert list(pane.typed).count(ENTER) == 1 + SUBMIT_RETRIES


def test_no_pause_and_no_second_enter_when_the_composer_emptied(rig: PaneRig) -> None:
    pane = rig.driver.add_pane("claude")
    composer(pane, dropped_enters=0)

    rig.keystrokes().deliver_many([(target(pane.pane_id), Keystrokes.preview(preview(7)))])

    assert list(pane.typed) == [paste(preview(7)), ENTER]
    assert rig.clock.slept == [SUBMIT_DELAYS["claude"]]


def test_no_retry_into_a_dialog_that_opened_after_enter(rig: PaneRig) -> None:
    pane = rig.driver.add_pane("claude")
    composer(pane, dropped_enters=99)
    rig.driver.on_submit = lambda p, _: p.screen.append("Do you want to proceed?")

    [outcome] = rig.keystrokes().deliver_many(
        [(target(pane.pane_id), Keystrokes.preview(preview(7)))]
    )

    assert list(pane.typed) == [paste(preview(7)), ENTER]
    assert outcome.error == "dialog:do you want to proceed (before Enter)"


def test_an_agent_without_composer_knowledge_is_not_watched(rig: PaneRig) -> None:
    pane = rig.driver.add_pane("mytui")
    composer(pane, dropped_enters=99)

    rig.keystrokes().deliver_many(
        [(target(pane.pane_id, coding_agent=CodingAgent.CUSTOM), Keystrokes.preview(preview(7)))]
    )

    assert list(pane.typed).count(ENTER) == 1

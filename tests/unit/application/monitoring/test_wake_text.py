"""The wake payload: one line, exact wording, singular/plural, sanitized names."""

from __future__ import annotations

import pytest

from cafleet.domain.monitor import DueAgent, wake_text

INSTRUCTIONS = (
    "Capture each named pane read-only, with the Director pane ({d}) always inspected. From"
    " capture content only, classify each pane in this precedence order: awaiting_user,"
    " unknown, finished, stalled, working. For an agent tagged stall-check, compare its capture"
    " against your previous stall-check capture of that pane, then keep the new capture as that"
    " pane's baseline; with no previous stall-check capture, classify unknown. Never re-engage a"
    " pane classified awaiting_user: when the Director is awaiting_user, send nothing this wake,"
    " whatever the other panes show. Otherwise re-engage the Director via cafleet member nudge"
    " when a due agent is stalled or finished, or the Director is finished with un-acked work."
)


def test_one_due_agent_reads_exactly_as_specified() -> None:
    text = wake_text([DueAgent(1, "Director", "director", ("interval",))], director_id=1)

    assert text == (
        "[monitor] wake: 1 agent due — director 1 (Director) [interval]. "
        + INSTRUCTIONS.format(d=1)
    )


def test_two_due_agents_use_the_plural_and_keep_their_order() -> None:
    due = [
        DueAgent(1, "Director", "director", ("stall-check",)),
        DueAgent(3, "worker", "member", ("interval", "status:blocked")),
    ]

    text = wake_text(due, director_id=1)

    assert text.startswith(
        "[monitor] wake: 2 agents due — director 1 (Director) [stall-check],"
        " member 3 (worker) [interval,status:blocked]. Capture each "
    )


def test_the_director_pane_named_in_the_instructions_is_the_fleet_director() -> None:
    text = wake_text([DueAgent(9, "worker", "member", ("interval",))], director_id=4)

    assert "with the Director pane (4) always inspected." in text
    assert text.endswith("or the Director is finished with un-acked work.")


def test_many_due_agents_are_counted_and_joined_with_commas() -> None:
    due = [DueAgent(n, f"m{n}", "member", ("interval",)) for n in range(10, 110)]

    text = wake_text(due, director_id=1)

    assert text.startswith("[monitor] wake: 100 agents due — member 10 (m10) [interval], ")
    assert ", member 109 (m109) [interval]. Capture each" in text


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("line1\nline2", "line1⏎line2"),
        ("crlf\r\nend", "crlf⏎end"),
        ("cr\rtab\tend", "cr⏎tab⏎end"),
        ("run $(date) | tee `x`", "run $﹙date) │ tee ˋxˋ"),
        ("esc\x1b[31mred", "esc�[31mred"),
        ("nul\x00del\x7fc1\x85", "nul�del�c1�"),
        ("plain name", "plain name"),
    ],
)
def test_names_are_sanitized_like_previews(name: str, shown: str) -> None:
    text = wake_text([DueAgent(3, name, "member", ("interval",))], director_id=1)

    assert f"member 3 ({shown}) [interval]." in text


def test_the_payload_is_always_one_line_without_control_characters() -> None:
    hostile = "a\nb\r\nc\td\x1b\x07e\x9b"
    text = wake_text([DueAgent(3, hostile, "member", ("interval",))], director_id=1)

    assert not any(ord(ch) < 0x20 or 0x7F <= ord(ch) <= 0x9F for ch in text)


def test_an_entry_lists_role_id_name_and_reasons() -> None:
    entry = DueAgent(5, "coder", "member", ("interval", "stall-check", "status:done")).entry()

    assert entry == "member 5 (coder) [interval,stall-check,status:done]"

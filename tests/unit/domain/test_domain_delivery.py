"""Skip reasons: the ledger's words, and how the CLI says them; what holds a delivery."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from cafleet.domain.delivery import (
    BEFORE_ENTER,
    INTERRUPTED,
    Channel,
    Delivery,
    DeliveryState,
    PushOutcome,
    Residue,
    SkipReason,
    describe_skip,
)
from cafleet.domain.holds import FAILING_HOLD_SECONDS, MOST_ATTEMPTS, Hold


def test_the_ledger_words_for_the_new_reasons() -> None:
    assert SkipReason.AGENT_STARTING == "agent-starting"
    assert SkipReason.dialog("trust this folder") == "dialog:trust this folder"
    assert SkipReason.not_agent("bash") == "not-agent:bash"
    assert BEFORE_ENTER == " (before Enter)"


@pytest.mark.parametrize(
    ("reason", "words"),
    [
        ("self", "the recipient is the sender"),
        ("no-placement", "the recipient has no pane"),
        ("pending-pane", "the recipient's pane is not recorded yet"),
        ("pane-gone", "the pane is gone"),
        ("agent-not-detected", "cannot tell what runs in the pane"),
        ("agent-starting", "the agent did not finish starting"),
        ("not-agent:bash", "pane runs bash"),
        ("dialog:do you want to proceed", "a dialog is on screen (do you want to proceed)"),
        (
            "not-agent:zsh (before Enter)",
            "pane runs zsh; the text was typed but Enter withheld",
        ),
        (
            "dialog:esc to cancel (before Enter)",
            "a dialog is on screen (esc to cancel); the text was typed but Enter withheld",
        ),
        ("pane-gone (before Enter)", "the pane is gone; the text was typed but Enter withheld"),
        ("something-new", "something-new"),
        ("", "unknown reason"),
        (None, "unknown reason"),
    ],
)
def test_describe_skip(reason: str | None, words: str) -> None:
    assert describe_skip(reason) == words


@pytest.mark.parametrize(
    ("outcome", "hold"),
    [
        (
            PushOutcome.skipped("dialog:esc to cancel", "tmux", "%1", Channel.KEYS),
            Hold(Residue.NOTHING, "dialog:esc to cancel"),
        ),
        (
            PushOutcome.skipped("agent-blocked", "herdr", "p", Channel.HERDR_PROMPT),
            Hold(Residue.NOTHING, "agent-blocked"),
        ),
        (
            replace(
                PushOutcome.failed("tmux paste-buffer timed out after 5s", "tmux", "%1", "keys"),
                residue=Residue.MAYBE_TEXT,
            ),
            Hold(Residue.MAYBE_TEXT, "tmux paste-buffer timed out after 5s"),
        ),
        (PushOutcome.skipped("not-agent:bash", "tmux", "%1", Channel.KEYS), None),
        (PushOutcome.failed("refused", "herdr", "p", Channel.HERDR_PROMPT), None),  # keys next
        (PushOutcome.failed("NotifierBug: boom"), None),  # no rung: a bug is not retried
        (PushOutcome.sent("tmux", "%1"), None),
    ],
)
def test_what_holds_a_delivery_for_its_pane(outcome: PushOutcome, hold: Hold | None) -> None:
    found = Hold.of(outcome)

    assert found == hold
    assert found is None or Hold.parse(found.note) == found


def test_a_dialog_is_waited_out_and_a_failing_pane_given_up() -> None:
    at = datetime(2026, 1, 1, tzinfo=UTC)
    row = Delivery(1, 2, DeliveryState.PENDING, at, attempt=2)
    dialog, failing = Hold(Residue.NOTHING, "dialog:x"), Hold(Residue.NOTHING, "timed out")

    later = at + timedelta(seconds=FAILING_HOLD_SECONDS)
    assert not dialog.given_up(row, later + timedelta(days=1))
    assert not failing.given_up(row, later - timedelta(seconds=1))
    assert failing.given_up(row, later)
    assert dialog.given_up(replace(row, attempt=MOST_ATTEMPTS), at)


def test_what_a_composer_without_the_preview_means() -> None:
    def gone(residue: Residue) -> tuple[str, str | None] | None:
        outcome = Hold(residue, "x").without_preview("tmux", "%1")
        return None if outcome is None else (outcome.state.value, outcome.error)

    assert gone(Residue.MAYBE_TEXT) is None  # it never landed: announced again
    assert gone(Residue.MAYBE_SUBMITTED) == ("sent", None)  # the late Enter took it
    assert gone(Residue.TEXT) == ("skipped", SkipReason.LEFT_COMPOSER)
    assert gone(Residue.UNKNOWN) == ("failed", INTERRUPTED)

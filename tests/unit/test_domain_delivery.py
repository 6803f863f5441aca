"""Skip reasons: the ledger's words, and how the CLI says them."""

from __future__ import annotations

import pytest

from cafleet.domain.delivery import BEFORE_ENTER, SkipReason, describe_skip


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

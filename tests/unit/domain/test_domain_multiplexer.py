"""Resolving the caller's multiplexer from its environment."""

from __future__ import annotations

import pytest

from cafleet.domain.errors import ErrorKind, Unavailable
from cafleet.domain.multiplexer import resolve_multiplexer
from cafleet.domain.placement import Multiplexer

TMUX_ENV = "tmux-test.sock,1234,0"
NOTHING = (
    "no supported multiplexer detected: neither HERDR_ENV nor TMUX is set;"
    " run cafleet inside a tmux or herdr session, or set CAFLEET_MULTIPLEXER"
)
AMBIGUOUS = (
    "ambiguous multiplexer environment: both HERDR_ENV and TMUX are set;"
    " set CAFLEET_MULTIPLEXER to 'tmux' or 'herdr' to disambiguate"
)


def failure(env: dict[str, str]) -> Unavailable:
    with pytest.raises(Unavailable) as raised:
        resolve_multiplexer(env)
    return raised.value


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"CAFLEET_MULTIPLEXER": "tmux"}, Multiplexer.TMUX),
        ({"CAFLEET_MULTIPLEXER": "herdr"}, Multiplexer.HERDR),
        ({"CAFLEET_MULTIPLEXER": "tmux", "HERDR_ENV": "1", "TMUX": TMUX_ENV}, Multiplexer.TMUX),
        ({"CAFLEET_MULTIPLEXER": "herdr", "TMUX": TMUX_ENV}, Multiplexer.HERDR),
        ({"HERDR_ENV": "1"}, Multiplexer.HERDR),
        ({"HERDR_ENV": "yes"}, Multiplexer.HERDR),
        ({"TMUX": TMUX_ENV}, Multiplexer.TMUX),
        ({"HERDR_ENV": "0", "TMUX": TMUX_ENV}, Multiplexer.TMUX),
        ({"HERDR_ENV": "", "TMUX": TMUX_ENV}, Multiplexer.TMUX),
        ({"CAFLEET_MULTIPLEXER": "", "TMUX": TMUX_ENV}, Multiplexer.TMUX),
    ],
)
def test_resolution_order(env: dict[str, str], expected: Multiplexer) -> None:
    assert resolve_multiplexer(env) is expected


def test_an_unsupported_explicit_choice_lists_the_supported_ones() -> None:
    error = failure({"CAFLEET_MULTIPLEXER": "bogus", "TMUX": TMUX_ENV})

    assert error.message == (
        "CAFLEET_MULTIPLEXER='bogus' is not a supported multiplexer (expected one of: herdr, tmux)"
    )
    assert error.kind is ErrorKind.UNAVAILABLE


def test_both_herdr_and_tmux_is_ambiguous() -> None:
    assert failure({"HERDR_ENV": "1", "TMUX": TMUX_ENV}).message == AMBIGUOUS


def test_a_herdr_pane_inside_tmux_is_herdr() -> None:
    # herdr passes its own environment on, TMUX included, when started inside tmux
    env = {"HERDR_ENV": "1", "HERDR_PANE_ID": "w1:p2", "TMUX": TMUX_ENV, "TMUX_PANE": "%3"}

    assert resolve_multiplexer(env) is Multiplexer.HERDR


@pytest.mark.parametrize(
    "env",
    [{}, {"HERDR_ENV": "0"}, {"HERDR_ENV": ""}, {"TMUX": ""}, {"TMUX_PANE": "%3"}],
)
def test_no_multiplexer_in_the_environment(env: dict[str, str]) -> None:
    assert failure(env).message == NOTHING

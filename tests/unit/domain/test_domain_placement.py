"""Placement: pending, starting (pane recorded, agent not yet seen ready) and ready."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from cafleet.domain.panes import PaneInfo
from cafleet.domain.placement import (
    CodingAgent,
    Multiplexer,
    PaneLocation,
    PaneState,
    Placement,
    PushTarget,
)
from cafleet.domain.placement import director_placement as director

T0 = datetime(2026, 1, 1, 8, 0, tzinfo=UTC)


def member(pane_id: str | None = None) -> Placement:
    return Placement(5, 1, Multiplexer.TMUX, "main", "@0", pane_id, CodingAgent.CODEX, T0, "s")


def test_a_registered_member_is_pending_until_its_pane_is_recorded() -> None:
    placement = member()

    assert (placement.is_pending, placement.is_starting) == (True, False)
    assert (placement.ready_at, placement.ready_rule) == (None, None)


def test_a_recorded_pane_is_starting_until_its_agent_was_seen_ready() -> None:
    starting = member().with_pane("%4")

    assert (starting.is_pending, starting.is_starting) == (False, True)

    ready = starting.became_ready("screen", T0 + timedelta(seconds=3))

    assert (ready.is_pending, ready.is_starting) == (False, False)
    assert (ready.ready_at, ready.ready_rule) == (T0 + timedelta(seconds=3), "screen")
    assert ready.with_pane("%4") == ready  # the rest is kept
    assert starting.ready_at is None  # frozen: a new placement, the old one unchanged


def test_the_director_s_placement_is_ready_from_the_start() -> None:
    pane = PaneLocation(Multiplexer.HERDR, "w1", "w1:t1", "w1:p1", "herdr.sock")

    placement = director(1, pane, CodingAgent.CLAUDE, T0)

    assert (placement.ready_at, placement.ready_rule) == (T0, "director")
    assert not placement.is_starting


def test_a_push_target_knows_whether_its_agent_is_ready() -> None:
    starting = member().with_pane("%4")

    assert PushTarget.of(starting).ready is False
    assert PushTarget.of(starting.became_ready("hook", T0)).ready is True


def test_the_pane_state_comes_from_the_multiplexer_s_report_and_readiness() -> None:
    starting = member("%3")
    ready = starting.became_ready("hook", T0)

    assert ready.pane_state(PaneInfo("%3", False, "claude")) is PaneState.RUNNING
    assert starting.pane_state(PaneInfo("%3", False, "claude")) is PaneState.STARTING
    assert ready.pane_state(PaneInfo("%3", True, "")) is PaneState.GONE
    assert ready.pane_state(None) is PaneState.GONE

"""TmuxPaneDriver cases that only make sense against tmux: side effects on the tmux server
itself, checked with raw tmux commands that bypass the driver."""

from __future__ import annotations

from pathlib import Path

import pytest

from cafleet.domain.panes import PaneGone

from .backends import TmuxBackend

pytestmark = pytest.mark.tmux


def test_an_argument_ending_with_semicolon_cannot_run_the_next_one_as_a_tmux_command(
    tmux: TmuxBackend, tmp_path: Path
) -> None:
    # claude's argv ends [..., "--name", <member name>, <prompt>]: a member name ending in
    # ';' must not make a one-word prompt run as a tmux command (here: new-window)
    argv = tmux.recorder_argv("--name", "worker;", "new-window")

    pane_id = tmux.driver.spawn(tmux.anchor, argv, {}, str(tmp_path))

    assert tmux.raw("list-windows", "-a", "-F", "#{window_id}").split() == ["@0"]
    assert tmux.launched(pane_id, argv)["argv"] == argv


def test_a_paste_into_a_missing_pane_leaves_no_buffer_behind(tmux: TmuxBackend) -> None:
    pane_id = tmux.spawn_agent()
    tmux.driver.kill(pane_id)

    with pytest.raises(PaneGone):
        tmux.driver.paste_text(pane_id, "hello\nworld")

    assert tmux.raw("list-buffers", "-F", "#{buffer_name}") == ""


def test_a_successful_paste_leaves_no_buffer_behind(tmux: TmuxBackend) -> None:
    pane_id = tmux.spawn_agent()

    tmux.driver.paste_text(pane_id, "hello\nworld")

    assert tmux.raw("list-buffers", "-F", "#{buffer_name}") == ""


def test_spawn_keeps_the_focus_on_the_anchor_pane(tmux: TmuxBackend) -> None:
    tmux.spawn_agent()

    assert tmux.raw("display-message", "-p", "-t", "t", "#{pane_id}") == tmux.anchor


def test_driver_calls_target_the_socket_it_was_given(tmux: TmuxBackend) -> None:
    pane_id = tmux.spawn_agent()

    listed = tmux.raw("list-panes", "-a", "-F", "#{pane_id}").split()

    assert set(listed) == {tmux.anchor, pane_id}


def test_claim_marks_the_pane_with_an_option_and_keeps_a_mark_already_there(
    tmux: TmuxBackend,
) -> None:
    fresh = tmux.spawn_agent()
    marked = tmux.spawn_agent()
    tmux.raw("set-option", "-p", "-t", marked, "@cafleet-pane", "set-by-an-earlier-claim")

    claimed = tmux.driver.claim(fresh)
    kept = tmux.driver.claim(marked)

    shown = tmux.raw("display-message", "-p", "-t", fresh, "#{@cafleet-pane}")
    assert shown and claimed.endswith(f".{shown}")
    assert kept.endswith(".set-by-an-earlier-claim")
    server = tmux.raw("display-message", "-p", "-t", fresh, "#{pid}.#{start_time}.#{pane_pid}")
    assert claimed == f"{server}.{shown}"

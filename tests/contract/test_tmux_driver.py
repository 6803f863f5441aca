"""TmuxPaneDriver cases that only make sense against tmux: side effects on the tmux server
itself, checked with raw tmux commands that bypass the driver."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from cafleet.adapters.tmux import driver as tmux_driver
from cafleet.domain.errors import Unavailable
from cafleet.domain.panes import PaneGone, ServerGone

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


# --------------------------------------------------------------------------- foregrounds
# A process in a tool sandbox (its own pid namespace and /proc) cannot read the panes'
# processes: the tmux server reads their command lines for it. Here this process's /proc is
# made to "not show" the panes, which sends the driver down that road on the real server.


def in_front(tmux: TmuxBackend, argv: list[str]) -> str:
    pane = tmux.raw(
        "new-window", "-d", "-P", "-F", "#{pane_id}", "-c", str(tmux.workdir), "--", *argv
    )
    deadline = time.monotonic() + 10
    while tmux.raw("display-message", "-p", "-t", pane, "#{pane_current_command}") != (
        Path(argv[0]).name
    ):
        assert time.monotonic() < deadline, argv
        time.sleep(0.05)
    return pane


@pytest.fixture
def runtimes(tmux: TmuxBackend) -> dict[str, str]:
    script = tmux.workdir / "agent.py"
    script.write_text("import time\ntime.sleep(60)\n")
    return {
        "repl": in_front(tmux, [sys.executable, "-i", "-q"]),
        "script": in_front(tmux, [sys.executable, str(script), "--flag", "two words"]),
        "other": in_front(tmux, ["sleep", "60"]),
    }


def test_a_runtimes_command_line_read_on_the_servers_side_is_what_proc_shows(
    tmux: TmuxBackend, runtimes: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    here = tmux.tmux_driver.panes_of(list(runtimes.values()))
    monkeypatch.setattr(tmux_driver, "shows_terminal", lambda _pid, _tty: False)

    there = tmux.tmux_driver.panes_of(list(runtimes.values()))

    argv = {name: (there[pane].argv if there[pane] else "gone") for name, pane in runtimes.items()}
    assert argv == {
        "repl": (sys.executable, "-i", "-q"),
        "script": (sys.executable, str(tmux.workdir / "agent.py"), "--flag", "two words"),
        "other": None,  # not a runtime: its name says it all
    }
    assert there == here
    assert tmux.tmux_driver.pane(runtimes["repl"]) == here[runtimes["repl"]]
    # run-shell showed nothing in any pane and left no buffer behind
    assert set(tmux.raw("list-panes", "-a", "-F", "#{pane_in_mode}").split()) == {"0"}
    assert tmux.raw("list-buffers", "-F", "#{buffer_name}") == ""


def test_where_this_proc_shows_the_panes_the_server_is_not_asked(
    tmux: TmuxBackend, runtimes: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def never(_pids: object) -> object:
        raise AssertionError("the server was asked")

    monkeypatch.setattr(tmux.tmux_driver, "_foregrounds_on_server", never)

    infos = tmux.tmux_driver.panes_of(list(runtimes.values()))

    assert infos[runtimes["repl"]] is not None and infos[runtimes["repl"]].argv is not None


def test_what_the_server_cannot_read_is_not_told(tmux: TmuxBackend) -> None:
    gone = 2**22 + 11  # above the largest pid Linux hands out

    assert tmux.tmux_driver._foregrounds_on_server([gone]) == {gone: None}
    assert set(tmux.raw("list-panes", "-a", "-F", "#{pane_in_mode}").split()) == {"0"}


def test_a_server_that_no_longer_runs_is_gone_and_a_missing_binary_is_not(
    tmp_path: Path,
) -> None:
    # a pane's server is gone (nothing listens at its socket): its panes went with it
    gone = tmux_driver.TmuxPaneDriver(socket=str(tmp_path / "no-such-server"))
    with pytest.raises(ServerGone):
        gone.pane("%0")
    # no tmux at all says nothing about the server: not taken for a server that is gone
    missing = tmux_driver.TmuxPaneDriver(socket=str(tmp_path / "s"), binary="/nonexistent/tmux")
    with pytest.raises(Unavailable) as raised:
        missing.pane("%0")
    assert not isinstance(raised.value, ServerGone)

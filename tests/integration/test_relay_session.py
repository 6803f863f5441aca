"""The tmux session a relay in no pane makes for its members (adapters/tmux/relay_session.py),
on a real tmux whose socket directory (TMUX_TMPDIR) is the test's own."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from cafleet.adapters.tmux.relay_session import relay_session

pytestmark = pytest.mark.tmux


@pytest.fixture
def tmux(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., str]]:
    """`tmux -L cafleet ...` in a socket directory of the test's (a short path: a socket's
    must fit in 108 bytes); its server is killed afterwards."""
    binary = shutil.which("tmux")
    if binary is None:
        pytest.skip("tmux is not installed")
    sockets = Path(tempfile.mkdtemp(prefix="cafleet-tmux-"))
    for name in ("TMUX", "TMUX_PANE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TMUX_TMPDIR", str(sockets))

    def run(*args: str) -> str:
        done = subprocess.run([binary, "-L", "cafleet", *args], capture_output=True, text=True,
                              timeout=15, check=True)  # fmt: skip
        return done.stdout.strip()

    try:
        yield run
    finally:
        subprocess.run([binary, "-L", "cafleet", "kill-server"], capture_output=True, check=False)
        shutil.rmtree(sockets, ignore_errors=True)


def panes(tmux: Callable[..., str]) -> list[str]:
    return tmux("list-panes", "-a", "-F", "#{pane_id} #{pane_dead} #{@cafleet-relay-home}")


def test_the_session_is_made_once_and_found_again_by_a_restarted_relay(tmux) -> None:
    made = relay_session("build-server")
    again = relay_session("build-server")

    assert again.pane == made.pane
    assert (made.name, made.attach) == ("members", "tmux -L cafleet attach -t members")
    assert (made.pane.session, made.pane.host) == ("members", "build-server")
    assert made.pane.socket == tmux("display-message", "-p", "-t", "=members", "#{socket_path}")
    assert made.pane.identity  # claimed: a later pane that takes its id is not it
    assert panes(tmux).splitlines() == [f"{made.pane.pane_id} 0 1"]


def test_its_first_pane_stays_when_its_shell_exits(tmux) -> None:
    home = relay_session("build-server").pane.pane_id

    tmux("respawn-pane", "-k", "-t", home, "true")  # the shell there exits

    assert tmux("display-message", "-p", "-t", home, "#{pane_dead}") == "1"
    assert relay_session("build-server").pane.pane_id == home  # members still open beside it


def test_a_closed_first_pane_is_replaced_by_a_new_window(tmux) -> None:
    first = relay_session("build-server").pane
    member = tmux("split-window", "-d", "-t", first.pane_id, "-P", "-F", "#{pane_id}", "cat")
    tmux("kill-pane", "-t", first.pane_id)

    home = relay_session("build-server").pane

    assert home.pane_id not in (first.pane_id, member)
    assert home.window_id != first.window_id
    assert panes(tmux).splitlines() == [f"{member} 0 ", f"{home.pane_id} 0 1"]

"""Starting a process as a job of the pane's tmux server (adapters/tmux/server_jobs), on a
private server: what a command in a tool sandbox does so that its drainer outlives it."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from cafleet.adapters.tmux.server_jobs import server_is_elsewhere, server_of, start_on_server
from support.tmux import TmuxServer

pytestmark = pytest.mark.tmux


def in_pane(tmux: TmuxServer, pid: str | int) -> dict[str, str]:
    """This process's environment as a pane of the server would set it."""
    return {**os.environ, "TMUX": f"{tmux.socket},{pid},0", "TMUX_PANE": tmux.pane_id}


@pytest.fixture
def runtime(tmp_path: Path) -> Path:
    path = tmp_path / "run"
    path.mkdir(mode=0o700)
    return path


def wait_for(path: Path, timeout: float = 10.0) -> str:
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never written"
        time.sleep(0.05)
    time.sleep(0.1)  # written in one go, but give the writer its close
    return path.read_text()


@pytest.mark.parametrize(
    ("value", "server"),
    [
        ("/tmp/tmux-0/default,4242,3", ("/tmp/tmux-0/default", 4242)),
        ("/s,0,0", None),  # as scripts set it: no process
        ("/s", None),
        ("", None),
    ],
)
def test_the_server_is_read_from_tmux_variable(value: str, server: object) -> None:
    assert server_of({"TMUX": value}) == server


def test_a_server_this_process_can_see_is_not_elsewhere(tmux: TmuxServer) -> None:
    pid = tmux.run("display-message", "-p", "#{pid}").strip()
    assert not server_is_elsewhere(in_pane(tmux, pid))
    assert not server_is_elsewhere({})  # not in a pane at all


def test_a_server_pid_that_is_no_tmux_here_is_elsewhere(tmux: TmuxServer) -> None:
    """In another pid namespace the server's pid is absent, or another process's."""
    assert server_is_elsewhere(in_pane(tmux, os.getpid()))
    assert server_is_elsewhere(in_pane(tmux, 2**22 + 1))  # above any pid_max: absent


def test_a_job_runs_with_the_given_environment_and_directory_and_leaves_no_file(
    tmux: TmuxServer, runtime: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out.txt"
    work = tmp_path / "work"
    work.mkdir()
    program = (
        "import os, sys; open(sys.argv[1], 'w').write(os.environ['JOB_SECRET'] + '|' + os.getcwd())"
    )
    env = {**in_pane(tmux, 1), "JOB_SECRET": "s3cr#t $HOME"}

    assert start_on_server(env, [sys.executable, "-c", program, str(out)], str(work), runtime,
                           sys.executable)  # fmt: skip

    assert wait_for(out) == f"s3cr#t $HOME|{work}"  # the value as given: no expansion
    assert list(runtime.iterdir()) == []  # the launcher took its file


def test_a_server_that_cannot_be_asked_leaves_no_launch_file(runtime: Path, tmp_path: Path) -> None:
    env = {**os.environ, "TMUX": f"{tmp_path / 'nobody-here'},4242,0"}

    assert not start_on_server(env, [sys.executable, "-c", "pass"], str(tmp_path), runtime,
                               sys.executable)  # fmt: skip

    assert list(runtime.iterdir()) == []

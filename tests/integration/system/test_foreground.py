"""The foreground argv read from a /proc tree (a real directory laid out like Linux's), and
whether that /proc shows a pane's process at all (it does not from another pid namespace)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from cafleet.adapters.system.foreground import foreground_argv, shows_terminal

# no CAFLEET_*, multiplexer or agent-home variable of the outer shell leaks in
pytestmark = pytest.mark.usefixtures("outer_variables_removed")


def process(proc: Path, pid: int, stat: str, cmdline: bytes | None = None) -> None:
    (proc / str(pid)).mkdir()
    (proc / str(pid) / "stat").write_text(stat)
    if cmdline is not None:
        (proc / str(pid) / "cmdline").write_bytes(cmdline)


def stat_line(pid: int, comm: str, tpgid: int, tty_nr: int = 34817) -> str:
    # pid (comm) state ppid pgrp session tty_nr tpgid flags ...
    return f"{pid} ({comm}) S 1 {pid} {pid} {tty_nr} {tpgid} 4194560 0 0\n"


def test_the_foreground_group_leader_argv_is_read(tmp_path: Path) -> None:
    process(tmp_path, 10, stat_line(10, "bash", 20))
    process(tmp_path, 20, stat_line(20, "node", 20), b"node\0/n/.bin/codex\0--\0hi there\0")

    assert foreground_argv(10, tmp_path) == ("node", "/n/.bin/codex", "--", "hi there")


def test_a_command_name_with_spaces_and_parentheses_does_not_shift_the_fields(
    tmp_path: Path,
) -> None:
    process(tmp_path, 10, stat_line(10, "a) S 1 2 3 4 99 (b", 20))
    process(tmp_path, 20, stat_line(20, "x", 20), b"agent\0")

    assert foreground_argv(10, tmp_path) == ("agent",)


@pytest.mark.parametrize(
    ("pid", "stat", "leader"),
    [
        pytest.param(0, None, None, id="no-pid"),
        pytest.param(10, None, None, id="gone"),
        pytest.param(10, stat_line(10, "bash", -1), None, id="no-terminal"),
        pytest.param(10, stat_line(10, "bash", 20), None, id="leader-gone"),
        pytest.param(10, stat_line(10, "bash", 20), b"", id="zombie-leader"),
        pytest.param(10, "garbage", None, id="unreadable-stat"),
    ],
)
def test_cannot_tell_is_none(
    tmp_path: Path, pid: int, stat: str | None, leader: bytes | None
) -> None:
    if stat is not None:
        process(tmp_path, pid, stat)
    if leader is not None:
        process(tmp_path, 20, stat_line(20, "x", 20), leader)

    assert foreground_argv(pid, tmp_path) is None


@pytest.fixture
def terminal() -> Iterator[str]:
    """A real pseudo-terminal's path, as tmux names a pane's (`/dev/pts/N`)."""
    leader, follower = os.openpty()
    try:
        yield os.ttyname(follower)
    finally:
        os.close(leader)
        os.close(follower)


def tty_nr(path: str) -> int:
    """A terminal's device number as /proc/<pid>/stat writes it."""
    device = os.stat(path).st_rdev
    major, minor = os.major(device), os.minor(device)
    return (minor & 0xFF) | (major << 8) | ((minor & ~0xFF) << 12)


def test_a_process_on_the_panes_terminal_is_shown_here(tmp_path: Path, terminal: str) -> None:
    process(tmp_path, 10, stat_line(10, "bash", 20, tty_nr(terminal)))

    assert shows_terminal(10, terminal, tmp_path)


@pytest.mark.parametrize(
    ("pid", "other_terminal", "terminal_here"),
    [
        pytest.param(99, False, True, id="no-such-pid-here"),
        pytest.param(10, True, True, id="another-process-under-that-pid"),
        pytest.param(10, False, False, id="the-terminal-is-not-here"),
    ],
)
def test_a_process_of_another_pid_namespace_is_not_shown(
    tmp_path: Path, terminal: str, pid: int, other_terminal: bool, terminal_here: bool
) -> None:
    """A sandbox's /proc has other processes (or none) under the multiplexer's pids, and its
    /dev/pts is its own."""
    device = tty_nr(terminal) + (1 if other_terminal else 0)
    process(tmp_path, 10, stat_line(10, "sh", 10, device))
    path = terminal if terminal_here else str(tmp_path / "pts-elsewhere")

    assert not shows_terminal(pid, path, tmp_path)


def test_a_process_without_a_terminal_is_not_shown(tmp_path: Path, terminal: str) -> None:
    process(tmp_path, 10, stat_line(10, "sh", -1, 0))

    assert not shows_terminal(10, terminal, tmp_path)

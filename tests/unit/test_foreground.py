"""The foreground argv read from a /proc tree (a real directory laid out like Linux's)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cafleet.adapters.foreground import foreground_argv


def process(proc: Path, pid: int, stat: str, cmdline: bytes | None = None) -> None:
    (proc / str(pid)).mkdir()
    (proc / str(pid) / "stat").write_text(stat)
    if cmdline is not None:
        (proc / str(pid) / "cmdline").write_bytes(cmdline)


def stat_line(pid: int, comm: str, tpgid: int) -> str:
    # pid (comm) state ppid pgrp session tty_nr tpgid flags ...
    return f"{pid} ({comm}) S 1 {pid} {pid} 34817 {tpgid} 4194560 0 0\n"


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

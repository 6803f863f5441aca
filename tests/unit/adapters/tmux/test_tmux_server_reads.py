"""The command the tmux server runs to read the panes' foreground command lines for a
process that cannot (one in a tool sandbox), and how its answer is read back. The command
itself runs on a real tmux server in tests/contract/test_tmux_driver.py."""

from __future__ import annotations

import subprocess

from cafleet.adapters.tmux.server_reads import parsed, read_command


def test_tmux_formats_cannot_touch_the_command_and_nothing_is_printed() -> None:
    command = read_command([12, 345], "/opt/my tmux/bin/tmux", "cafleet-abc")

    assert "#" not in command.replace("##", "")  # every `#` doubled: no format expands
    assert "${s####*)}" in command
    assert "for p in 12 345;" in command
    assert "'/opt/my tmux/bin/tmux' load-buffer -b cafleet-abc -" in command
    assert command.endswith(">/dev/null 2>&1; exit 0")  # no output, never a failure


def test_the_command_is_valid_shell_once_tmux_undoubled_it() -> None:
    shell = read_command([1], "/nonexistent/tmux", "b").replace("##", "#")

    checked = subprocess.run(["sh", "-n", "-c", shell], capture_output=True, text=True, check=False)

    assert (checked.returncode, checked.stderr) == (0, "")


def test_the_answer_gives_each_pids_argv() -> None:
    answer = (
        "=10\n 6e 6f 64 65 00 2f 6e 2f 63 6f 64 65 78 00 2d 2d 00 68 69 20\n"
        " 74 68 65 72 65 00\n"
        "=11\n"  # its leader could not be read
        "=12\n 6e 6f 64 65 00 2d 69 00\n"
    )

    assert parsed(answer) == {
        10: ("node", "/n/codex", "--", "hi there"),
        11: None,
        12: ("node", "-i"),
    }


def test_an_answer_that_is_not_the_commands_says_nothing() -> None:
    assert parsed("=10\nnot hex at all\n") == {}
    assert parsed("") == {}

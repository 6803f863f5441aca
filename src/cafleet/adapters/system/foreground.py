"""The command line of the process in front of a terminal, read from /proc (Linux only).

Standard library only. Elsewhere, or when the process is gone or unreadable, the answer is
None ("cannot tell"), which the agent check treats as not the agent.

A process in another pid namespace than the multiplexer's (a coding agent's tool sandbox)
has a /proc of its own, in which the multiplexer's pids name other processes or none:
`shows_terminal` tells whether this /proc shows the pane's process at all.
"""

from __future__ import annotations

import os
from pathlib import Path

PROC = Path("/proc")
# fields of /proc/<pid>/stat counted from the state field that follows the `(comm)`
_TTY_NR = 4  # field 7: the controlling terminal's device number
_TPGID = 5  # field 8: the terminal's foreground process group


def foreground_argv(pid: int, proc: Path = PROC) -> tuple[str, ...] | None:
    """The argv of the foreground process group's leader on `pid`'s controlling terminal
    (what tmux names `pane_current_command` after)."""
    fields = _stat(pid, proc)
    try:
        group = int(fields[_TPGID]) if fields else 0
        if group <= 0:
            return None
        raw = (proc / str(group) / "cmdline").read_bytes()
    except (OSError, ValueError, IndexError):
        return None
    return argv_of(raw)


def shows_terminal(pid: int, terminal: str, proc: Path = PROC) -> bool:
    """Whether `pid` in this /proc is a process whose controlling terminal is `terminal`
    (a pane's tty, `/dev/pts/3`): False where this /proc is another pid namespace's, or
    the terminal is not there to compare (a sandbox's /dev/pts is its own)."""
    fields = _stat(pid, proc)
    try:
        device = int(fields[_TTY_NR]) if fields else 0
        wanted = os.stat(terminal).st_rdev if terminal else 0
    except (OSError, ValueError, IndexError):
        return False
    if device == 0 or wanted == 0:
        return False
    # the kernel's encoding of a device number in stat: minor's low byte, major, minor's rest
    major, minor = (device >> 8) & 0xFFF, (device & 0xFF) | ((device >> 12) & 0xFFF00)
    return (major, minor) == (os.major(wanted), os.minor(wanted))


def argv_of(raw: bytes) -> tuple[str, ...] | None:
    """A command line as /proc/<pid>/cmdline holds it (words ended by NUL); None when empty
    (a zombie, a kernel thread)."""
    words = raw.split(b"\0")
    if words and not words[-1]:
        words.pop()
    return tuple(w.decode(errors="replace") for w in words) or None


def _stat(pid: int, proc: Path) -> list[str] | None:
    """The fields of /proc/<pid>/stat after the `(comm)`; None when it cannot be read."""
    if pid <= 0:
        return None
    try:
        stat = (proc / str(pid) / "stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    # the command name may hold spaces and parentheses: fields start after the last `)`
    return stat.rpartition(")")[2].split()

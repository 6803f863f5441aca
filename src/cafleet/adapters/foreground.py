"""The command line of the process in front of a terminal, read from /proc (Linux only).

Standard library only. Elsewhere, or when the process is gone or unreadable, the answer is
None ("cannot tell"), which the agent check treats as not the agent.
"""

from __future__ import annotations

from pathlib import Path

PROC = Path("/proc")
_TPGID = 5  # stat field 8, counted from the state field that follows the `(comm)`


def foreground_argv(pid: int, proc: Path = PROC) -> tuple[str, ...] | None:
    """The argv of the foreground process group's leader on `pid`'s controlling terminal
    (what tmux names `pane_current_command` after)."""
    if pid <= 0:
        return None
    try:
        stat = (proc / str(pid) / "stat").read_text(encoding="ascii", errors="replace")
        # the command name may hold spaces and parentheses: fields start after the last `)`
        group = int(stat.rpartition(")")[2].split()[_TPGID])
        if group <= 0:
            return None
        raw = (proc / str(group) / "cmdline").read_bytes()
    except (OSError, ValueError, IndexError):
        return None
    words = raw.split(b"\0")
    if words and not words[-1]:
        words.pop()
    return tuple(w.decode(errors="replace") for w in words) or None

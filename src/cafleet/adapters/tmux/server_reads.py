"""Reading the panes' foreground command lines on the tmux server's side.

A process in another pid namespace than the tmux server (a coding agent's tool sandbox:
Codex runs every tool call in one) cannot read the panes' processes from its own /proc. The
tmux server can: `run-shell` runs a shell command in the server's namespace. For each pane
process the command reads the foreground process group from `/proc/<pid>/stat` and dumps
that group leader's `/proc/<leader>/cmdline` in hex (NUL bytes and any other byte survive),
and hands the result to a tmux buffer with a second tmux client started by the server's own
shell; the same client call that ran `run-shell` prints that buffer and deletes it.

What `run-shell` prints would be shown in a pane (tmux 3.3a puts the pane in view mode, and
a non-zero exit status becomes a message), so the command prints nothing and always exits 0.
tmux expands formats in the command: every `#` is doubled to stay a `#`.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence

from cafleet.adapters.system.foreground import argv_of

# per pid: a `=<pid>` line, then (when the leader can be read) its cmdline in hex words
_EACH = (
    'echo "=$p"; read -r s < /proc/$p/stat || continue; set -- ${s##*)};'
    ' [ "$6" -gt 0 ] && od -An -v -tx1 < /proc/$6/cmdline'
)
_MARK = re.compile(r"^=(\d+)$")


def read_command(pids: Sequence[int], tmux: str, buffer: str) -> str:
    """The `run-shell` command that leaves the pids' foreground argv in `buffer`."""
    listed = " ".join(str(int(pid)) for pid in pids)
    load = f"{shlex.quote(tmux)} load-buffer -b {shlex.quote(buffer)} -"
    loop = f"for p in {listed}; do {_EACH}; done 2>/dev/null"
    script = f"{{ {loop} | {load}; }} >/dev/null 2>&1; exit 0"
    return script.replace("#", "##")


def parsed(answer: str) -> dict[int, tuple[str, ...] | None]:
    """Each pid's foreground argv from the buffer's text; None where it could not be read."""
    found: dict[int, bytearray] = {}
    current: bytearray | None = None
    for line in answer.splitlines():
        if mark := _MARK.match(line.strip()):
            current = found.setdefault(int(mark.group(1)), bytearray())
        elif current is not None:
            try:
                current.extend(bytes.fromhex(line))
            except ValueError:  # not what od prints: the answer cannot be trusted
                return {}
    return {pid: argv_of(bytes(raw)) for pid, raw in found.items()}

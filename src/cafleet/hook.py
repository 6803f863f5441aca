"""`python -m cafleet.hook <event file> <event>`: a coding agent's hook reports its state.

A member's agent runs this from its hooks (Claude Code's `--settings`). It appends one line,
`<event> <unix time>`, to the member's event file and prints nothing: some hooks' output
would reach the model. It reads and ignores the hook's JSON on stdin, never fails the hook
(a broken report must not block the agent), and imports only the standard library.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time


def main(args: list[str] | None = None) -> int:
    args = sys.argv[1:] if args is None else args
    if len(args) != 2:
        return 0
    path, event = args
    with contextlib.suppress(OSError, ValueError):
        sys.stdin.read()
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, f"{event} {time.time():.3f}\n".encode())
        finally:
            os.close(fd)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""`python -m cafleet.launch <launch file>`: replace this process with an agent.

The herdr driver cannot hand a pane an argv, so it writes a launch file (JSON
`{"argv": [...], "env": {...}, "cwd": "..."}`, mode 0600) and types one `exec` line
running this module into the pane's fresh shell. This module reads and deletes the file,
changes to `cwd`, clears the terminal (screen and scrollback: the shell's prompt and the
typed `exec` line would otherwise stay on the pane's screen above the agent) and execs
`argv` with the pane's environment plus `env`. Standard library only; any failure prints
one line to stderr and exits 127 (like a shell that cannot run a command).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys

USAGE = "usage: python -m cafleet.launch <launch file>"
CLEAR = "\x1b[H\x1b[2J\x1b[3J"  # cursor home, erase the screen, erase the scrollback


def _fail(message: str) -> int:
    print(f"cafleet.launch: {message}", file=sys.stderr, flush=True)
    return 127


def _load(path: str) -> tuple[list[str], dict[str, str], str]:
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(path)  # read once: the file carries the member's environment
    argv, env, cwd = data.get("argv"), data.get("env", {}), data.get("cwd")
    if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
        raise ValueError("argv must be a non-empty list of strings")
    if not isinstance(env, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in env.items()
    ):
        raise ValueError("env must map strings to strings")
    if not isinstance(cwd, str) or not cwd:
        raise ValueError("cwd must be a path")
    return argv, env, cwd


def main(args: list[str] | None = None) -> int:
    args = sys.argv[1:] if args is None else args
    if len(args) != 1:
        return _fail(USAGE)
    try:
        argv, env, cwd = _load(args[0])
    except (OSError, ValueError, AttributeError) as exc:
        return _fail(f"cannot read launch file {args[0]}: {exc}")
    try:
        os.chdir(cwd)
    except OSError as exc:
        return _fail(f"cannot change to {cwd}: {exc.strerror or exc}")
    if sys.stdout.isatty():
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.write(CLEAR)
            sys.stdout.flush()
    try:
        os.execvpe(argv[0], argv, {**os.environ, **env})
    except OSError as exc:
        return _fail(f"cannot run {argv[0]}: {exc.strerror or exc}")


if __name__ == "__main__":
    sys.exit(main())

"""`python -m cafleet.entrypoints.processes.launch <launch file>`: start a member's agent in this
pane.

Every member starts this way, on tmux and herdr alike, so no argv or environment value
ever appears on a multiplexer command line. The launch file is JSON, mode 0600, in a
directory only the user can enter; the launcher reads it only while both still are (a
regular file, not a link, owned by this user, closed to group and others, with no second
name), so a file planted or swapped by anyone else is refused:

    {"argv": [...], "env": {...}, "cwd": "...",
     "inherit": true,          # env adds to this process's environment (default); false:
                               # env is the whole environment, but for the pane's own
                               # variables (TERM, TMUX, TMUX_PANE, HERDR_* but HERDR_AGENT)
     "state": "<directory>"}   # optional: supervise the agent (below)

The launcher reads and deletes the file, changes to `cwd` and clears the terminal (the
shell's echo of the launch line would otherwise stay above the agent). Without `state` it
execs `argv`. With `state` it runs the agent as a child in the terminal's foreground (so
the multiplexer shows the agent's name), records `running <pid>` and then `exited <code>`
in `<state>/status`, and when the agent ends before `<state>/ready` exists (it failed
during start-up) keeps the pane open for a while so its last words can still be read.
Standard library only; any failure prints one line to stderr and exits 127.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import time

from cafleet.adapters.runtime.private_files import (
    NotPrivate,
    check_private_directory,
    create_private,
    open_private,
    problem_of,
)

USAGE = "usage: python -m cafleet.entrypoints.processes.launch <launch file>"
CLEAR = "\x1b[H\x1b[2J\x1b[3J"  # cursor home, erase the screen, erase the scrollback
PANE_VARIABLES = ("TERM", "TMUX", "TMUX_PANE", "COLUMNS", "LINES")
PANE_PREFIXES = ("HERDR_",)
# herdr reads its agent-identity hint from the agent's environment and never sets it for a
# pane: the launch file's names the member's agent, one the pane inherited names another
MEMBER_VARIABLES = ("HERDR_AGENT",)
HOLD_SECONDS = 30.0  # how long a pane stays after an agent died during start-up


class _Launch:
    def __init__(self, data: object) -> None:
        if not isinstance(data, dict):
            raise ValueError("the launch file must hold a JSON object")
        argv, env, cwd = data.get("argv"), data.get("env", {}), data.get("cwd")
        if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
            raise ValueError("argv must be a non-empty list of strings")
        if not isinstance(env, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in env.items()
        ):
            raise ValueError("env must map strings to strings")
        if not isinstance(cwd, str) or not cwd:
            raise ValueError("cwd must be a path")
        state = data.get("state")
        if state is not None and not isinstance(state, str):
            raise ValueError("state must be a directory path")
        self.argv: list[str] = argv
        self.env: dict[str, str] = env
        self.cwd: str = cwd
        self.inherit = data.get("inherit", True) is not False
        self.state: str | None = state

    def environment(self) -> dict[str, str]:
        if self.inherit:
            return {**os.environ, **self.env}
        given = {k: v for k, v in self.env.items() if not _pane_owned(k)}
        return {**given, **{k: v for k, v in os.environ.items() if _pane_owned(k)}}


def _pane_owned(name: str) -> bool:
    """Variables the multiplexer set for this pane: they win over the launch file's."""
    if name in MEMBER_VARIABLES:
        return False
    return name in PANE_VARIABLES or name.startswith(PANE_PREFIXES)


def _fail(message: str) -> int:
    print(f"cafleet.launch: {message}", file=sys.stderr, flush=True)
    return 127


def _load(path: str) -> _Launch:
    try:
        try:
            check_private_directory(os.path.dirname(os.path.abspath(path)))
        except NotPrivate as exc:
            raise NotPrivate(path, f"lies in {exc}") from None
        fd = open_private(path, os.O_RDONLY, closed=0o077)
        with os.fdopen(fd, encoding="utf-8") as handle:
            if os.fstat(fd).st_nlink != 1:
                raise NotPrivate(path, "a hard link: the file has another name")
            data = json.load(handle)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(path)  # read once: the file carries the member's environment
    return _Launch(data)


def _write_status(state: str, text: str) -> None:
    temporary = os.path.join(state, f".status-{os.getpid()}")
    with contextlib.suppress(OSError):
        create_private(temporary, text + "\n")
        os.replace(temporary, os.path.join(state, "status"))


def _take_terminal() -> None:
    """In the child: become the terminal's foreground process group."""
    os.setpgid(0, 0)
    if not os.isatty(0):
        return
    previous = signal.signal(signal.SIGTTOU, signal.SIG_IGN)  # asking from the background
    try:
        os.tcsetpgrp(0, os.getpgrp())
    finally:
        signal.signal(signal.SIGTTOU, previous)


def _reclaim_terminal() -> None:
    """In the supervisor, after the agent ended: the foreground is ours again."""
    if not os.isatty(0):
        return
    previous = signal.signal(signal.SIGTTOU, signal.SIG_IGN)
    try:
        with contextlib.suppress(OSError):
            os.tcsetpgrp(0, os.getpgrp())
    finally:
        signal.signal(signal.SIGTTOU, previous)


def _supervise(launch: _Launch, env: dict[str, str], state: str) -> int:
    pid = os.fork()
    if pid == 0:  # the agent
        try:
            _take_terminal()
            os.execvpe(launch.argv[0], launch.argv, env)
        except OSError as exc:
            print(f"cafleet.launch: cannot run {launch.argv[0]}: {exc.strerror or exc}",
                  file=sys.stderr, flush=True)  # fmt: skip
        os._exit(127)
    with contextlib.suppress(OSError):  # the child does it too; whichever runs first wins
        os.setpgid(pid, pid)
    # the terminal's signals go to the agent's group; the supervisor only waits
    for name in ("SIGINT", "SIGQUIT", "SIGTSTP"):
        signal.signal(getattr(signal, name), signal.SIG_IGN)
    _write_status(state, f"running {pid}")
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    _reclaim_terminal()
    _write_status(state, f"exited {code}")
    if os.path.exists(os.path.join(state, "ready")):
        import shutil  # only now: the directory has served its purpose

        shutil.rmtree(state, ignore_errors=True)
    else:
        with contextlib.suppress(OSError):  # a terminal that refuses us must not lose the code
            print(f"\ncafleet: {launch.argv[0]} exited with status {code} during start-up",
                  flush=True)  # fmt: skip
        deadline = time.monotonic() + HOLD_SECONDS
        while time.monotonic() < deadline and os.path.isdir(state):
            time.sleep(0.2)
    return code if code >= 0 else 128 - code


def main(args: list[str] | None = None) -> int:
    args = sys.argv[1:] if args is None else args
    if len(args) != 1:
        return _fail(USAGE)
    try:
        launch = _load(args[0])
    except (OSError, ValueError, AttributeError) as exc:
        detail = problem_of(exc) if isinstance(exc, NotPrivate) else exc
        return _fail(f"cannot read launch file {args[0]}: {detail}")
    try:
        os.chdir(launch.cwd)
    except OSError as exc:
        return _fail(f"cannot change to {launch.cwd}: {exc.strerror or exc}")
    if sys.stdout.isatty():
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.write(CLEAR)
            sys.stdout.flush()
    env = launch.environment()
    if launch.state is not None:
        return _supervise(launch, env, launch.state)
    try:
        os.execvpe(launch.argv[0], launch.argv, env)
    except OSError as exc:
        return _fail(f"cannot run {launch.argv[0]}: {exc.strerror or exc}")


if __name__ == "__main__":
    sys.exit(main())

"""Starting a process on the tmux server's side, so that it outlives a tool sandbox.

A command run in a coding agent's tool sandbox (Codex runs every tool call in a pid
namespace of its own) cannot leave a process behind: whatever it starts ends with the call,
detached or not. The tmux server of the pane the command runs in lives outside the sandbox,
and `run-shell -b` starts a job there that outlives the client. The job runs
`python -m cafleet.entrypoints.processes.launch <file>` on a private launch file (argv, the whole
environment, working directory), so nothing of the environment appears on a command line, and the
launcher refuses a file anyone else could have written.

`$TMUX` names the pane's server (`<socket>,<server pid>,<session>`): a process that does not
see that pid as a tmux process in its /proc is in another pid namespace than its server.
Standard library only.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shlex
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from cafleet.adapters.runtime.launch_module import LAUNCH_MODULE
from cafleet.adapters.runtime.private_files import create_private

TIMEOUT_SECONDS = 5


def server_of(env: Mapping[str, str]) -> tuple[str, int] | None:
    """The socket and pid of the tmux server whose pane this process runs in, from `$TMUX`
    (None without one; a pid of 0, as scripts set it, names no process)."""
    socket, _, rest = env.get("TMUX", "").partition(",")
    pid = rest.partition(",")[0]
    return (socket, int(pid)) if socket and pid.isdigit() and int(pid) > 0 else None


def sees_process(pid: int, name: str, proc: Path = Path("/proc")) -> bool:
    """Whether this /proc shows `pid` as a process whose name starts with `name`."""
    try:
        return (proc / str(pid) / "comm").read_text(errors="replace").startswith(name)
    except OSError:
        return False


def server_is_elsewhere(env: Mapping[str, str]) -> bool:
    """Whether this process runs in a tmux pane whose server it cannot see (another pid
    namespace): a process started here would end with the sandbox."""
    server = server_of(env)
    return server is not None and not sees_process(server[1], "tmux")


def start_on_server(
    env: Mapping[str, str],
    argv: Sequence[str],
    cwd: str,
    runtime: Path,
    python: str,
    tmux: str = "tmux",
) -> bool:
    """Start argv, with this environment and working directory, as a job of the pane's tmux
    server; False when the server could not be asked (the caller starts it itself)."""
    server = server_of(env)
    if server is None:
        return False
    data = {"argv": list(argv), "env": dict(env), "cwd": cwd, "inherit": False}
    path = runtime / f"job-{secrets.token_hex(8)}.json"
    try:
        create_private(path, json.dumps(data))
    except OSError:
        return False
    launch = f"{shlex.quote(python)} -m {LAUNCH_MODULE} {shlex.quote(str(path))}"
    # run-shell expands formats (`#` doubled stays `#`); anything printed would be shown in a
    # pane, so the job prints nothing
    command = f"{launch} >/dev/null 2>&1".replace("#", "##")
    try:
        done = subprocess.run(
            [tmux, "-S", server[0], "run-shell", "-b", command],
            env=dict(env),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=TIMEOUT_SECONDS,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        done = None
    if done is None or done.returncode != 0:
        _remove(path)  # never run: the launcher would have removed it
        return False
    return True


def _remove(path: Path) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)

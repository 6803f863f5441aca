"""Commands run in the real Codex sandbox, as a Codex member's (or Director's) tool call runs.

`codex sandbox` (the pinned Codex's subcommand) runs a command under the same Linux sandbox a
tool call gets: its own pid namespace and /proc, a fresh /dev/pts, the disk read-only but for
the writable roots, and (with network access) the multiplexer's socket reachable. The
sandbox settings come from the command line CAFleet gives a Codex member, as `cafleet
doctor` shows it, so a test sees exactly what a member's tools see.

Everything a test makes lives under /tmp, which Codex's workspace-write sandbox leaves
writable; the tests close it (`exclude_slash_tmp`), so the test's directories are as closed
as a user's `~/.local/share` and `/run/user/<uid>`: only what CAFleet itself grants is
writable.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

CLOSED_TMP = (
    "sandbox_workspace_write.exclude_slash_tmp=true",
    "sandbox_workspace_write.exclude_tmpdir_env_var=true",
)


def sandbox_settings(argv: Sequence[str]) -> list[str]:
    """`codex sandbox` options for the sandbox a Codex started with `argv` gives its tools:
    its sandbox mode, its `-c` settings and its added directories as writable roots."""
    options: list[str] = []
    roots: list[str] = []
    words = list(argv)
    for flag, value in zip(words, [*words[1:], ""], strict=True):
        if flag in ("-s", "--sandbox"):
            options += ["-c", f"sandbox_mode={json.dumps(value)}"]
        elif flag == "-c" and value.startswith("sandbox"):
            options += ["-c", value]
        elif flag == "--add-dir":
            roots.append(value)
    if roots:
        options += ["-c", f"sandbox_workspace_write.writable_roots={json.dumps(roots)}"]
    return options


@dataclass(frozen=True)
class CodexSandbox:
    binary: str  # the pinned codex
    settings: tuple[str, ...]  # `codex sandbox` options
    env: Mapping[str, str]
    cwd: Path

    @staticmethod
    def of_member(codex: str, env: Mapping[str, str], cwd: Path) -> CodexSandbox:
        """The sandbox a Codex member's tools get, with /tmp closed (see above)."""
        done = subprocess.run(
            [sys.executable, "-m", "cafleet", "--json", "doctor"],
            env=dict(env), cwd=cwd, capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        agents = json.loads(done.stdout)["agents"]
        argv = next(a["argv"] for a in agents if a["coding_agent"] == "codex")
        closed = [word for setting in CLOSED_TMP for word in ("-c", setting)]
        return CodexSandbox(codex, (*sandbox_settings(argv), *closed), env, cwd)

    def argv(self, *command: str) -> list[str]:
        return [self.binary, "sandbox", *self.settings, "--", *command]

    def cafleet(self, *args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
        """`cafleet <args>` in the sandbox; its exit status, stdout and stderr."""
        return subprocess.run(
            self.argv(sys.executable, "-m", "cafleet", *args),
            env=dict(self.env), cwd=self.cwd, capture_output=True, text=True,
            timeout=timeout, check=False,
        )  # fmt: skip

    def start(self, *args: str) -> subprocess.Popen[str]:
        """`cafleet <args>` in the sandbox, left running (its stdout piped) in a process
        group of its own: end it with `stop`, as Codex ends a tool call."""
        return subprocess.Popen(
            self.argv(sys.executable, "-m", "cafleet", *args),
            env=dict(self.env), cwd=self.cwd, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True, start_new_session=True,
        )  # fmt: skip


def stop(started: subprocess.Popen[str]) -> None:
    """End a command started with `CodexSandbox.start` and the sandbox around it: the
    whole process group (ending only the codex in front leaves the sandbox running)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(started.pid, signal.SIGTERM)
    try:
        started.wait(timeout=10)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(started.pid, signal.SIGKILL)
        started.wait(timeout=10)

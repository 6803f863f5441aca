"""The start environment of the agent this process runs under, read from /proc.

A tool of a coding agent runs in a shell the agent started, with the agent's session
variables added; the agent's own process was started without them. Walking the parents
(`/proc/<pid>/stat`) to the first one whose start environment (`/proc/<pid>/environ`, the
environment it was exec'd with) lacks the markers finds the agent, and what it was given.
Inside a sandbox with its own pid namespace the walk ends at the sandbox's first process
without finding it.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping
from pathlib import Path

from cafleet.application.ports.agents import AgentStarts

MAX_ANCESTORS = 64  # a deeper chain is not a tool's: give up


class ProcAgentStarts(AgentStarts):
    def __init__(self, proc: Path = Path("/proc"), pid: int | None = None) -> None:
        self._proc = proc
        self._pid = os.getpid() if pid is None else pid

    def environment(self, markers: Collection[str]) -> Mapping[str, str] | None:
        pid = self._pid
        for _ in range(MAX_ANCESTORS):
            pid = self._parent(pid) or 0
            started = self._start_environment(pid) if pid > 0 else None
            if started is None:
                return None
            if not any(marker in started for marker in markers):
                return started
        return None

    def _parent(self, pid: int) -> int | None:
        try:
            stat = (self._proc / str(pid) / "stat").read_text()
        except OSError:
            return None
        # `pid (comm) state ppid ...`; comm may hold spaces and parentheses
        fields = stat.rpartition(")")[2].split()
        return int(fields[1]) if len(fields) > 1 and fields[1].isdigit() else None

    def _start_environment(self, pid: int) -> dict[str, str] | None:
        try:
            raw = (self._proc / str(pid) / "environ").read_bytes()
        except OSError:
            return None
        pairs = (entry.partition(b"=") for entry in raw.split(b"\0") if b"=" in entry)
        return {
            name.decode(errors="surrogateescape"): value.decode(errors="surrogateescape")
            for name, _, value in pairs
        }

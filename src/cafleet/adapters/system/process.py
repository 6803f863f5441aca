"""This process's identity, and whether a process on this host still exists."""

from __future__ import annotations

import os
from collections.abc import Mapping

from cafleet.adapters.system.hosts import this_host
from cafleet.adapters.system.liveness import process_alive
from cafleet.application.ports.system import ProcessIdentity


class SystemProcess(ProcessIdentity):
    """host(): the host as placements name it (CAFLEET_HOST, else the machine's name), so
    a pid is probed only by a process of the same host."""

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        self._env = os.environ if env is None else env

    def pid(self) -> int:
        return os.getpid()

    def host(self) -> str:
        return this_host(self._env)

    def alive(self, pid: int) -> bool:
        return process_alive(pid)

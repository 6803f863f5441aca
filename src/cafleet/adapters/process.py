"""This process's identity, and whether a process on this host still exists."""

from __future__ import annotations

import os
import socket

from cafleet.adapters.liveness import process_alive
from cafleet.application.ports import ProcessIdentity


class SystemProcess(ProcessIdentity):
    def pid(self) -> int:
        return os.getpid()

    def host(self) -> str:
        return socket.gethostname()

    def alive(self, pid: int) -> bool:
        return process_alive(pid)

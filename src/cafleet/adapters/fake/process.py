"""This process as a test says it is: its pid, its host, and which pids are alive there."""

from __future__ import annotations

from cafleet.application.ports.system import ProcessIdentity

FAKE_PID = 4242
FAKE_HOST = "fake-host"


class FakeProcess(ProcessIdentity):
    def __init__(self, pid: int = FAKE_PID, host: str = FAKE_HOST) -> None:
        self._pid = pid
        self._host = host
        self.alive_pids = {pid}

    def pid(self) -> int:
        return self._pid

    def host(self) -> str:
        return self._host

    def alive(self, pid: int) -> bool:
        return pid in self.alive_pids

"""A background process whose output lines tests can wait for (the monitor loop, mostly)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import threading
import time
from typing import IO

POLL_SECONDS = 0.05


class BackgroundProcess:
    """Runs argv with stdout and stderr collected line by line on reader threads."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            argv,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.out: list[str] = []
        self.err: list[str] = []
        self._readers = [
            threading.Thread(target=self._pump, args=(stream, sink), daemon=True)
            for stream, sink in ((self.proc.stdout, self.out), (self.proc.stderr, self.err))
        ]
        for reader in self._readers:
            reader.start()

    @staticmethod
    def _pump(stream: IO[str], sink: list[str]) -> None:
        for line in stream:
            sink.append(line.rstrip("\n"))

    @property
    def pid(self) -> int:
        return self.proc.pid

    def wait_for_line(self, pattern: str, timeout: float) -> re.Match[str]:
        """The first stdout line matching pattern; fails after timeout seconds."""
        regex = re.compile(pattern)
        deadline = time.monotonic() + timeout
        while True:
            found = next((m for line in list(self.out) if (m := regex.search(line))), None)
            if found is not None:
                return found
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"timed out after {timeout}s waiting for a stdout line matching"
                    f" {pattern!r}; got {self.out}"
                )
            time.sleep(POLL_SECONDS)

    def terminate(self) -> None:
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)

    def wait(self, timeout: float) -> int:
        code = self.proc.wait(timeout=timeout)
        for reader in self._readers:  # the pipes close with the process: read to the end
            reader.join(timeout=5)
        return code

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)

    def stop(self, timeout: float = 10) -> None:
        """SIGTERM, then SIGKILL if it has not left within timeout seconds."""
        self.terminate()
        try:
            self.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()

"""Per-pane send locks: fcntl locks on files in a private runtime directory."""

from __future__ import annotations

import fcntl
import os
import tempfile
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from cafleet.application.ports import PaneLocks

POLL_SECONDS = 0.02


def runtime_directory(env: Mapping[str, str]) -> Path:
    """$XDG_RUNTIME_DIR/cafleet, else a private cafleet-<uid> directory in the temp dir."""
    base = env.get("XDG_RUNTIME_DIR")
    path = Path(base, "cafleet") if base else Path(tempfile.gettempdir(), f"cafleet-{os.getuid()}")
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    return path


class FileLocks(PaneLocks):
    def __init__(self, directory: Path) -> None:
        self._directory = directory

    @contextmanager
    def hold(self, key: str, timeout: float) -> Iterator[None]:
        deadline = time.monotonic() + timeout
        fd = os.open(self._directory / f"pane-{key}.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise TimeoutError(key) from None
                    time.sleep(POLL_SECONDS)
            yield
        finally:
            os.close(fd)  # closing the descriptor releases the lock

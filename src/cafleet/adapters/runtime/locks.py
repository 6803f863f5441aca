"""Per-pane send locks: fcntl locks on files in a private runtime directory."""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from cafleet.adapters.runtime.private_files import (
    NotPrivate,
    open_private,
    private_directory,
    problem_of,
)
from cafleet.application.ports.panes import PaneLocks
from cafleet.domain.errors import Unavailable

POLL_SECONDS = 0.02


def runtime_directory(env: Mapping[str, str]) -> Path:
    """$XDG_RUNTIME_DIR/cafleet, else cafleet-<uid> in the temp dir: created 0700, and used
    only while it (and $XDG_RUNTIME_DIR) is a directory of this user's that nobody else can
    enter. Anything else is refused with one line naming the path (Unavailable)."""
    base = env.get("XDG_RUNTIME_DIR")
    path = runtime_path(env)
    try:
        if base:
            private_directory(base)  # what XDG asks of it: the user's, mode 0700
        return private_directory(path)
    except NotPrivate as exc:
        raise Unavailable(f"refusing the runtime directory {exc}") from None
    except OSError as exc:
        raise Unavailable(
            f"cannot create the runtime directory {path}: {exc.strerror or exc}"
        ) from None


def runtime_path(env: Mapping[str, str]) -> Path:
    """Where the runtime directory is (not created, not checked)."""
    base = env.get("XDG_RUNTIME_DIR")
    return Path(base, "cafleet") if base else Path(_temp_directory(), f"cafleet-{os.getuid()}")


def _temp_directory() -> str:
    import tempfile  # it brings shutil and the compression modules: only when needed

    return tempfile.gettempdir()


class FileLocks(PaneLocks):
    def __init__(self, directory: Path) -> None:
        self._directory = directory

    @contextmanager
    def hold(self, key: str, timeout: float) -> Iterator[None]:
        deadline = time.monotonic() + timeout
        path = self._directory / f"pane-{key}.lock"
        try:
            fd = open_private(path, os.O_RDWR | os.O_CREAT)
        except OSError as exc:  # a link or another user's file in its place: refused
            raise Unavailable(f"cannot use the send lock {path}: {problem_of(exc)}") from None
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

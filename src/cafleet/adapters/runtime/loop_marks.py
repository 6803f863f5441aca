"""Loop marks (the LoopMarks port): a lock file per loop in the private runtime directory.

The holder keeps a POSIX write lock on its mark for as long as it lives and writes its claim
into it; the kernel drops the lock when the holder ends, however it ends. Testing the lock
works from any pid namespace on this host and names the holder's pid as the tester sees it
(`adapters/system/liveness.py`). A mark is named after the store as well as the loop, so loops of
two databases never share one. Standard library only.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Mapping
from pathlib import Path

from cafleet.adapters.runtime.locks import runtime_directory
from cafleet.adapters.runtime.private_files import open_private
from cafleet.adapters.system.liveness import hold_lock, lock_holder
from cafleet.application.ports.system import LoopMark, LoopMarks
from cafleet.domain.errors import Unavailable

CLAIM_BYTES = 1024


def store_loop_marks(env: Mapping[str, str], store: str) -> FileLoopMarks:
    """The marks of loops over `store`, in the runtime directory of `env`."""
    return FileLoopMarks(lambda: runtime_directory(env), store)


class FileLoopMarks(LoopMarks):
    def __init__(self, directory: Callable[[], Path], scope: str) -> None:
        self._directory = directory  # the runtime directory, made (and checked) when needed
        self._scope = scope
        self._held: dict[str, int] = {}

    def hold(self, name: str) -> LoopMark | None:
        if name in self._held:
            return LoopMark(held=False, claim=_claim(self._held[name]))
        path = self._path(name)
        try:
            fd = open_private(path, os.O_RDWR | os.O_CREAT) if path else None
        except OSError:
            return None
        if fd is None:
            return None
        before = _claim(fd)
        if hold_lock(fd):
            self._held[name] = fd
            return LoopMark(held=False, claim=before)
        try:
            return LoopMark(held=True, pid=lock_holder(fd) or 0, claim=before)
        finally:
            os.close(fd)

    def write(self, name: str, claim: str) -> None:
        fd = self._held.get(name)
        if fd is not None:
            os.ftruncate(fd, 0)
            os.pwrite(fd, claim.encode()[:CLAIM_BYTES], 0)

    def drop(self, name: str) -> None:
        fd = self._held.pop(name, None)
        if fd is not None:
            os.close(fd)  # releases the lock

    def read(self, name: str) -> LoopMark | None:
        if name in self._held:  # closing a second descriptor here would drop the lock
            return LoopMark(held=True, pid=os.getpid(), claim=_claim(self._held[name]))
        path = self._path(name)
        try:
            fd = open_private(path, os.O_RDONLY) if path else None
        except OSError:
            return None
        if fd is None:
            return None
        try:
            holder = lock_holder(fd)
            return LoopMark(held=holder is not None, pid=holder or 0, claim=_claim(fd))
        except OSError:
            return None
        finally:
            os.close(fd)

    def _path(self, name: str) -> Path | None:
        try:
            directory = self._directory()
        except Unavailable:
            return None
        key = hashlib.sha256(f"{self._scope}\0{name}".encode()).hexdigest()[:32]
        return directory / f"loop-{key}.mark"


def _claim(fd: int) -> str:
    try:
        return os.pread(fd, CLAIM_BYTES, 0).decode(errors="replace")
    except OSError:
        return ""

"""A member's mailbox in its launch pad: how a message reaches an agent through its own hook.

The sender posts `mail/<task id>.msg`; the member's waiting hook (`python -m
cafleet.entrypoints.processes.hook wait`) takes it by renaming it into `taken/`, hands the text to
the agent and exits. A rename is atomic, so a message is either taken by the hook or withdrawn by
the sender (which then falls back to another channel), never both. A waiting hook announces itself
with `waiters/<pid>`, which it keeps locked while it waits: the lock, not the pid, tells a sender
whether it still waits, since a sender in a tool sandbox (its own pid namespace) sees no process
under that pid (adapters/system/liveness.py). Its directories are 0700 and checked like the runtime
directory, and no link planted in them is followed. Standard library only: the hook imports this
module on every stop.
"""

from __future__ import annotations

import contextlib
import os
import time
import uuid
from pathlib import Path

from cafleet.adapters.runtime.private_files import (
    check_private_directory,
    create_private,
    open_private,
    private_directory,
    read_private,
)
from cafleet.adapters.system.liveness import hold_lock, lock_holder, process_alive

MAIL = "mail"
TAKEN = "taken"
WAITERS = "waiters"
SUFFIX = ".msg"


class Mailbox:
    def __init__(self, pad: Path) -> None:
        self.pad = pad
        self._enlisted: int | None = None  # the locked waiter file of this process

    # -- the sender's side

    def post(self, task_id: int, text: str) -> None:
        box = self._dir(MAIL)
        draft = box / f".{uuid.uuid4().hex}.draft"
        create_private(draft, text)
        os.replace(draft, box / f"{task_id}{SUFFIX}")

    def taken_at(self, task_id: int) -> float | None:
        """When the hook took the message (unix time), or None while it has not."""
        try:
            return os.lstat(self.pad / TAKEN / f"{task_id}{SUFFIX}").st_mtime
        except OSError:
            return None

    def withdraw(self, task_id: int) -> bool:
        """Take an untaken message back; False when the hook had already taken it."""
        try:
            (self.pad / MAIL / f"{task_id}{SUFFIX}").unlink()
        except FileNotFoundError:
            return False
        return True

    def has_waiter(self) -> bool:
        """Whether a hook is waiting for mail now: its file is locked (a file that cannot be
        tested so: its process is alive)."""
        if self._enlisted is not None:  # this process waits; reopening its own file would
            return True  # drop its lock (closing any descriptor of a file drops them all)
        try:
            waiters = [p for p in (self.pad / WAITERS).iterdir() if p.name.isdigit()]
        except OSError:
            return False
        for waiter in waiters:
            locked = _locked(waiter)
            if locked or (locked is None and process_alive(int(waiter.name))):
                return True
        return False

    # -- the waiting hook's side

    def enlist(self, pid: int) -> None:
        fd = open_private(self._dir(WAITERS) / str(pid), os.O_RDWR | os.O_CREAT)
        hold_lock(fd)  # held until `leave` or this process's end, however it ends
        self._enlisted = fd

    def leave(self, pid: int) -> None:
        with contextlib.suppress(OSError):
            (self.pad / WAITERS / str(pid)).unlink()
        if self._enlisted is not None:
            os.close(self._enlisted)
            self._enlisted = None

    def take_all(self) -> list[tuple[int, str]]:
        """Every posted message this caller won the rename for, oldest task first."""
        try:
            check_private_directory(self.pad / MAIL)
            names = [
                p.name
                for p in (self.pad / MAIL).iterdir()
                if p.name.endswith(SUFFIX) and p.name.removesuffix(SUFFIX).isdigit()
            ]
        except OSError:
            return []
        taken = []
        for name in sorted(names, key=lambda n: int(n.removesuffix(SUFFIX))):
            target = self._dir(TAKEN) / name
            try:
                os.rename(self.pad / MAIL / name, target)
                os.utime(target, (time.time(), time.time()), follow_symlinks=False)
                taken.append((int(name.removesuffix(SUFFIX)), read_private(target)))
            except (OSError, UnicodeDecodeError):
                continue  # withdrawn meanwhile, or not a message of ours (a link is refused)
        return taken

    def _dir(self, name: str) -> Path:
        return private_directory(self.pad / name)


def _locked(path: Path) -> bool | None:
    """Whether another process holds a lock on the file; None when it cannot be tested."""
    try:
        fd = open_private(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        return lock_holder(fd) is not None
    except OSError:
        return None
    finally:
        os.close(fd)

"""A member's mailbox in its launch pad: how a message reaches an agent through its own hook.

The sender posts `mail/<task id>.msg`; the member's waiting hook (`python -m cafleet.hook
wait`) takes it by renaming it into `taken/`, hands the text to the agent and exits. A rename
is atomic, so a message is either taken by the hook or withdrawn by the sender (which then
falls back to another channel), never both. A waiting hook announces itself with
`waiters/<pid>`. Its directories are 0700 and checked like the runtime directory, and no
link planted in them is followed. Standard library only: the hook imports this module on
every stop.
"""

from __future__ import annotations

import contextlib
import os
import time
import uuid
from pathlib import Path

from cafleet.adapters.liveness import process_alive
from cafleet.adapters.private_files import (
    check_private_directory,
    create_private,
    private_directory,
    read_private,
    touch_private,
)

MAIL = "mail"
TAKEN = "taken"
WAITERS = "waiters"
SUFFIX = ".msg"


class Mailbox:
    def __init__(self, pad: Path) -> None:
        self.pad = pad

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
        """Whether a hook is waiting for mail now (its process is alive)."""
        try:
            pids = [int(p.name) for p in (self.pad / WAITERS).iterdir() if p.name.isdigit()]
        except OSError:
            return False
        return any(process_alive(pid) for pid in pids)

    # -- the waiting hook's side

    def enlist(self, pid: int) -> None:
        touch_private(self._dir(WAITERS) / str(pid))

    def leave(self, pid: int) -> None:
        with contextlib.suppress(OSError):
            (self.pad / WAITERS / str(pid)).unlink()

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

"""Directories and files only this user can reach, opened without following symbolic links.

The runtime directory, its `members/` pads and their mailboxes are accepted only as real
directories owned by this user and closed to group and others (`private_directory`). Files
in them are opened with `O_NOFOLLOW` and must be regular files owned by this user that
nobody else may write (`open_private`), so a link or a file planted by someone else is
refused, never followed.
Standard library only: the launcher, the hook and the mailbox use it too.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path

NO_FOLLOW = os.O_NOFOLLOW | os.O_CLOEXEC


class NotPrivate(OSError):
    """A path that must belong to this user alone does not; `problem` says why."""

    def __init__(self, path: str | Path, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = str(path)
        self.problem = problem


def check_private_directory(path: str | Path) -> None:
    """Refuse a symbolic link, a non-directory, another user's directory, or one that group
    or others may enter (NotPrivate); a missing path raises FileNotFoundError."""
    info = os.lstat(path)
    if stat.S_ISLNK(info.st_mode):
        raise NotPrivate(path, "a symbolic link, not a directory")
    if not stat.S_ISDIR(info.st_mode):
        raise NotPrivate(path, "not a directory")
    _check_owner_and_mode(path, info, 0o077)


def private_directory(path: str | Path) -> Path:
    """`path`, created with mode 0700 when missing, once it passes the checks above."""
    with contextlib.suppress(FileExistsError):
        os.mkdir(path, 0o700)
    check_private_directory(path)
    return Path(path)


def open_private(path: str | Path, flags: int, *, closed: int = 0o022) -> int:
    """os.open (creating mode 0600) without following a link in the last component, refusing
    anything but a regular file of this user's with none of the `closed` mode bits (by
    default: nobody else may write it; it lies in a private directory anyway)."""
    try:
        fd = os.open(path, flags | NO_FOLLOW, 0o600)
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # what O_NOFOLLOW answers for a link
            raise NotPrivate(path, "a symbolic link, not a regular file") from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotPrivate(path, "not a regular file")
        _check_owner_and_mode(path, info, closed)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_private(path: str | Path) -> str:
    with os.fdopen(open_private(path, os.O_RDONLY), encoding="utf-8") as handle:
        return handle.read()


def create_private(path: str | Path, text: str) -> None:
    """Write a new 0600 file; an existing file or link of that name is an error."""
    fd = open_private(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)


def touch_private(path: str | Path) -> None:
    os.close(open_private(path, os.O_WRONLY | os.O_CREAT))


def problem_of(exc: OSError) -> str:
    """What went wrong with a path, for a one-line message after the path."""
    return exc.problem if isinstance(exc, NotPrivate) else (exc.strerror or str(exc))


def _check_owner_and_mode(path: str | Path, info: os.stat_result, closed: int) -> None:
    uid = os.getuid()
    if info.st_uid != uid:
        raise NotPrivate(path, f"owned by uid {info.st_uid}, not by this user (uid {uid})")
    if info.st_mode & closed:
        raise NotPrivate(path, f"open to group or others (mode {stat.S_IMODE(info.st_mode):04o})")

"""Whether a process still exists: by its pid, or by a lock it holds (standard library only:
hooks import it).

A pid means something only in its own pid namespace: a process in a tool sandbox (Codex runs
each tool call in one) knows itself by a small number that names another process outside,
and sees the processes outside under no number at all. A POSIX record lock on a file both
can open is the same thing for all of them: the kernel drops it when its holder ends, any
process may test it, and the test names the holder's pid as the tester sees it (0 when the
holder runs in a namespace the tester cannot see).
"""

from __future__ import annotations

import fcntl
import os
import struct

_FLOCK = "hhqqi"  # struct flock: l_type, l_whence, l_start, l_len, l_pid
_FLOCK_ROOM = struct.calcsize(_FLOCK) + 8  # the C struct's trailing padding


def process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by someone else
    return True


def hold_lock(fd: int) -> bool:
    """Take a write lock on the whole file open at `fd`, held while this process keeps any
    descriptor of the file open; False when another process holds one."""
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except (BlockingIOError, PermissionError):  # EAGAIN, or EACCES on some systems
        return False
    return True


def lock_holder(fd: int) -> int | None:
    """The pid of another process holding a lock on the file open at `fd`, as this process
    sees it (0: it runs in a pid namespace this one cannot see); None when none does."""
    probe = struct.pack(_FLOCK, fcntl.F_WRLCK, os.SEEK_SET, 0, 0, 0).ljust(_FLOCK_ROOM, b"\0")
    answer = fcntl.fcntl(fd, fcntl.F_GETLK, probe)
    kind, _, _, _, pid = struct.unpack_from(_FLOCK, answer)
    return None if kind == fcntl.F_UNLCK else int(pid)

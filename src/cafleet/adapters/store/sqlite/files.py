"""Looking at the database's path before SQLite does: one line for what is in the way."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from cafleet.adapters.system.path_problems import path_problem
from cafleet.domain.errors import Unavailable


def database_exists(path: Path) -> bool:
    """Whether a database file is there; a directory, or a path this user may not look
    along, is refused naming the path and the problem."""
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError as exc:
        raise Unavailable(f"cannot open database {path}: {path_problem(path, exc)}") from None
    if stat.S_ISDIR(mode):
        raise Unavailable(f"cannot open database {path}: it is a directory")
    return True

"""What stands in the way of a path, in words a user can act on (stdlib only)."""

from __future__ import annotations

import os
from pathlib import Path


def path_problem(path: str | os.PathLike[str], exc: OSError) -> str:
    """The error's text, naming the directory that refused us when there is one."""
    reason = exc.strerror or type(exc).__name__
    if isinstance(exc, PermissionError):
        for directory in reversed(Path(os.path.abspath(path)).parents):
            if not os.access(directory, os.X_OK):
                return f"{reason} (directory {directory} cannot be entered)"
    return reason


def os_error_line(exc: OSError) -> str:
    """`cannot use <path>: <problem>`, or the bare problem when the error names no path."""
    if exc.filename is None:
        return exc.strerror or f"{type(exc).__name__}: {exc}"
    return f"cannot use {exc.filename}: {path_problem(exc.filename, exc)}"

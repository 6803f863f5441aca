"""Driver errors become one line a user can act on; no SQL or parameters leak."""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from cafleet.domain.errors import CafleetError, DatabaseBusy, SchemaMissing, Unavailable

_SCHEMA_SIGNS = ("no such table", "no such column", "has no column named")
_BUSY_SIGNS = ("database is locked", "database is busy", "database table is locked")


def as_cafleet_error(exc: BaseException, path: Path) -> CafleetError:
    original = getattr(exc, "orig", exc) if _is_wrapped(exc) else exc
    text = str(original).strip()
    first_line = text.splitlines()[0] if text else type(original).__name__
    lowered = first_line.lower()
    if any(sign in lowered for sign in _BUSY_SIGNS):
        return DatabaseBusy()
    if any(sign in lowered for sign in _SCHEMA_SIGNS):
        return SchemaMissing()
    if "unable to open database file" in lowered or "file is not a database" in lowered:
        return Unavailable(f"cannot open database {path}: {first_line}")
    return Unavailable(f"database error: {first_line}")


def _is_wrapped(exc: BaseException) -> bool:
    """Whether SQLAlchemy wrapped a driver error. The hot path never imports SQLAlchemy, and
    while it is not imported no such error can exist, so it is looked up, not imported."""
    sqlalchemy_errors = sys.modules.get("sqlalchemy.exc")
    return sqlalchemy_errors is not None and isinstance(exc, sqlalchemy_errors.DBAPIError)


def is_driver_error(exc: BaseException) -> bool:
    return isinstance(exc, sqlite3.Error) or _is_wrapped(exc)


@contextmanager
def translated(path: Path) -> Iterator[None]:
    try:
        yield
    except Exception as exc:
        if not is_driver_error(exc):
            raise
        raise as_cafleet_error(exc, path) from exc

"""PostgreSQL driver errors as one line a user can act on; no SQL, parameters or password."""

from __future__ import annotations

from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError

from cafleet.domain.errors import (
    CafleetError,
    ConnectionLost,
    DatabaseBusy,
    SchemaMissing,
    Unavailable,
)

# SQLSTATE classes and codes (https://www.postgresql.org/docs/current/errcodes-appendix.html)
_BUSY = {"55P03", "40001", "40P01"}  # lock timeout, serialization failure, deadlock
_SCHEMA = {"42P01", "42703"}  # undefined table, undefined column
_LOST = ("08", "57P")  # connection, operator intervention: the session is gone
_TOO_MANY_CONNECTIONS = "53300"  # unlike a full disk (53100), which fails one statement


def shown_url(url: str) -> str:
    """The URL as it may be printed: without its password."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:  # not parseable: show nothing of it
        return "the PostgreSQL URL"


def as_cafleet_error(exc: BaseException, url: str) -> CafleetError | None:
    """The error a driver error stands for; None for anything else."""
    if not isinstance(exc, DBAPIError):
        return None
    original = exc.orig
    state = str(getattr(original, "sqlstate", "") or "")
    text = str(original).strip()
    first_line = text.splitlines()[0] if text else type(original).__name__
    if state in _BUSY:
        return DatabaseBusy()
    if state in _SCHEMA:
        return SchemaMissing()
    if not state or state.startswith(_LOST):  # no state: the driver lost the connection
        return ConnectionLost(f"cannot reach database {shown_url(url)}: {first_line}")
    if state == _TOO_MANY_CONNECTIONS:
        return Unavailable(f"cannot reach database {shown_url(url)}: {first_line}")
    return Unavailable(f"database error: {first_line}")

"""Errors that reach a user. Each carries the exact message and a kind.

Entrypoints map the kind to an exit code (CLI) or an HTTP status; nothing else
about an error is needed to report it.
"""

from __future__ import annotations

from enum import Enum


class ErrorKind(Enum):
    NOT_FOUND = "not_found"
    CONFLICT = "conflict"
    INVALID = "invalid"
    UNAVAILABLE = "unavailable"
    USAGE = "usage"  # bad command-line input: click-style usage error, exit 2


class CafleetError(Exception):
    kind: ErrorKind = ErrorKind.INVALID

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class NotFound(CafleetError):
    kind = ErrorKind.NOT_FOUND


class Conflict(CafleetError):
    kind = ErrorKind.CONFLICT


class Invalid(CafleetError):
    kind = ErrorKind.INVALID


class Unavailable(CafleetError):
    """A resource outside our control (database, multiplexer) cannot be used now."""

    kind = ErrorKind.UNAVAILABLE


class UsageProblem(CafleetError):
    """Input that the command line should have rejected; rendered like click's usage errors."""

    kind = ErrorKind.USAGE


class SchemaMissing(Unavailable):
    def __init__(self, message: str | None = None) -> None:
        super().__init__(
            message
            or "the database schema is missing or outdated; "
            "run 'cafleet setup' or 'cafleet setup db' first"
        )


class DatabaseMissing(SchemaMissing):
    def __init__(self, path: object) -> None:
        super().__init__(f"database {path} does not exist; run 'cafleet setup' to create it")


class SchemaNewer(SchemaMissing):
    """A database migrated by a later cafleet: setup cannot help, upgrading cafleet can."""

    def __init__(self, revision: str, head: str) -> None:
        super().__init__(
            f"the database schema is at revision {revision}, newer than this cafleet knows"
            f" (head {head}); upgrade cafleet"
        )


class ConnectionLost(Unavailable):
    """The connection to the database broke: a commit under way may have been applied or not."""


class DatabaseBusy(Unavailable):
    def __init__(self) -> None:
        super().__init__(
            "database is busy (other cafleet processes held the write lock for more than 60s);"
            " retry the command."
        )


def error_of_kind(kind: str, message: str) -> CafleetError:
    """An error of the kind named by its value (as stored for another process to raise);
    an unknown kind is taken to be `unavailable`."""
    by_kind = {cls.kind.value: cls for cls in (NotFound, Conflict, Invalid, Unavailable)}
    return by_kind.get(kind, Unavailable)(message)

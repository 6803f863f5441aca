"""Rules both storage adapters share: retrying a write lock, and the revision they accept."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import TypeVar

from cafleet.adapters.store.sqlite.schema import HEAD_REVISION, newer_than_head
from cafleet.domain.errors import DatabaseBusy, SchemaMissing, SchemaNewer

T = TypeVar("T")

# SQLite's busy handler is not fair: under dozens of processes one writer can lose the lock
# race for longer than the busy timeout. BEGIN IMMEDIATE has done nothing yet, so a write unit
# of work retries it after a short random pause until this budget is spent.
WRITE_WAIT_SECONDS = 60.0
RETRY_PAUSE_SECONDS = (0.01, 0.1)

REVISION_QUERY = "SELECT version_num FROM alembic_version"


def begun(begin: Callable[[], T], *, write: bool) -> T:
    """begin() once for a reader; for a writer, again after a busy database until the
    budget is spent."""
    deadline = time.monotonic() + WRITE_WAIT_SECONDS
    while True:
        try:
            return begin()
        except DatabaseBusy:
            if not write or time.monotonic() >= deadline:
                raise
            time.sleep(random.uniform(*RETRY_PAUSE_SECONDS))


def require_head(revision: object) -> None:
    """A database behind (or ahead of) this version's schema is refused up front, not when
    a statement happens to touch a newer column."""
    if revision is not None and newer_than_head(str(revision)):
        raise SchemaNewer(str(revision), HEAD_REVISION)
    if revision != HEAD_REVISION:
        raise SchemaMissing()

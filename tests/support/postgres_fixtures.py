"""Fixtures for a private PostgreSQL server, shared by every suite (tests/conftest.py
registers this module as a plugin).

- `postgres_server` (session): one PostgresServer, unix socket only, started on first use and
  stopped (and its directory deleted) when the run ends, however it ends.
- `postgres_url` (function): a fresh empty database on it, named after the test; its
  SQLAlchemy URL (`postgresql+psycopg://cafleet@/<name>?host=<socket directory>`). The
  database is dropped after the test.

Without PostgreSQL's server programs these fixtures skip, except under CI (`CI=true`), where
a silently skipped store would pass for a tested one: there they fail. Tests using them carry
`pytest.mark.postgres`.
"""

from __future__ import annotations

import itertools
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from support.postgres import PostgresServer, find_bindir

_database_numbers = itertools.count(1)
# the database the integration suite's PostgreSQL tests copy (tests/integration/conftest.py)
HEAD_TEMPLATE = "cafleet_head_template"


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    bindir = find_bindir()
    if bindir is None:
        reason = (
            "PostgreSQL's server programs (initdb, pg_ctl, postgres, psql) are not installed;"
            " scripts/bootstrap installs Debian's postgresql"
        )
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI must not skip the PostgreSQL tests: {reason}", pytrace=False)
        pytest.skip(reason)
    with PostgresServer(bindir=bindir) as server:
        yield server


@contextmanager
def scratch_database(
    server: PostgresServer, request: pytest.FixtureRequest, template: str | None = None
) -> Iterator[str]:
    """A database for the requesting test (empty, or a copy of `template`), dropped after;
    its URL. Unique by its number; the test's name only helps whoever reads the server's log."""
    slug = re.sub(r"[^a-z0-9]+", "_", request.node.name.lower()).strip("_")
    name = f"t{next(_database_numbers)}_{slug}"[:63]
    url = server.create_database(name, template=template)
    try:
        yield url
    finally:
        server.drop_database(name)


@pytest.fixture
def postgres_url(postgres_server: PostgresServer, request: pytest.FixtureRequest) -> Iterator[str]:
    with scratch_database(postgres_server, request) as url:
        yield url

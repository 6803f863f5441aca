"""Fixtures for the contract suites.

PaneDriver: one `backend` fixture, parametrized over the in-memory fake, the real tmux
driver on a private server (killed on teardown) and the herdr driver on the fake herdr
server (pty mode; stopped on teardown).

UnitOfWork: one `store` fixture, parametrized over the builders of stores.BUILDERS (the
in-memory fake, SQLAlchemy and the direct sqlite3 adapter on a migrated SQLite file,
SQLAlchemy on a database of a private PostgreSQL server); each case gets an empty store.

A case that one backend is known to get wrong carries
`@pytest.mark.backend_xfail("<fake|tmux|herdr>", reason=...)` (for a store:
`store_xfail("<builder>", reason=...)`); it becomes a strict xfail for that one only, so
the case starts failing loudly once the gap is closed. A case that does not apply to a
backend (herdr has no dead panes, for one) carries `@pytest.mark.backend_skip("<name>",
reason=...)` (`store_skip` for a store).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from cafleet.application.ports.store import UnitOfWorkFactory

from .backends import Backend, TmuxBackend, make_backend
from .stores import BUILDERS, StorePlace

PARAMETRIZED = ("backend", "store")  # the fixtures whose cases take per-parameter marks


def pytest_configure(config: pytest.Config) -> None:
    for fixture in PARAMETRIZED:
        config.addinivalue_line(
            "markers",
            f"{fixture}_xfail(name, reason): strict xfail of a contract case for one {fixture}",
        )
        config.addinivalue_line(
            "markers",
            f"{fixture}_skip(name, reason): a contract case that does not apply to one {fixture}",
        )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        callspec = getattr(item, "callspec", None)
        if callspec is None:
            continue
        for fixture in PARAMETRIZED:
            if fixture not in callspec.params:
                continue
            for mark in item.iter_markers(f"{fixture}_xfail"):
                if mark.args[0] == callspec.params[fixture]:
                    reason = mark.kwargs["reason"]
                    item.add_marker(pytest.mark.xfail(strict=True, reason=reason))
            for mark in item.iter_markers(f"{fixture}_skip"):
                if mark.args[0] == callspec.params[fixture]:
                    item.add_marker(pytest.mark.skip(reason=mark.kwargs["reason"]))


@pytest.fixture(
    params=[pytest.param(n, marks=pytest.mark.postgres) if n == "postgres" else n for n in BUILDERS]
)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[UnitOfWorkFactory]:
    place = StorePlace(tmp_path, lambda: str(request.getfixturevalue("postgres_url")))
    with BUILDERS[request.param](place) as made:
        yield made


@pytest.fixture(params=["fake", pytest.param("tmux", marks=pytest.mark.tmux), "herdr"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    if request.param == "tmux" and shutil.which("tmux") is None:
        pytest.skip("tmux binary not found on PATH")
    if request.param == "herdr" and not os.path.isdir("/proc"):
        pytest.skip("the fake herdr server reads foreground processes from /proc")
    made = make_backend(request.param, tmp_path)
    try:
        yield made
    finally:
        made.close()


@pytest.fixture
def tmux(tmp_path: Path) -> Iterator[TmuxBackend]:
    """The tmux backend alone, for cases about tmux itself (its raw commands stay reachable)."""
    if shutil.which("tmux") is None:
        pytest.skip("tmux binary not found on PATH")
    made = TmuxBackend(tmp_path)
    try:
        yield made
    finally:
        made.close()

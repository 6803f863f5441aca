"""Fixtures for the PaneDriver contract: one `backend` fixture, parametrized over the
in-memory fake, the real tmux driver on a private server (killed on teardown) and the herdr
driver on the fake herdr server (pty mode; stopped on teardown).

A case that one backend is known to get wrong carries
`@pytest.mark.backend_xfail("<fake|tmux|herdr>", reason=...)`; it becomes a strict xfail for
that backend only, so the case starts failing loudly once the gap is closed. A case that
does not apply to a backend (herdr has no dead panes, for one) carries
`@pytest.mark.backend_skip("<name>", reason=...)`.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from .backends import Backend, TmuxBackend, make_backend


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "backend_xfail(name, reason): strict xfail of a contract case for one backend",
    )
    config.addinivalue_line(
        "markers",
        "backend_skip(name, reason): a contract case that does not apply to one backend",
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        callspec = getattr(item, "callspec", None)
        if callspec is None or "backend" not in callspec.params:
            continue
        for mark in item.iter_markers("backend_xfail"):
            if mark.args[0] == callspec.params["backend"]:
                item.add_marker(pytest.mark.xfail(strict=True, reason=mark.kwargs["reason"]))
        for mark in item.iter_markers("backend_skip"):
            if mark.args[0] == callspec.params["backend"]:
                item.add_marker(pytest.mark.skip(reason=mark.kwargs["reason"]))


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

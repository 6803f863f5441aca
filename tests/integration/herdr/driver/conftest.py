"""Fixtures for the herdr client and driver tests: a fake herdr server in plain mode
(panes are records: typed bytes are logged, screens and processes are what a test sets) and
a HerdrPaneDriver pointed at it. Every test starts with a fresh once-per-process ping.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

_ROOT = str(Path(__file__).resolve().parents[4])
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

from tests.fakes.herdr_server import FakeHerdrServer  # noqa: E402

from cafleet.adapters.herdr.client import forget_pings  # noqa: E402
from cafleet.adapters.herdr.driver import HerdrPaneDriver  # noqa: E402

PYTHON = "/opt/python/bin/python3"


@pytest.fixture(autouse=True)
def _no_outer_variables(outer_variables_removed: None) -> None:
    """No CAFLEET_*, multiplexer or agent-home variable of the outer shell leaks in."""


@pytest.fixture(autouse=True)
def _fresh_pings() -> Iterator[None]:
    forget_pings()
    yield
    forget_pings()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[FakeHerdrServer]:
    made = FakeHerdrServer().start(cwd=str(tmp_path))
    try:
        yield made
    finally:
        made.stop()


@pytest.fixture
def launch_dir(tmp_path: Path) -> Path:
    path = tmp_path / "run"
    path.mkdir(mode=0o700)
    return path


@pytest.fixture
def driver(server: FakeHerdrServer, launch_dir: Path) -> HerdrPaneDriver:
    return HerdrPaneDriver(server.socket_path, launch_dir=lambda: launch_dir, python=PYTHON)

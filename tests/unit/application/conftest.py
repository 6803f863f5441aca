"""Fixtures of the application unit tests that drive panes (PaneRig: tests/support/pane_rig.py)."""

from __future__ import annotations

import pytest

from support.pane_rig import PaneRig


@pytest.fixture
def rig() -> PaneRig:
    return PaneRig()

"""Fixtures of the pane-driving unit tests (builders live in builders.py)."""

from __future__ import annotations

import pytest

from .builders import PaneRig


@pytest.fixture
def rig() -> PaneRig:
    return PaneRig()

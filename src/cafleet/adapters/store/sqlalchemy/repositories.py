"""Repositories over SQLAlchemy Core. They run inside a unit of work's connection.

One module per family: repositories_roster (fleets, agents, placements), repositories_messages
(messages and their search), repositories_deliveries, and repositories_operations (the
monitor, skill installs, relays). This module holds what they share.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import CursorResult

IN_CHUNK = 500


def new_id(result: CursorResult[Any]) -> int:
    key = result.inserted_primary_key
    assert key is not None, "insert without a primary key"
    return int(key[0])

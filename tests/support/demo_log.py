"""Reading a demo agent's log (CAFLEET_DEMO_LOG: one JSON object per line) while it runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def log_events(path: Path) -> list[dict[str, Any]]:
    """The events logged so far; a line being written right now is left out."""
    if not path.exists():
        return []
    events = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            events.append(json.loads(line))
        except ValueError:
            continue
    return events

"""Whether one JSON value has another's shape: the keys, their nesting and their JSON types.

Used to hold our `--json` output to upstream's recorded fixtures (tests/fixtures/upstream_json):
every key upstream has must be there at the same place with the same type; extra keys beside
them are allowed. `null` on either side matches any type, since a nullable field is null or
not depending on the data (a member with no activity yet, a pane not captured).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

UPSTREAM_FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "upstream_json"


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):  # before int: a bool is an int to Python
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    raise TypeError(f"not a JSON value: {value!r}")


def shape_mismatches(expected: Any, actual: Any, where: str = "$") -> list[str]:
    """Where `actual` lacks a key of `expected` or holds another type; [] when it fits."""
    if expected is None or actual is None:
        return []
    kinds = json_type(expected), json_type(actual)
    if kinds[0] != kinds[1]:
        return [f"{where}: upstream has {kinds[0]}, ours {kinds[1]} ({actual!r})"]
    found: list[str] = []
    if isinstance(expected, dict):
        for key, value in expected.items():
            if key in actual:
                found += shape_mismatches(value, actual[key], f"{where}.{key}")
            else:
                found.append(f"{where}: no key {key!r} (ours has {sorted(actual)})")
    elif isinstance(expected, list):
        if expected and not actual:
            found.append(f"{where}: upstream lists {len(expected)} items, ours none")
        for i, (item, ours) in enumerate(zip(expected, actual, strict=False)):
            found += shape_mismatches(item, ours, f"{where}[{i}]")
    return found


def upstream_fixtures() -> list[dict[str, Any]]:
    """Every recorded command as {"name", "step", "argv", "output"}, in step order."""
    loaded = [
        {"name": path.stem, **json.loads(path.read_text(encoding="utf-8"))}
        for path in UPSTREAM_FIXTURES.glob("*.json")
    ]
    return sorted(loaded, key=lambda fixture: fixture["step"])

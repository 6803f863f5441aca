"""MovedPanes: a pane moved to another workspace, still known by the id CAFleet recorded.

herdr gives a pane moved to another workspace a new id there (`w2:p1`) and keeps the old one
as an alias that every request still accepts (`src/app/ids.rs`), but `pane.list` names the
new id only, and events carry it. The pane keeps its terminal id, so a listing in which a
known pane id is missing while its terminal shows up under another id names that pane by
its former id as well.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from dataclasses import replace
from typing import Any

from cafleet.domain.panes import PaneInfo


class MovedPanes:
    def __init__(self) -> None:
        self._terminals: dict[str, str] = {}  # pane id, current or former -> terminal id
        self._current: dict[str, str] = {}  # terminal id -> the pane id of the last listing
        self._lock = threading.Lock()

    def aliased(
        self, result: Mapping[str, Any], panes: dict[str, PaneInfo], states: dict[str, str]
    ) -> None:
        """Add each moved pane's former ids to `panes` and `states` (of one `pane.list`
        `result`), with what its current id reports."""
        current = dict(_terminals(result))
        by_terminal = {terminal: pane_id for pane_id, terminal in current.items()}
        with self._lock:
            for former, terminal in self._terminals.items():
                now = by_terminal.get(terminal)
                if former in panes or now is None or now not in panes:
                    continue
                panes[former] = replace(panes[now], pane_id=former)
                if now in states:
                    states[former] = states[now]
            kept = {p: t for p, t in self._terminals.items() if t in by_terminal}
            self._terminals = kept | current
            self._current = by_terminal

    def current_id(self, pane_id: str) -> str:
        """The id the last listing gave the pane known as `pane_id`."""
        with self._lock:
            terminal = self._terminals.get(pane_id)
            return self._current.get(terminal, pane_id) if terminal else pane_id

    def former_ids(self, pane_id: str) -> list[str]:
        """The ids a pane had before it moved (of those seen in listings)."""
        with self._lock:
            terminal = self._terminals.get(pane_id)
            if terminal is None:
                return []
            return [p for p, t in self._terminals.items() if t == terminal and p != pane_id]


def _terminals(result: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    panes = result.get("panes")
    for raw in panes if isinstance(panes, list) else []:
        if not isinstance(raw, dict):
            continue
        pane_id, terminal = raw.get("pane_id"), raw.get("terminal_id")
        if isinstance(pane_id, str) and pane_id and isinstance(terminal, str) and terminal:
            yield pane_id, terminal


__all__ = ["MovedPanes"]

"""herdr's pane layout (`pane.layout`): rectangles, splits, and where the member column is.

The member column is found by layout rectangles, never by the order of pane-id strings
(`w1:p10` sorts before `w1:p9`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cafleet.adapters.herdr.client import dicts


@dataclass(frozen=True)
class Rect:
    x: int
    y: int
    w: int
    h: int

    @property
    def right(self) -> int:
        return self.x + self.w

    @property
    def bottom(self) -> int:
        return self.y + self.h


@dataclass(frozen=True)
class LayoutPane:
    pane_id: str
    rect: Rect


@dataclass(frozen=True)
class LayoutSplit:
    direction: str
    ratio: float
    rect: Rect
    path: tuple[bool, ...] | None = None  # from the root (True: second child), from its id

    @property
    def position(self) -> int:
        """Where the divider sits: herdr gives the first child round(size * ratio) cells."""
        size = self.rect.h if self.direction == "down" else self.rect.w
        start = self.rect.y if self.direction == "down" else self.rect.x
        return start + int(size * self.ratio + 0.5)


@dataclass(frozen=True)
class Layout:
    panes: tuple[LayoutPane, ...]
    splits: tuple[LayoutSplit, ...]
    focused: str | None = None

    def member_column(self, director: str) -> list[LayoutPane]:
        """The panes right of the Director that form the nearest column, top to bottom."""
        anchor = next((p.rect for p in self.panes if p.pane_id == director), None)
        if anchor is None:
            return []
        beside = [
            p
            for p in self.panes
            if p.pane_id != director
            and p.rect.x >= anchor.right
            and p.rect.y < anchor.bottom
            and p.rect.bottom > anchor.y
        ]
        if not beside:
            return []
        left = min(p.rect.x for p in beside)
        return sorted((p for p in beside if p.rect.x == left), key=lambda p: p.rect.y)

    def split_target(self, director: str) -> tuple[str, str]:
        """Where the next member goes: right of the Director while the column is empty,
        else below the bottom-most pane of the column."""
        column = self.member_column(director)
        if not column:
            return director, "right"
        bottom = max(column, key=lambda p: (p.rect.bottom, p.rect.y))
        return bottom.pane_id, "down"


def parse_layout(raw: Mapping[str, Any]) -> Layout:
    panes = tuple(
        LayoutPane(p["pane_id"], rect)
        for p in dicts(raw.get("panes"))
        if isinstance(p.get("pane_id"), str) and (rect := _rect(p.get("rect"))) is not None
    )
    splits = tuple(
        LayoutSplit(str(s.get("direction")), float(s.get("ratio") or 0.5), rect, _path(s.get("id")))
        for s in dicts(raw.get("splits"))
        if (rect := _rect(s.get("rect"))) is not None
    )
    focused = raw.get("focused_pane_id")
    return Layout(panes, splits, focused if isinstance(focused, str) else None)


def _path(split_id: object) -> tuple[bool, ...] | None:
    """A split's path from its id (herdr's `split_path_id`): `split_<n>_root` is the root,
    `split_<n>_<digits>` leads down the tree, 1 for the second child. None if not so."""
    if not isinstance(split_id, str):
        return None
    prefix, _, steps = split_id.rpartition("_")
    if not prefix.startswith("split_"):
        return None
    if steps == "root":
        return ()
    if steps and set(steps) <= {"0", "1"}:
        return tuple(step == "1" for step in steps)
    return None


def _rect(raw: object) -> Rect | None:
    if not isinstance(raw, dict):
        return None
    try:
        width = raw.get("width", raw.get("w"))
        height = raw.get("height", raw.get("h"))
        return Rect(int(raw["x"]), int(raw["y"]), int(width), int(height))  # type: ignore[arg-type]
    except (KeyError, TypeError, ValueError):
        return None

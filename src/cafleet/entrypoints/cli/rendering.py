"""Text and JSON renderings shared by the commands."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from cafleet.domain.message import Message, MessageState, MessageType
from cafleet.domain.placement import Placement
from cafleet.domain.preview import truncated
from cafleet.domain.terminal import escaped

# Characters json.dumps leaves raw that a terminal may obey or reorder (DEL, C1 controls, bidi
# controls, line and paragraph separators); they can only occur inside strings.
_RAW_IN_JSON = re.compile(r"[\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def dumps(value: Any) -> str:
    """Compact JSON, non-ASCII text kept readable; what a terminal could obey is \\u-escaped,
    so the value a script parses is still exact."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return _RAW_IN_JSON.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat(timespec="microseconds")


def deleted_fleet_note(deleted_at: datetime) -> str:
    """What every read of a deleted fleet's history says of it."""
    return f"(fleet deleted {iso(deleted_at)}; its history is read-only)"


def with_fleet_deleted(body: dict[str, Any], deleted_at: datetime | None) -> dict[str, Any]:
    """A JSON answer about a deleted fleet's history gains `fleet_deleted_at` (only then, so
    a live fleet's answers keep their shape)."""
    if deleted_at is not None:
        body["fleet_deleted_at"] = iso(deleted_at)
    return body


def whole_seconds(delta: timedelta) -> int:
    """An age as JSON gives it (upstream's shape): whole seconds, never negative."""
    return max(0, int(delta.total_seconds()))


def humanize(delta: timedelta) -> str:
    seconds = whole_seconds(delta)
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m"
    return f"{seconds // 3600}h"


def labelled(pairs: Sequence[tuple[str, object]], width: int, indent: str = "") -> str:
    """Lines of `label: value` with every value starting in the same column."""
    return "\n".join(_labelled_line(label, value, width, indent) for label, value in pairs)


def _labelled_line(label: str, value: object, width: int, indent: str) -> str:
    text = str(value)
    head = f"{indent}{label}:"
    return head if text == "" else head.ljust(len(indent) + width) + text


def table(headers: Sequence[str], rows: Sequence[Sequence[object]], indent: str = "") -> str:
    """Columns sized to their content as printed (controls escaped), two spaces apart, a
    dashed rule under the header."""
    cells = [[escaped(str(c)) for c in row] for row in rows]
    widths = [max([len(h), *(len(r[i]) for r in cells)]) for i, h in enumerate(headers)]

    def line(values: Sequence[str]) -> str:
        return (
            indent + "  ".join(v.ljust(w) for v, w in zip(values, widths, strict=True))
        ).rstrip()

    return "\n".join([line(headers), line(["-" * w for w in widths]), *map(line, cells)])


def count_line(n: int, noun: str) -> str:
    if n == 0:
        return f"0 {noun}s."
    return f"1 {noun}:" if n == 1 else f"{n} {noun}s:"


def placement_json(p: Placement) -> dict[str, Any]:
    return {
        "director_agent_id": p.director_agent_id,
        "backend": p.backend.value,
        "mux_session": p.session,
        "mux_window_id": p.window_id,
        "mux_pane_id": p.pane_id,
        "coding_agent": p.coding_agent.value,
        "created_at": iso(p.created_at),
        "ready_at": iso(p.ready_at),
        "ready_rule": p.ready_rule,
        "host": p.host,
    }


class MessageRenderer:
    """The compact and full renderings of a message, in text and JSON."""

    def __init__(self, max_text_len: int, full: bool) -> None:
        self._limit = max_text_len
        self.full = full

    def body(self, m: Message) -> str:
        return m.text if self.full else truncated(m.text, self._limit)

    def text(self, m: Message, *, sender_check: bool = False) -> str:
        """`sender_check` (full only) says after the sender whether it proved to be the
        member whose pane sent the message."""
        if self.full:
            sender = str(m.from_agent_id)
            if sender_check:
                sender += " (verified)" if m.sender_verified else " (not verified)"
            pairs: list[tuple[str, object]] = [
                ("id", m.task_id),
                ("state", m.state.value),
                ("from", sender),
            ]
            if m.to_agent_id is not None:
                pairs.append(("to", m.to_agent_id))
            pairs.append(("type", m.type.value))
            if m.in_reply_to is not None:
                pairs.append(("re", f"{m.in_reply_to} (thread {m.thread})"))
            if m.text:
                pairs.append(("text", m.text))
            return labelled(pairs, 7, indent="  ")
        segments = [str(m.task_id), f"from:{m.from_agent_id}"]
        if m.type is not MessageType.UNICAST:
            segments.append(f"kind:{m.type.value}")
        if m.origin_task_id is not None:
            segments.append(f"origin:{m.origin_task_id}")
        if m.in_reply_to is not None:
            segments.append(f"re:{m.in_reply_to}")
        if m.state is not MessageState.INPUT_REQUIRED:
            segments.append(f"state:{m.state.value}")
        segments.append(iso(m.status_timestamp) or "")
        header = "[" + " | ".join(segments) + "]"
        return f"{header}\n{self.body(m)}" if m.text else header

    def json(self, m: Message) -> dict[str, Any]:
        if self.full:
            return {
                "task_id": m.task_id,
                "context_id": m.context_id,
                "from_agent_id": m.from_agent_id,
                "to_agent_id": m.to_agent_id,
                "type": m.type.value,
                "created_at": iso(m.created_at),
                "status_state": m.state.value,
                "status_timestamp": iso(m.status_timestamp),
                "origin_task_id": m.origin_task_id,
                "text": m.text,
                "sender_verified": m.sender_verified,
                "in_reply_to": m.in_reply_to,
                "thread_id": m.thread,
            }
        compact: dict[str, Any] = {
            "id": m.task_id,
            "from": m.from_agent_id,
            "ts": iso(m.status_timestamp),
            "text": self.body(m),
            "in_reply_to": m.in_reply_to,
            "thread_id": m.thread,
        }
        if m.type is not MessageType.UNICAST:
            compact["kind"] = m.type.value
        if m.origin_task_id is not None:
            compact["origin"] = m.origin_task_id
        if m.state is not MessageState.INPUT_REQUIRED:
            compact["state"] = m.state.value
        return compact

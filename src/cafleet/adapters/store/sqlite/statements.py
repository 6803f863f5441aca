"""Statement building for the direct adapter: table and column names come from this module
and the row mappers, never from input; every value is a bound parameter."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

# Each table's columns at the head revision; a test holds them equal to the SQLAlchemy tables.
COLUMNS: dict[str, tuple[str, ...]] = {
    "fleets": ("fleet_id", "name", "created_at", "deleted_at", "director_agent_id"),
    "agents": (
        "agent_id",
        "fleet_id",
        "name",
        "description",
        "status",
        "registered_at",
        "deregistered_at",
        "agent_card_json",
    ),
    "agent_placements": (
        "agent_id",
        "director_agent_id",
        "mux_session",
        "mux_window_id",
        "mux_pane_id",
        "backend",
        "coding_agent",
        "created_at",
        "mux_socket",
        "agent_commands",
        "ready_at",
        "ready_rule",
        "launch_pad",
        "pane_identity",
        "identity_digest",
        "host",
    ),
    "tasks": (
        "task_id",
        "context_id",
        "from_agent_id",
        "to_agent_id",
        "type",
        "created_at",
        "status_state",
        "status_timestamp",
        "origin_task_id",
        "text",
        "sender_verified",
        "in_reply_to",
        "thread_id",
    ),
    "monitor_config": (
        "agent_id",
        "interval_seconds",
        "last_ping_at",
        "enabled",
        "last_stall_check_at",
        "last_native_status",
    ),
    "monitor_runtime": ("fleet_id", "pid", "started_at", "last_tick_at", "tick_seconds", "host"),
    "skill_installs": ("coding_agent", "cafleet_version", "installed_at"),
    "deliveries": (
        "delivery_id",
        "task_id",
        "recipient_agent_id",
        "state",
        "transport",
        "pane_id",
        "created_at",
        "attempted_at",
        "error",
        "attempt",
        "channel",
        "confirmed_at",
    ),
    "relays": (
        "host",
        "pid",
        "started_at",
        "seen_at",
        "backend",
        "mux_session",
        "mux_window_id",
        "mux_pane_id",
        "mux_socket",
        "pane_identity",
    ),
    "pane_reports": (
        "agent_id",
        "host",
        "pane_state",
        "agent_status",
        "status_since",
        "detected",
    ),
    "relay_requests": (
        "request_id",
        "host",
        "fleet_id",
        "agent_id",
        "verb",
        "argument",
        "state",
        "answer",
        "error_kind",
        "created_at",
        "answered_at",
    ),
}

IN_CHUNK = 500  # ids bound per IN list: far below SQLite's variable limit


def select_all(table: str) -> str:
    return f"SELECT {', '.join(COLUMNS[table])} FROM {table}"


def insert(table: str, values: Mapping[str, Any]) -> tuple[str, list[Any]]:
    names = ", ".join(values)
    marks = ", ".join("?" * len(values))
    return f"INSERT INTO {table} ({names}) VALUES ({marks})", list(values.values())


def update(table: str, values: Mapping[str, Any], where: str) -> tuple[str, list[Any]]:
    """UPDATE table SET every value WHERE where; the caller appends where's parameters."""
    assignments = ", ".join(f"{name} = ?" for name in values)
    return f"UPDATE {table} SET {assignments} WHERE {where}", list(values.values())


def marks(count: int) -> str:
    return ", ".join("?" * count)


def chunks(ids: Sequence[int]) -> Iterator[list[int]]:
    for start in range(0, len(ids), IN_CHUNK):
        yield list(ids[start : start + IN_CHUNK])

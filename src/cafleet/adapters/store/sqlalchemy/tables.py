"""The schema as SQLAlchemy Core tables: the head revision the migrations build.

Timestamps are ISO-8601 strings; the tables keep upstream 0.17's names so a
database created by upstream upgrades in place.
"""

from __future__ import annotations

from sqlalchemy import (
    Column,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    UniqueConstraint,
    text,
)

metadata = MetaData()

fleets = Table(
    "fleets",
    metadata,
    Column("fleet_id", Integer, primary_key=True, autoincrement=True),
    Column("name", String),
    Column("created_at", String, nullable=False),
    Column("deleted_at", String),
    Column("director_agent_id", Integer, ForeignKey("agents.agent_id", ondelete="RESTRICT")),
    sqlite_autoincrement=True,
)

agents = Table(
    "agents",
    metadata,
    Column("agent_id", Integer, primary_key=True, autoincrement=True),
    Column("fleet_id", Integer, ForeignKey("fleets.fleet_id", ondelete="RESTRICT"), nullable=False),
    Column("name", String, nullable=False),
    Column("description", String, nullable=False),
    Column("status", String, nullable=False),
    Column("registered_at", String, nullable=False),
    Column("deregistered_at", String),
    Column("agent_card_json", String, nullable=False),
    Index("idx_agents_fleet_status", "fleet_id", "status"),
    sqlite_autoincrement=True,
)

agent_placements = Table(
    "agent_placements",
    metadata,
    Column(
        "agent_id", Integer, ForeignKey("agents.agent_id", ondelete="CASCADE"), primary_key=True
    ),
    Column("director_agent_id", Integer, ForeignKey("agents.agent_id", ondelete="RESTRICT")),
    Column("mux_session", String, nullable=False),
    Column("mux_window_id", String, nullable=False),
    Column("mux_pane_id", String),
    Column("backend", String, nullable=False, server_default=text("'tmux'")),
    Column("coding_agent", String, nullable=False, server_default=text("'claude'")),
    Column("created_at", String, nullable=False),
    Column("mux_socket", String),
    Column("agent_commands", String),
    Column("ready_at", String),
    Column("ready_rule", String),
    Column("launch_pad", String),
    Column("pane_identity", String),
    Column("identity_digest", String),
    Column("host", String),  # None on rows from before hosts (migration 0007)
    Index("idx_placements_director", "director_agent_id"),
)

tasks = Table(
    "tasks",
    metadata,
    Column("task_id", Integer, primary_key=True, autoincrement=True),
    Column(
        "context_id", Integer, ForeignKey("agents.agent_id", ondelete="RESTRICT"), nullable=False
    ),
    Column("from_agent_id", Integer, nullable=False),
    Column("to_agent_id", Integer),
    Column("type", String, nullable=False),
    Column("created_at", String, nullable=False),
    Column("status_state", String, nullable=False),
    Column("status_timestamp", String, nullable=False),
    Column("origin_task_id", Integer),
    Column("text", String, nullable=False),
    Column("sender_verified", Integer, nullable=False, server_default=text("0")),
    Column("in_reply_to", Integer),  # the message this one answers (0010)
    Column("thread_id", Integer),  # the message that started its thread (0010)
    Index("idx_tasks_context_status_ts", "context_id", "status_timestamp"),
    Index("idx_tasks_from_agent_status_ts", "from_agent_id", "status_timestamp"),
    Index("idx_tasks_thread", "thread_id", "task_id"),
    sqlite_autoincrement=True,
)

monitor_config = Table(
    "monitor_config",
    metadata,
    Column(
        "agent_id", Integer, ForeignKey("agents.agent_id", ondelete="CASCADE"), primary_key=True
    ),
    Column("interval_seconds", Integer, nullable=False, server_default=text("60")),
    Column("last_ping_at", String),
    Column("enabled", Integer, nullable=False, server_default=text("1")),
    Column("last_stall_check_at", String),
    Column("last_native_status", String),
)

monitor_runtime = Table(
    "monitor_runtime",
    metadata,
    Column(
        "fleet_id", Integer, ForeignKey("fleets.fleet_id", ondelete="RESTRICT"), primary_key=True
    ),
    Column("pid", Integer),
    Column("started_at", String),
    Column("last_tick_at", String),
    Column("tick_seconds", Integer, nullable=False, server_default=text("5")),
    Column("host", String),
)

skill_installs = Table(
    "skill_installs",
    metadata,
    Column("coding_agent", String, primary_key=True),
    Column("cafleet_version", String, nullable=False),
    Column("installed_at", String, nullable=False),
)

deliveries = Table(
    "deliveries",
    metadata,
    Column("delivery_id", Integer, primary_key=True, autoincrement=True),
    Column("task_id", Integer, ForeignKey("tasks.task_id", ondelete="CASCADE"), nullable=False),
    Column(
        "recipient_agent_id",
        Integer,
        ForeignKey("agents.agent_id", ondelete="RESTRICT"),
        nullable=False,
    ),
    Column("state", String, nullable=False),
    Column("transport", String),
    Column("pane_id", String),
    Column("created_at", String, nullable=False),
    Column("attempted_at", String),
    Column("error", String),
    Column("attempt", Integer, nullable=False, server_default=text("1")),
    Column("channel", String),
    Column("confirmed_at", String),
    UniqueConstraint(
        "task_id", "recipient_agent_id", "attempt", name="uq_deliveries_task_recipient_attempt"
    ),
    Index("idx_deliveries_state_created", "state", "created_at"),
    sqlite_autoincrement=True,
)

relays = Table(
    "relays",
    metadata,
    Column("host", String, primary_key=True),
    Column("pid", Integer, nullable=False),
    Column("started_at", String, nullable=False),
    Column("seen_at", String, nullable=False),
    # the relay's own pane, if it runs in one (0009)
    Column("backend", String),
    Column("mux_session", String),
    Column("mux_window_id", String),
    Column("mux_pane_id", String),
    Column("mux_socket", String),
    Column("pane_identity", String),
)

relay_requests = Table(
    "relay_requests",
    metadata,
    Column("request_id", Integer, primary_key=True, autoincrement=True),
    Column("host", String, nullable=False),
    Column("fleet_id", Integer, nullable=False),
    Column("agent_id", Integer, nullable=False),
    Column("verb", String, nullable=False),
    Column("argument", String, nullable=False),
    Column("state", String, nullable=False),
    Column("answer", String),
    Column("error_kind", String),
    Column("created_at", String, nullable=False),
    Column("answered_at", String),
    Index("idx_relay_requests_host_state", "host", "state"),
)

pane_reports = Table(
    "pane_reports",
    metadata,
    Column("agent_id", Integer, primary_key=True, autoincrement=False),
    Column("host", String, nullable=False),
    Column("pane_state", String),
    Column("agent_status", String, nullable=False),
    Column("status_since", String),
    Column("detected", String),
    Index("idx_pane_reports_host", "host"),
)

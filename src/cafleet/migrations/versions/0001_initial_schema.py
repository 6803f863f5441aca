"""The schema of upstream release line 0.17: fleets, agents, placements, tasks, monitor, skills.

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def _text(name: str, nullable: bool = True) -> sa.Column[str]:
    return sa.Column(name, sa.String, nullable=nullable)


def upgrade() -> None:
    # fleets and agents name each other. SQLite checks a foreign key only when a row is
    # written, so fleets keeps upstream's inline one; PostgreSQL needs agents to exist first.
    inline = op.get_bind().dialect.name == "sqlite"
    director = (sa.ForeignKey("agents.agent_id", ondelete="RESTRICT"),) if inline else ()
    op.create_table(
        "fleets",
        sa.Column("fleet_id", sa.Integer, primary_key=True, autoincrement=True),
        _text("name"),
        _text("created_at", nullable=False),
        _text("deleted_at"),
        sa.Column("director_agent_id", sa.Integer, *director),
        sqlite_autoincrement=True,
    )
    op.create_table(
        "agents",
        sa.Column("agent_id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column(
            "fleet_id",
            sa.Integer,
            sa.ForeignKey("fleets.fleet_id", ondelete="RESTRICT"),
            nullable=False,
        ),
        _text("name", nullable=False),
        _text("description", nullable=False),
        _text("status", nullable=False),
        _text("registered_at", nullable=False),
        _text("deregistered_at"),
        _text("agent_card_json", nullable=False),
        sqlite_autoincrement=True,
    )
    op.create_index("idx_agents_fleet_status", "agents", ["fleet_id", "status"])
    if not inline:
        op.create_foreign_key(
            "fleets_director_agent_id_fkey",
            "fleets",
            "agents",
            ["director_agent_id"],
            ["agent_id"],
            ondelete="RESTRICT",
        )
    op.create_table(
        "agent_placements",
        sa.Column(
            "agent_id",
            sa.Integer,
            sa.ForeignKey("agents.agent_id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column(
            "director_agent_id", sa.Integer, sa.ForeignKey("agents.agent_id", ondelete="RESTRICT")
        ),
        _text("mux_session", nullable=False),
        _text("mux_window_id", nullable=False),
        _text("mux_pane_id"),
        sa.Column("backend", sa.String, nullable=False, server_default=sa.text("'tmux'")),
        sa.Column("coding_agent", sa.String, nullable=False, server_default=sa.text("'claude'")),
        _text("created_at", nullable=False),
    )
    op.create_index("idx_placements_director", "agent_placements", ["director_agent_id"])
    op.create_table(
        "tasks",
        sa.Column("task_id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column(
            "context_id",
            sa.Integer,
            sa.ForeignKey("agents.agent_id", ondelete="RESTRICT"),
            nullable=False,
        ),
        sa.Column("from_agent_id", sa.Integer, nullable=False),
        sa.Column("to_agent_id", sa.Integer),
        _text("type", nullable=False),
        _text("created_at", nullable=False),
        _text("status_state", nullable=False),
        _text("status_timestamp", nullable=False),
        sa.Column("origin_task_id", sa.Integer),
        _text("text", nullable=False),
        sqlite_autoincrement=True,
    )
    op.create_index("idx_tasks_context_status_ts", "tasks", ["context_id", "status_timestamp"])
    op.create_index(
        "idx_tasks_from_agent_status_ts", "tasks", ["from_agent_id", "status_timestamp"]
    )
    op.create_table(
        "monitor_config",
        sa.Column(
            "agent_id",
            sa.Integer,
            sa.ForeignKey("agents.agent_id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("interval_seconds", sa.Integer, nullable=False, server_default=sa.text("60")),
        _text("last_ping_at"),
        sa.Column("enabled", sa.Integer, nullable=False, server_default=sa.text("1")),
    )
    op.create_table(
        "monitor_runtime",
        sa.Column(
            "fleet_id",
            sa.Integer,
            sa.ForeignKey("fleets.fleet_id", ondelete="RESTRICT"),
            primary_key=True,
        ),
        sa.Column("pid", sa.Integer),
        _text("started_at"),
        _text("last_tick_at"),
        sa.Column("tick_seconds", sa.Integer, nullable=False, server_default=sa.text("5")),
    )
    op.create_table(
        "skill_installs",
        sa.Column("coding_agent", sa.String, primary_key=True),
        _text("cafleet_version", nullable=False),
        _text("installed_at", nullable=False),
    )

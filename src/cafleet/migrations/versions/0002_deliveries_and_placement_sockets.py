"""Deliveries ledger; placement socket and command names; persisted monitor state; runtime host.

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("agent_placements", sa.Column("mux_socket", sa.String))
    op.add_column("agent_placements", sa.Column("agent_commands", sa.String))
    op.add_column("monitor_config", sa.Column("last_stall_check_at", sa.String))
    op.add_column("monitor_config", sa.Column("last_native_status", sa.String))
    op.add_column("monitor_runtime", sa.Column("host", sa.String))
    op.create_table(
        "deliveries",
        sa.Column("delivery_id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column(
            "task_id",
            sa.Integer,
            sa.ForeignKey("tasks.task_id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column(
            "recipient_agent_id",
            sa.Integer,
            sa.ForeignKey("agents.agent_id", ondelete="RESTRICT"),
            nullable=False,
        ),
        sa.Column("state", sa.String, nullable=False),
        sa.Column("transport", sa.String),
        sa.Column("pane_id", sa.String),
        sa.Column("created_at", sa.String, nullable=False),
        sa.Column("attempted_at", sa.String),
        sa.Column("error", sa.String),
        sa.UniqueConstraint("task_id", "recipient_agent_id", name="uq_deliveries_task_recipient"),
        sqlite_autoincrement=True,
    )
    op.create_index("idx_deliveries_state_created", "deliveries", ["state", "created_at"])

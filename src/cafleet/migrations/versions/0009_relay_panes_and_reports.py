"""Relay panes and pane reports: a relay records the pane it runs in (members spawned on its
host from elsewhere open beside it), and what it last saw of each member pane of its host,
which the other hosts' commands and monitor read while it is alive.

Revision ID: 0009
Revises: 0008
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

PANE_COLUMNS = ("backend", "mux_session", "mux_window_id", "mux_pane_id", "mux_socket",
                "pane_identity")  # fmt: skip


def upgrade() -> None:
    with op.batch_alter_table("relays") as batch:
        for name in PANE_COLUMNS:
            batch.add_column(sa.Column(name, sa.String))
    op.create_table(
        "pane_reports",
        sa.Column("agent_id", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("host", sa.String, nullable=False),
        sa.Column("pane_state", sa.String),
        sa.Column("agent_status", sa.String, nullable=False),
        sa.Column("status_since", sa.String),
        sa.Column("detected", sa.String),
    )
    op.create_index("idx_pane_reports_host", "pane_reports", ["host"])


def downgrade() -> None:
    op.drop_index("idx_pane_reports_host", "pane_reports")
    op.drop_table("pane_reports")
    with op.batch_alter_table("relays") as batch:
        for name in PANE_COLUMNS:
            batch.drop_column(name)

"""Relays: each host's `cafleet relay` reports when it was last seen, and the pane verbs a
command on another host asks of it wait in `relay_requests` with their answers.

Revision ID: 0008
Revises: 0007
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "relays",
        sa.Column("host", sa.String, primary_key=True),
        sa.Column("pid", sa.Integer, nullable=False),
        sa.Column("started_at", sa.String, nullable=False),
        sa.Column("seen_at", sa.String, nullable=False),
    )
    op.create_table(
        "relay_requests",
        sa.Column("request_id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("host", sa.String, nullable=False),
        sa.Column("fleet_id", sa.Integer, nullable=False),
        sa.Column("agent_id", sa.Integer, nullable=False),
        sa.Column("verb", sa.String, nullable=False),
        sa.Column("argument", sa.String, nullable=False),
        sa.Column("state", sa.String, nullable=False),
        sa.Column("answer", sa.String),
        sa.Column("error_kind", sa.String),
        sa.Column("created_at", sa.String, nullable=False),
        sa.Column("answered_at", sa.String),
    )
    op.create_index("idx_relay_requests_host_state", "relay_requests", ["host", "state"])


def downgrade() -> None:
    op.drop_index("idx_relay_requests_host_state", "relay_requests")
    op.drop_table("relay_requests")
    op.drop_table("relays")

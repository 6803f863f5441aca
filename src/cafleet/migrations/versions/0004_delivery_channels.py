"""Delivery channels: every attempt is a ledger row naming its channel, an attempt the agent
confirmed has a time, and a placement names the member's private launch pad.

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

# SQLite rebuilds the table for a new constraint; ids must still never be reused
KEEP_AUTOINCREMENT = {"sqlite_autoincrement": True}


def upgrade() -> None:
    with op.batch_alter_table("deliveries", table_kwargs=KEEP_AUTOINCREMENT) as batch:
        batch.add_column(sa.Column("attempt", sa.Integer, nullable=False, server_default="1"))
        batch.add_column(sa.Column("channel", sa.String))
        batch.add_column(sa.Column("confirmed_at", sa.String))
        batch.drop_constraint("uq_deliveries_task_recipient", type_="unique")
        batch.create_unique_constraint(
            "uq_deliveries_task_recipient_attempt", ["task_id", "recipient_agent_id", "attempt"]
        )
    # before channels, every push that reached a pane was typed into it
    op.execute("UPDATE deliveries SET channel = 'keys' WHERE transport IS NOT NULL")
    op.add_column("agent_placements", sa.Column("launch_pad", sa.String))


def downgrade() -> None:
    with op.batch_alter_table("agent_placements") as batch:
        batch.drop_column("launch_pad")
    op.execute("DELETE FROM deliveries WHERE attempt > 1")
    with op.batch_alter_table("deliveries", table_kwargs=KEEP_AUTOINCREMENT) as batch:
        batch.drop_constraint("uq_deliveries_task_recipient_attempt", type_="unique")
        batch.create_unique_constraint(
            "uq_deliveries_task_recipient", ["task_id", "recipient_agent_id"]
        )
        batch.drop_column("confirmed_at")
        batch.drop_column("channel")
        batch.drop_column("attempt")

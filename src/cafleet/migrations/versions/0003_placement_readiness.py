"""When a member's agent was seen ready to take text, and by which rule.

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("agent_placements", sa.Column("ready_at", sa.String))
    op.add_column("agent_placements", sa.Column("ready_rule", sa.String))
    # panes placed before readiness was recorded were typed into from the start
    op.execute(
        "UPDATE agent_placements SET ready_at = created_at, ready_rule = 'legacy'"
        " WHERE mux_pane_id IS NOT NULL"
    )


def downgrade() -> None:
    with op.batch_alter_table("agent_placements") as batch:
        batch.drop_column("ready_rule")
        batch.drop_column("ready_at")

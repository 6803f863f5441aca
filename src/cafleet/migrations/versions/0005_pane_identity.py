"""Pane identity: what the multiplexer reported of a placement's pane when it was recorded
(for tmux its CAFleet marker, process and server), so a pane that later took the same id is
never mistaken for it.

Revision ID: 0005
Revises: 0004
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # rows recorded before stay NULL: see Placement.identity for how they are treated
    op.add_column("agent_placements", sa.Column("pane_identity", sa.String))


def downgrade() -> None:
    with op.batch_alter_table("agent_placements") as batch:
        batch.drop_column("pane_identity")

"""Placement hosts: the machine each placement's pane lives on (`CAFLEET_HOST`), so that on a
store shared by several machines a pane id is only ever used on the host that recorded it.

Revision ID: 0007
Revises: 0006
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # rows recorded before stay NULL: their panes are taken to be on whichever host asks
    op.add_column("agent_placements", sa.Column("host", sa.String))


def downgrade() -> None:
    with op.batch_alter_table("agent_placements") as batch:
        batch.drop_column("host")

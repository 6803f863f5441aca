"""Member identity: a placement keeps the digest of its member's secret, and a message
records whether its sender proved to be the member whose pane sent it.

Revision ID: 0006
Revises: 0005
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

# SQLite rebuilds the table to drop a column; ids must still never be reused
KEEP_AUTOINCREMENT = {"sqlite_autoincrement": True}


def upgrade() -> None:
    op.add_column("agent_placements", sa.Column("identity_digest", sa.String))
    # messages sent before this revision were never verified
    op.add_column(
        "tasks", sa.Column("sender_verified", sa.Integer, nullable=False, server_default="0")
    )


def downgrade() -> None:
    with op.batch_alter_table("tasks", table_kwargs=KEEP_AUTOINCREMENT) as batch:
        batch.drop_column("sender_verified")
    with op.batch_alter_table("agent_placements") as batch:
        batch.drop_column("identity_digest")

"""Threads: a message may answer another (`in_reply_to`), and every message belongs to a
thread (`thread_id`: the id of the message that started it). Existing messages each start
their own thread, except a broadcast's copies, which are in their broadcast's.

Revision ID: 0010
Revises: 0009
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("tasks") as batch:
        batch.add_column(sa.Column("in_reply_to", sa.Integer))
        batch.add_column(sa.Column("thread_id", sa.Integer))
    op.execute(
        "UPDATE tasks SET thread_id = CASE WHEN origin_task_id IS NULL THEN task_id"
        " ELSE origin_task_id END"
    )
    op.create_index("idx_tasks_thread", "tasks", ["thread_id", "task_id"])


def downgrade() -> None:
    op.drop_index("idx_tasks_thread", "tasks")
    with op.batch_alter_table("tasks") as batch:
        batch.drop_column("thread_id")
        batch.drop_column("in_reply_to")

"""PostgreSQL keeps each message body's text search vector in a stored generated column
(`tasks.text_search`), indexed by GIN in place of 0011's expression index: ranking a word
found in most messages then reads the vectors instead of parsing every body again. SQLite's
FTS5 index already stores its own; nothing changes there.

Revision ID: 0012
Revises: 0011
"""

from __future__ import annotations

from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None

POSTGRES_UP = (
    "ALTER TABLE tasks ADD COLUMN text_search tsvector"
    " GENERATED ALWAYS AS (to_tsvector('simple', text)) STORED",
    "CREATE INDEX idx_tasks_text_search_vector ON tasks USING gin (text_search)",
    "DROP INDEX idx_tasks_text_search",
)
POSTGRES_DOWN = (
    "CREATE INDEX idx_tasks_text_search ON tasks USING gin (to_tsvector('simple', text))",
    "DROP INDEX idx_tasks_text_search_vector",
    "ALTER TABLE tasks DROP COLUMN text_search",
)


def upgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        for statement in POSTGRES_UP:
            op.execute(statement)


def downgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        for statement in POSTGRES_DOWN:
            op.execute(statement)

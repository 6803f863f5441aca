"""Full-text search over message bodies. On SQLite an FTS5 index (`tasks_fts`, external
content: the bodies stay in `tasks` alone), kept in step by triggers and built here from the
messages already stored; on PostgreSQL a GIN index over the bodies' `simple` text search
vectors, which the search query uses.

Revision ID: 0011
Revises: 0010
"""

from __future__ import annotations

from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None

SQLITE_UP = (
    "CREATE VIRTUAL TABLE tasks_fts USING fts5(text, content='tasks', content_rowid='task_id',"
    " tokenize='unicode61 remove_diacritics 2')",
    "CREATE TRIGGER tasks_fts_insert AFTER INSERT ON tasks BEGIN"
    " INSERT INTO tasks_fts(rowid, text) VALUES (new.task_id, new.text); END",
    "CREATE TRIGGER tasks_fts_delete AFTER DELETE ON tasks BEGIN"
    " INSERT INTO tasks_fts(tasks_fts, rowid, text) VALUES ('delete', old.task_id, old.text);"
    " END",
    "CREATE TRIGGER tasks_fts_update AFTER UPDATE OF text ON tasks BEGIN"
    " INSERT INTO tasks_fts(tasks_fts, rowid, text) VALUES ('delete', old.task_id, old.text);"
    " INSERT INTO tasks_fts(rowid, text) VALUES (new.task_id, new.text); END",
    "INSERT INTO tasks_fts(tasks_fts) VALUES ('rebuild')",  # the messages stored before
)
SQLITE_DOWN = (
    "DROP TRIGGER tasks_fts_update",
    "DROP TRIGGER tasks_fts_delete",
    "DROP TRIGGER tasks_fts_insert",
    "DROP TABLE tasks_fts",
)
POSTGRES_UP = (
    "CREATE INDEX idx_tasks_text_search ON tasks USING gin (to_tsvector('simple', text))",
)
POSTGRES_DOWN = ("DROP INDEX idx_tasks_text_search",)


def upgrade() -> None:
    sqlite = op.get_bind().dialect.name == "sqlite"
    for statement in SQLITE_UP if sqlite else POSTGRES_UP:
        op.execute(statement)


def downgrade() -> None:
    sqlite = op.get_bind().dialect.name == "sqlite"
    for statement in SQLITE_DOWN if sqlite else POSTGRES_DOWN:
        op.execute(statement)

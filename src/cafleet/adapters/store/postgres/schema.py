"""Bringing a PostgreSQL database to the head revision with the same Alembic migrations."""

from __future__ import annotations

from sqlalchemy import inspect

from cafleet.adapters.store.postgres.engine import MIGRATION_LOCK, open_engine, take_lock
from cafleet.adapters.store.postgres.unit_of_work import postgres_rules
from cafleet.adapters.store.revision import REVISION_QUERY
from cafleet.adapters.store.sqlite.schema import (
    MigrationOutcome,
    MigrationReport,
    migration_goal,
    migration_outcome,
    upgrade,
)


def migrate(url: str, target: str = "head") -> MigrationReport:
    """Upgrade the database at url to target, refusing schemas we did not create. Two
    migrations at once take turns (an advisory lock), so the second finds the first's work."""
    rules = postgres_rules(url)
    engine = open_engine(url)
    try:
        with rules.translated(), engine.connect() as conn:
            take_lock(conn, MIGRATION_LOCK)
            names = set(inspect(conn).get_table_names())
            current = None
            if "alembic_version" in names:
                found = conn.exec_driver_sql(REVISION_QUERY).scalar()
                current = None if found is None else str(found)
            goal = migration_goal(current, bool(names - {"alembic_version"}), target,
                                  fresh="database")  # fmt: skip
            if current == goal:
                return MigrationReport(MigrationOutcome.AT_HEAD, current, goal)
            upgrade(conn, goal)
            conn.commit()
    finally:
        engine.dispose()
    return MigrationReport(migration_outcome(current), current, goal)


def read_revision(url: str) -> str | None:
    """The recorded revision, or None when the database has no record of one."""
    engine = open_engine(url)
    try:
        with postgres_rules(url).translated(), engine.connect() as conn:
            if not inspect(conn).has_table("alembic_version"):
                return None
            found = conn.exec_driver_sql(REVISION_QUERY).scalar()
            return None if found is None else str(found)
    finally:
        engine.dispose()

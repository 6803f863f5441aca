"""Bringing a database file to the head revision with the bundled Alembic migrations."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING

import cafleet
from cafleet.adapters.store.sqlite.errors import translated
from cafleet.adapters.store.sqlite.files import database_exists
from cafleet.domain.errors import Invalid, SchemaNewer, Unavailable

if TYPE_CHECKING:
    from alembic.config import Config
    from sqlalchemy import Connection

HEAD_REVISION = "0012"
MIGRATIONS = Path(cafleet.__file__).resolve().parent / "migrations"  # package data


class MigrationOutcome(Enum):
    CREATED = "created"
    UPGRADED = "upgraded"
    AT_HEAD = "at_head"


@dataclass(frozen=True)
class MigrationReport:
    outcome: MigrationOutcome
    from_revision: str | None
    to_revision: str


def require_file_path(path: Path) -> None:
    database_exists(path)


def newer_than_head(revision: str) -> bool:
    """Revisions are numbered (0001, 0002...): a higher number comes from a later cafleet."""
    return revision.isdigit() and int(revision) > int(HEAD_REVISION)


def _use_wal(path: Path) -> None:
    with translated(path):
        conn = sqlite3.connect(f"{path.absolute().as_uri()}?mode=rw", uri=True)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
        finally:
            conn.close()


def read_revision(path: Path) -> str | None:
    """The recorded revision, or None when the file or the record is missing (cheap: sqlite3)."""
    return _inspect(path)[0]


def migrate(path: Path, target: str = "head") -> MigrationReport:
    """Upgrade the file at path to target, refusing schemas we did not create."""
    from cafleet.adapters.store.sqlalchemy.engine import open_engine

    require_file_path(path)
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)  # a new folder: ours
    except OSError as exc:
        raise Unavailable(f"cannot open database {path}: {exc.strerror or exc}") from None
    current, has_tables = _inspect(path)
    goal = migration_goal(current, has_tables, target)
    if current == goal:
        _use_wal(path)  # a database at head may still have been left in rollback-journal mode
        return MigrationReport(MigrationOutcome.AT_HEAD, current, goal)
    engine = open_engine(path, create=True)
    try:
        with translated(path), engine.connect() as conn:
            upgrade(conn, goal)
            conn.commit()
    finally:
        engine.dispose()
    return MigrationReport(migration_outcome(current), current, goal)


def _alembic_config() -> Config:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    return config


def migration_goal(
    current: str | None, has_tables: bool, target: str = "head", *, fresh: str = "file"
) -> str:
    """The revision to upgrade to, after refusing a schema this version did not create (or
    one a later version did)."""
    from alembic.script import ScriptDirectory

    if current is None and has_tables:
        raise Invalid(
            "DB has existing tables but no alembic_version; refusing to migrate an unknown"
            f" schema. Point CAFLEET_DATABASE_URL at a new {fresh}."
        )
    if current is not None and newer_than_head(current):
        raise SchemaNewer(current, HEAD_REVISION)
    known = {
        rev.revision for rev in ScriptDirectory.from_config(_alembic_config()).walk_revisions()
    }
    if current is not None and current not in known:
        raise Invalid(
            f"DB schema is at revision {current} which is unknown to this version of cafleet."
            " Refusing to downgrade automatically."
        )
    return HEAD_REVISION if target == "head" else target


def migration_outcome(current: str | None) -> MigrationOutcome:
    return MigrationOutcome.CREATED if current is None else MigrationOutcome.UPGRADED


def upgrade(conn: Connection, goal: str) -> None:
    """Run the bundled migrations up to goal on conn (the caller commits)."""
    from alembic import command

    config = _alembic_config()
    config.attributes["connection"] = conn
    command.upgrade(config, goal)


def _inspect(path: Path) -> tuple[str | None, bool]:
    if not database_exists(path):
        return None, False
    with translated(path):
        conn = sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro", uri=True)
        try:
            names = [
                r[0]
                for r in conn.execute(
                    "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'"
                )
            ]
            current = None
            if "alembic_version" in names:
                row = conn.execute("SELECT version_num FROM alembic_version").fetchone()
                current = None if row is None else str(row[0])
            return current, bool(set(names) - {"alembic_version"})
        finally:
            conn.close()


def journal_mode(path: Path) -> str | None:
    if not database_exists(path):
        return None
    with translated(path):
        conn = sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro", uri=True)
        try:
            row = conn.execute("PRAGMA journal_mode").fetchone()
            return None if row is None else str(row[0])
        finally:
            conn.close()

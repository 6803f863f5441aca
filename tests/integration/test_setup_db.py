"""`cafleet setup db` on real files: create, no-op, upgrade from 0001, refusals."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from cafleet.adapters.store.sqlalchemy.engine import open_engine
from cafleet.adapters.store.sqlite.schema import HEAD_REVISION, migrate, read_revision

CREATED = "Created {path} and applied migrations to head (0012).\n"
AT_HEAD = "Already at head (0012); nothing to do.\n"
UPGRADED = "Upgraded from 0001 to 0012.\n"
NO_REVISION = (
    "Error: DB has existing tables but no alembic_version; refusing to migrate an unknown"
    " schema. Point CAFLEET_DATABASE_URL at a new file."
)
UNKNOWN_REVISION = (
    "Error: DB schema is at revision zzzz which is unknown to this version of cafleet."
    " Refusing to downgrade automatically."
)

TS = "2026-01-01T00:00:00.000000+00:00"
NEW_COLUMNS = {
    "agent_placements": {"mux_socket", "agent_commands", "ready_at", "ready_rule"},
    "monitor_config": {"last_stall_check_at", "last_native_status"},
    "monitor_runtime": {"host"},
}


def setup_db(cli, **kwargs):
    """`cafleet setup db` must succeed; stdout carries only the outcome line (progress lines,
    if any, may go to stderr)."""
    result = cli("setup", "db", **kwargs)
    assert result.code == 0, result
    return result.stdout


def columns(db, table):
    return {r["name"] for r in db.rows(f"PRAGMA table_info({table})")}


def tables(db):
    return {
        r["name"]
        for r in db.rows(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        )
    }


def journal_mode(path: Path) -> str:
    conn = sqlite3.connect(path)
    try:
        return str(conn.execute("PRAGMA journal_mode").fetchone()[0])
    finally:
        conn.close()


def set_journal_mode(path: Path, mode: str) -> None:
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        assert conn.execute(f"PRAGMA journal_mode={mode}").fetchone()[0] == mode.lower()
    finally:
        conn.close()


def file_state(path: Path) -> tuple[bytes, int]:
    """The main file's bytes and the number of bytes waiting in its write-ahead log.

    A reader of a WAL database may leave empty -wal/-shm files behind; that is not a change.
    """
    wal = path.with_name(path.name + "-wal")
    return path.read_bytes(), wal.stat().st_size if wal.exists() else 0


def seed_upstream_rows(db) -> None:
    """Rows shaped like an upstream 0.17 database: one fleet, its Director, Administrator,
    a member with a placement, messages, monitor state and a skills record."""
    db.execute("INSERT INTO fleets (fleet_id, name, created_at) VALUES (1, 'legacy', ?)", TS)
    db.execute(
        "INSERT INTO agents (agent_id, fleet_id, name, description, status, registered_at,"
        " agent_card_json) VALUES (1, 1, 'Director', 'Root Director for this fleet', 'active',"
        ' ?, \'{"name":"Director","description":"Root Director for this fleet",'
        '"skills":[]}\')',
        TS,
    )
    db.execute(
        "INSERT INTO agents (agent_id, fleet_id, name, description, status, registered_at,"
        " agent_card_json) VALUES (2, 1, 'Administrator', 'Built-in administrator agent for"
        ' fleet 1\', \'active\', ?, \'{"name":"Administrator","description":"x",'
        '"skills":[],"cafleet":{"kind":"builtin-administrator"}}\')',
        TS,
    )
    db.execute(
        "INSERT INTO agents (agent_id, fleet_id, name, description, status, registered_at,"
        " agent_card_json) VALUES (3, 1, 'worker', 'Worker member', 'active', ?,"
        ' \'{"name":"worker","description":"Worker member","skills":[]}\')',
        TS,
    )
    db.execute("UPDATE fleets SET director_agent_id = 1 WHERE fleet_id = 1")
    db.execute(
        "INSERT INTO agent_placements (agent_id, director_agent_id, mux_session, mux_window_id,"
        " mux_pane_id, backend, coding_agent, created_at) VALUES"
        " (1, NULL, 'main', '@0', '%0', 'tmux', 'claude', ?),"
        " (3, 1, 'main', '@0', '%1', 'tmux', 'codex', ?)",
        TS,
        TS,
    )
    db.execute(
        "INSERT INTO tasks (task_id, context_id, from_agent_id, to_agent_id, type, created_at,"
        " status_state, status_timestamp, origin_task_id, text) VALUES"
        " (1, 3, 1, 3, 'unicast', ?, 'input_required', ?, NULL, 'carried over'),"
        " (2, 1, 3, 1, 'unicast', ?, 'completed', ?, NULL, 'done already')",
        TS,
        TS,
        TS,
        TS,
    )
    db.execute(
        "INSERT INTO monitor_config (agent_id, interval_seconds, last_ping_at, enabled)"
        " VALUES (1, 180, ?, 1), (3, 720, NULL, 0)",
        TS,
    )
    db.execute(
        "INSERT INTO monitor_runtime (fleet_id, pid, started_at, last_tick_at, tick_seconds)"
        " VALUES (1, NULL, NULL, NULL, 7)"
    )
    db.execute("INSERT INTO skill_installs VALUES ('claude', '0.17.0', ?)", TS)


# --------------------------------------------------------------------------- from empty


def test_setup_db_creates_a_fresh_file_at_head(cli, db, db_path):
    assert setup_db(cli) == CREATED.format(path=db_path)
    assert db_path.is_file()
    assert read_revision(db_path) == HEAD_REVISION == "0012"
    assert db.scalar("SELECT count(*) FROM alembic_version") == 1
    assert "deliveries" in tables(db)


def test_setup_db_creates_missing_parent_directories(cli, tmp_path):
    path = tmp_path / "a" / "b" / "c" / "cafleet.db"
    out = setup_db(cli, env={"CAFLEET_DATABASE_URL": f"sqlite:///{path}"})
    assert out == CREATED.format(path=path)
    assert read_revision(path) == "0012"


@pytest.fixture
def permissive_umask() -> Iterator[None]:
    """022, so that only CAFleet itself keeps group and others out (the subprocesses inherit it)."""
    previous = os.umask(0o022)
    yield
    os.umask(previous)


def modes(folder: Path, pattern: str) -> dict[str, int]:
    return {p.name: p.stat().st_mode & 0o777 for p in folder.glob(pattern)}


def test_setup_db_creates_the_database_and_its_wal_and_shm_files_0600(
    cli, db_path, permissive_umask
):
    setup_db(cli)
    engine = open_engine(db_path)
    try:
        with engine.connect() as conn:  # a reader in WAL mode opens (creates) -wal and -shm
            conn.exec_driver_sql("SELECT count(*) FROM agents").scalar()
            seen = modes(db_path.parent, f"{db_path.name}*")
    finally:
        engine.dispose()

    assert seen == {db_path.name: 0o600, f"{db_path.name}-wal": 0o600, f"{db_path.name}-shm": 0o600}


def test_setup_db_makes_a_missing_database_folder_private(cli, tmp_path, permissive_umask):
    path = tmp_path / "data" / "cafleet" / "cafleet.db"
    setup_db(cli, env={"CAFLEET_DATABASE_URL": f"sqlite:///{path}"})

    assert path.parent.stat().st_mode & 0o777 == 0o700
    assert path.stat().st_mode & 0o777 == 0o600


def test_setup_db_leaves_the_mode_of_an_existing_database_alone(cli, db_path):
    sqlite3.connect(db_path).close()
    db_path.chmod(0o640)

    setup_db(cli)

    assert read_revision(db_path) == HEAD_REVISION
    assert db_path.stat().st_mode & 0o777 == 0o640


def test_setup_db_sets_wal_journal_mode(cli, db_path):
    setup_db(cli)
    assert journal_mode(db_path) == "wal"


def test_setup_db_second_run_is_a_no_op(cli, db, db_path):
    setup_db(cli)
    before = db.dump()
    assert setup_db(cli) == AT_HEAD
    assert db.dump() == before
    assert read_revision(db_path) == "0012"


def test_setup_db_at_head_reasserts_wal_mode(migrated, cli, db_path):
    set_journal_mode(db_path, "DELETE")
    assert setup_db(cli) == AT_HEAD
    assert journal_mode(db_path) == "wal"


def test_setup_db_on_an_empty_existing_file_creates_the_schema(cli, db_path):
    db_path.touch()
    assert setup_db(cli) == CREATED.format(path=db_path)
    assert read_revision(db_path) == "0012"


def test_setup_db_uses_the_default_path_under_home(cli, home):
    out = setup_db(cli, env={"CAFLEET_DATABASE_URL": None})
    path = home / ".local" / "share" / "cafleet" / "cafleet_v2.db"
    assert out == CREATED.format(path=path)
    assert read_revision(path) == "0012"


def test_setup_db_relative_url_is_relative_to_the_current_directory(cli, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    out = setup_db(cli, cwd=work, env={"CAFLEET_DATABASE_URL": "sqlite:///rel.db"})
    assert out == CREATED.format(path="rel.db")
    assert read_revision(work / "rel.db") == "0012"


def test_setup_db_accepts_a_sqlite_driver_url(cli, db_path):
    out = setup_db(cli, env={"CAFLEET_DATABASE_URL": f"sqlite+pysqlite:///{db_path}"})
    assert out == CREATED.format(path=db_path)
    assert read_revision(db_path) == "0012"


# --------------------------------------------------------------------------- from 0001


def test_migrate_to_0001_builds_the_upstream_schema_only(db, db_path):
    migrate(db_path, target="0001")
    assert read_revision(db_path) == "0001"
    assert "deliveries" not in tables(db)
    for table, added in NEW_COLUMNS.items():
        assert not added & columns(db, table), table


def test_setup_db_upgrades_from_0001(cli, db, db_path):
    migrate(db_path, target="0001")
    assert setup_db(cli) == UPGRADED
    assert read_revision(db_path) == "0012"
    assert "deliveries" in tables(db)
    for table, added in NEW_COLUMNS.items():
        assert added <= columns(db, table), table
    assert setup_db(cli) == AT_HEAD


def test_upgrade_from_0001_keeps_existing_rows(cli, db, db_path):
    migrate(db_path, target="0001")
    seed_upstream_rows(db)
    before = {
        t: [tuple(r) for r in db.rows(f"SELECT * FROM {t} ORDER BY 1")]
        for t in tables(db) - {"alembic_version"}
    }
    assert setup_db(cli) == UPGRADED
    for table, old_rows in before.items():
        width = len(old_rows[0]) if old_rows else 0
        new_rows = [tuple(r)[:width] for r in db.rows(f"SELECT * FROM {table} ORDER BY 1")]
        assert new_rows == old_rows, table
    placement = db.row("SELECT * FROM agent_placements WHERE agent_id = 3")
    assert placement["mux_socket"] is None
    assert placement["agent_commands"] is None
    # panes placed before readiness was recorded count as ready since they were placed
    assert (placement["ready_at"], placement["ready_rule"]) == (TS, "legacy")
    schedule = db.row("SELECT * FROM monitor_config WHERE agent_id = 1")
    assert schedule["last_stall_check_at"] is None
    assert schedule["last_native_status"] is None
    assert db.row("SELECT host FROM monitor_runtime")["host"] is None
    assert db.count("deliveries") == 0


def test_upgraded_database_is_usable_by_the_cli(cli, db, db_path):
    migrate(db_path, target="0001")
    seed_upstream_rows(db)
    setup_db(cli)
    from cafleet import __version__

    assert cli.fails("fleet", "list") == (
        f"Error: stale skills detected (claude=0.17.0; CLI {__version__});"
        " run 'cafleet setup skill' to reinstall"
    )
    cli.ok("setup", "skill", "--agent", "claude")
    [listed] = cli.json("fleet", "list")
    assert listed["fleet_id"] == 1
    assert listed["name"] == "legacy"
    assert listed["agent_count"] == 3
    [pending] = cli.json("message", "poll", "--fleet-id", "1", "--agent-id", "3")
    assert pending["id"] == 1
    assert pending["text"] == "carried over"
    sent = cli.json(
        "message", "send", "--fleet-id", "1", "--agent-id", "1", "--to", "3", "--text", "hi"
    )
    assert sent["task"]["id"] == 3
    assert db.count("deliveries") == 1


# --------------------------------------------------------------------------- from 0002


def test_setup_db_upgrades_from_0002_and_marks_placed_panes_ready(cli, db, db_path):
    migrate(db_path, target="0002")
    assert read_revision(db_path) == "0002"
    assert not {"ready_at", "ready_rule"} & columns(db, "agent_placements")
    seed_upstream_rows(db)
    later = "2026-01-02T00:00:00.000000+00:00"
    db.execute(
        "INSERT INTO agents (agent_id, fleet_id, name, description, status, registered_at,"
        " agent_card_json) VALUES (4, 1, 'pending', 'Pending member', 'active', ?,"
        ' \'{"name":"pending","description":"Pending member","skills":[]}\')',
        later,
    )
    db.execute(
        "INSERT INTO agent_placements (agent_id, director_agent_id, mux_session, mux_window_id,"
        " mux_pane_id, backend, coding_agent, created_at) VALUES"
        " (4, 1, 'main', '@0', NULL, 'tmux', 'claude', ?)",
        later,
    )

    assert setup_db(cli) == "Upgraded from 0002 to 0012.\n"
    assert read_revision(db_path) == "0012"
    ready = {
        r["agent_id"]: (r["ready_at"], r["ready_rule"])
        for r in db.rows("SELECT agent_id, ready_at, ready_rule FROM agent_placements")
    }
    assert ready == {1: (TS, "legacy"), 3: (TS, "legacy"), 4: (None, None)}
    assert setup_db(cli) == AT_HEAD


# --------------------------------------------------------------------------- from 0003


def test_setup_db_upgrades_from_0003_and_keeps_every_delivery_as_a_keys_attempt(cli, db, db_path):
    migrate(db_path, target="0003")
    seed_upstream_rows(db)
    db.execute(
        "INSERT INTO deliveries (task_id, recipient_agent_id, state, transport, pane_id,"
        " created_at, attempted_at, error) VALUES (1, 3, 'sent', 'tmux', '%3', ?, ?, NULL),"
        " (2, 3, 'skipped', NULL, NULL, ?, ?, 'self')",
        TS, TS, TS, TS,
    )  # fmt: skip

    assert setup_db(cli) == "Upgraded from 0003 to 0012.\n"
    rows = db.rows(
        "SELECT task_id, attempt, channel, state, confirmed_at FROM deliveries ORDER BY task_id"
    )
    assert [tuple(r) for r in rows] == [(1, 1, "keys", "sent", None), (2, 1, None, "skipped", None)]
    # a second attempt for the same message and recipient is a row of its own now
    db.execute(
        "INSERT INTO deliveries (task_id, recipient_agent_id, state, created_at, attempt,"
        " channel) VALUES (1, 3, 'sent', ?, 2, 'keys')",
        TS,
    )
    assert db.count("deliveries") == 3
    assert columns(db, "agent_placements") >= {"launch_pad"}
    cli.ok("setup", "skill", "--agent", "claude")
    [detail] = [cli.json("message", "show", "--fleet-id", "1", "--agent-id", "1", "--task-id",
                         "1", "--full")]  # fmt: skip
    assert [(d["attempt"], d["channel"]) for d in detail["deliveries"]] == [
        (1, "keys"),
        (2, "keys"),
    ]


# --------------------------------------------------------------------------- from 0004


def test_setup_db_upgrades_from_0004_leaving_older_placements_without_an_identity(cli, db, db_path):
    migrate(db_path, target="0004")
    seed_upstream_rows(db)
    before = {tuple(r) for r in db.rows("SELECT agent_id, mux_pane_id FROM agent_placements")}

    assert setup_db(cli) == "Upgraded from 0004 to 0012.\n"
    rows = db.rows("SELECT agent_id, mux_pane_id, pane_identity FROM agent_placements")
    assert {(r[0], r[1]) for r in rows} == before
    assert {r[2] for r in rows} == {None}  # see Placement.identity: checked as before


def test_upgrade_from_0001_switches_a_rollback_journal_to_wal(cli, db_path):
    migrate(db_path, target="0001")
    set_journal_mode(db_path, "DELETE")
    setup_db(cli)
    assert journal_mode(db_path) == "wal"


def test_upgraded_schema_matches_a_fresh_schema(cli, tmp_path, db, db_path):
    migrate(db_path, target="0001")
    setup_db(cli)
    fresh = tmp_path / "fresh.db"
    setup_db(cli, env={"CAFLEET_DATABASE_URL": f"sqlite:///{fresh}"})

    def shape(path: Path):
        conn = sqlite3.connect(path)
        try:
            out = {}
            for (name,) in conn.execute(
                "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'"
            ):
                idx = sorted(
                    (
                        bool(unique),
                        tuple(c[2] for c in conn.execute(f"PRAGMA index_info('{iname}')")),
                    )
                    for _, iname, unique, *_ in conn.execute(f"PRAGMA index_list('{name}')")
                )
                out[name] = (
                    [tuple(c) for c in conn.execute(f"PRAGMA table_info('{name}')")],
                    sorted(
                        tuple(f)[2:] for f in conn.execute(f"PRAGMA foreign_key_list('{name}')")
                    ),
                    idx,
                )
            return out
        finally:
            conn.close()

    assert shape(db_path) == shape(fresh)


# --------------------------------------------------------------------------- refusals


def test_setup_db_refuses_an_unknown_revision(migrated, cli, db_path):
    migrated.execute("UPDATE alembic_version SET version_num = 'zzzz'")
    before, dump = file_state(db_path), migrated.dump()
    assert cli.fails("setup", "db") == UNKNOWN_REVISION
    assert file_state(db_path) == before
    assert migrated.dump() == dump
    assert read_revision(db_path) == "zzzz"


def test_setup_db_refuses_tables_without_a_revision_record(cli, db, db_path):
    db.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
    db.execute("INSERT INTO notes (body) VALUES ('keep me')")
    before, dump = file_state(db_path), db.dump()
    assert cli.fails("setup", "db") == NO_REVISION
    assert file_state(db_path) == before
    assert db.dump() == dump
    assert tables(db) == {"notes"}


def test_setup_db_refuses_an_empty_revision_table_next_to_other_tables(cli, db, db_path):
    migrate(db_path, target="0001")
    db.execute("DELETE FROM alembic_version")
    before, dump = file_state(db_path), db.dump()
    assert cli.fails("setup", "db") == NO_REVISION
    assert file_state(db_path) == before
    assert db.dump() == dump


@pytest.mark.parametrize("url", ["sqlite://", "sqlite:///:memory:"])
def test_setup_db_refuses_an_in_memory_url(cli, url):
    assert cli.fails("setup", "db", env={"CAFLEET_DATABASE_URL": url}) == (
        "Error: database URL has no file path"
    )


def test_setup_db_refuses_an_unsupported_url(cli, tmp_path):
    url = "mysql://localhost/cafleet"
    assert cli.fails("setup", "db", env={"CAFLEET_DATABASE_URL": url}) == (
        f"Error: unsupported database URL '{url}'; "
        "only sqlite:/// and postgresql+psycopg:// URLs are supported"
    )


def test_setup_db_reports_a_file_that_is_not_a_database(cli, db_path):
    db_path.write_bytes(b"this is not an sqlite database, just some text" * 100)
    line = cli.fails("setup", "db")
    assert line.startswith(f"Error: cannot open database {db_path}: ")

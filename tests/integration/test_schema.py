"""The head schema on disk matches the tables below, and the connections follow their policy."""

from __future__ import annotations

import sqlite3

import pytest
from sqlalchemy.exc import IntegrityError

from cafleet.adapters.store.sqlalchemy.engine import open_engine

INT, TEXT = "INTEGER", "TEXT"
NULL, NOT_NULL = True, False

# table -> column -> (affinity, nullable); primary keys are checked separately
COLUMNS: dict[str, dict[str, tuple[str, bool]]] = {
    "fleets": {
        "fleet_id": (INT, NOT_NULL),
        "name": (TEXT, NULL),
        "created_at": (TEXT, NOT_NULL),
        "deleted_at": (TEXT, NULL),
        "director_agent_id": (INT, NULL),
    },
    "agents": {
        "agent_id": (INT, NOT_NULL),
        "fleet_id": (INT, NOT_NULL),
        "name": (TEXT, NOT_NULL),
        "description": (TEXT, NOT_NULL),
        "status": (TEXT, NOT_NULL),
        "registered_at": (TEXT, NOT_NULL),
        "deregistered_at": (TEXT, NULL),
        "agent_card_json": (TEXT, NOT_NULL),
    },
    "agent_placements": {
        "agent_id": (INT, NOT_NULL),
        "director_agent_id": (INT, NULL),
        "mux_session": (TEXT, NOT_NULL),
        "mux_window_id": (TEXT, NOT_NULL),
        "mux_pane_id": (TEXT, NULL),
        "backend": (TEXT, NOT_NULL),
        "coding_agent": (TEXT, NOT_NULL),
        "created_at": (TEXT, NOT_NULL),
        "mux_socket": (TEXT, NULL),
        "agent_commands": (TEXT, NULL),
        "ready_at": (TEXT, NULL),
        "ready_rule": (TEXT, NULL),
        "launch_pad": (TEXT, NULL),
        "pane_identity": (TEXT, NULL),
        "identity_digest": (TEXT, NULL),
        "host": (TEXT, NULL),
    },
    "tasks": {
        "task_id": (INT, NOT_NULL),
        "context_id": (INT, NOT_NULL),
        "from_agent_id": (INT, NOT_NULL),
        "to_agent_id": (INT, NULL),
        "type": (TEXT, NOT_NULL),
        "created_at": (TEXT, NOT_NULL),
        "status_state": (TEXT, NOT_NULL),
        "status_timestamp": (TEXT, NOT_NULL),
        "origin_task_id": (INT, NULL),
        "text": (TEXT, NOT_NULL),
        "sender_verified": (INT, NOT_NULL),
        "in_reply_to": (INT, NULL),
        "thread_id": (INT, NULL),
    },
    "monitor_config": {
        "agent_id": (INT, NOT_NULL),
        "interval_seconds": (INT, NOT_NULL),
        "last_ping_at": (TEXT, NULL),
        "enabled": (INT, NOT_NULL),
        "last_stall_check_at": (TEXT, NULL),
        "last_native_status": (TEXT, NULL),
    },
    "monitor_runtime": {
        "fleet_id": (INT, NOT_NULL),
        "pid": (INT, NULL),
        "started_at": (TEXT, NULL),
        "last_tick_at": (TEXT, NULL),
        "tick_seconds": (INT, NOT_NULL),
        "host": (TEXT, NULL),
    },
    "skill_installs": {
        "coding_agent": (TEXT, NOT_NULL),
        "cafleet_version": (TEXT, NULL),
        "installed_at": (TEXT, NULL),
    },
    "deliveries": {
        "delivery_id": (INT, NOT_NULL),
        "task_id": (INT, NOT_NULL),
        "recipient_agent_id": (INT, NOT_NULL),
        "state": (TEXT, NOT_NULL),
        "transport": (TEXT, NULL),
        "pane_id": (TEXT, NULL),
        "created_at": (TEXT, NOT_NULL),
        "attempted_at": (TEXT, NULL),
        "error": (TEXT, NULL),
        "attempt": (INT, NOT_NULL),
        "channel": (TEXT, NULL),
        "confirmed_at": (TEXT, NULL),
    },
    "relays": {
        "host": (TEXT, NOT_NULL),
        "pid": (INT, NOT_NULL),
        "started_at": (TEXT, NOT_NULL),
        "seen_at": (TEXT, NOT_NULL),
        "backend": (TEXT, NULL),
        "mux_session": (TEXT, NULL),
        "mux_window_id": (TEXT, NULL),
        "mux_pane_id": (TEXT, NULL),
        "mux_socket": (TEXT, NULL),
        "pane_identity": (TEXT, NULL),
    },
    "pane_reports": {
        "agent_id": (INT, NOT_NULL),
        "host": (TEXT, NOT_NULL),
        "pane_state": (TEXT, NULL),
        "agent_status": (TEXT, NOT_NULL),
        "status_since": (TEXT, NULL),
        "detected": (TEXT, NULL),
    },
    "relay_requests": {
        "request_id": (INT, NOT_NULL),
        "host": (TEXT, NOT_NULL),
        "fleet_id": (INT, NOT_NULL),
        "agent_id": (INT, NOT_NULL),
        "verb": (TEXT, NOT_NULL),
        "argument": (TEXT, NOT_NULL),
        "state": (TEXT, NOT_NULL),
        "answer": (TEXT, NULL),
        "error_kind": (TEXT, NULL),
        "created_at": (TEXT, NOT_NULL),
        "answered_at": (TEXT, NULL),
    },
}
# The nullability of these two was never fixed (upstream leaves it open): presence and type only
NULLABILITY_UNSPECIFIED = {
    ("skill_installs", "cafleet_version"),
    ("skill_installs", "installed_at"),
}

PRIMARY_KEYS = {
    "fleets": "fleet_id",
    "agents": "agent_id",
    "agent_placements": "agent_id",
    "tasks": "task_id",
    "monitor_config": "agent_id",
    "monitor_runtime": "fleet_id",
    "skill_installs": "coding_agent",
    "deliveries": "delivery_id",
    "relays": "host",
    "relay_requests": "request_id",
    "pane_reports": "agent_id",
}
AUTOINCREMENT_TABLES = {"fleets", "agents", "tasks", "deliveries"}

# (table, column) -> (referenced table, referenced column, ON DELETE)
FOREIGN_KEYS = {
    ("fleets", "director_agent_id"): ("agents", "agent_id", "RESTRICT"),
    ("agents", "fleet_id"): ("fleets", "fleet_id", "RESTRICT"),
    ("agent_placements", "agent_id"): ("agents", "agent_id", "CASCADE"),
    ("agent_placements", "director_agent_id"): ("agents", "agent_id", "RESTRICT"),
    ("tasks", "context_id"): ("agents", "agent_id", "RESTRICT"),
    ("monitor_config", "agent_id"): ("agents", "agent_id", "CASCADE"),
    ("monitor_runtime", "fleet_id"): ("fleets", "fleet_id", "RESTRICT"),
    ("deliveries", "task_id"): ("tasks", "task_id", "CASCADE"),
    ("deliveries", "recipient_agent_id"): ("agents", "agent_id", "RESTRICT"),
}

# table -> (columns, unique)
INDEXES = {
    ("agents", ("fleet_id", "status"), False),
    ("agent_placements", ("director_agent_id",), False),
    ("tasks", ("context_id", "status_timestamp"), False),
    ("tasks", ("from_agent_id", "status_timestamp"), False),
    ("deliveries", ("task_id", "recipient_agent_id", "attempt"), True),
    ("deliveries", ("state", "created_at"), False),
    ("relay_requests", ("host", "state"), False),
    ("pane_reports", ("host",), False),
    ("tasks", ("thread_id", "task_id"), False),
}

DEFAULTS = {
    ("agent_placements", "backend"): "tmux",
    ("agent_placements", "coding_agent"): "claude",
    ("monitor_config", "interval_seconds"): "60",
    ("monitor_config", "enabled"): "1",
    ("monitor_runtime", "tick_seconds"): "5",
    ("deliveries", "attempt"): "1",
    ("tasks", "sender_verified"): "0",
}


def affinity(declared: str) -> str:
    """SQLite's type-affinity rules (https://sqlite.org/datatype3.html, section 3.1.1)."""
    upper = declared.upper()
    if "INT" in upper:
        return INT
    if any(word in upper for word in ("CHAR", "CLOB", "TEXT")):
        return TEXT
    return upper


@pytest.fixture(params=["fresh", "upgraded", "upgraded-from-0002", "upgraded-from-0004"])
def schema_db(request, cli, db, db_path):
    """A head database reached from empty or from revision 0001, 0002 or 0004."""
    if request.param != "fresh":
        from cafleet.adapters.store.sqlite.schema import migrate

        migrate(db_path, target=request.param.rpartition("-")[2].replace("upgraded", "0001"))
    cli.ok("setup", "db")
    return db


def test_schema_has_exactly_the_specified_tables(schema_db):
    names = {
        r["name"]
        for r in schema_db.rows(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        )
    }
    search_index = {n for n in names if n.startswith("tasks_fts")}  # FTS5 and its shadow tables
    assert "tasks_fts" in search_index
    assert names - search_index == {*COLUMNS, "alembic_version"}


@pytest.mark.parametrize("table", sorted(COLUMNS))
def test_table_columns_types_and_nullability(schema_db, table):
    info = {r["name"]: r for r in schema_db.rows(f"PRAGMA table_info('{table}')")}
    assert set(info) == set(COLUMNS[table])
    for name, (kind, nullable) in COLUMNS[table].items():
        column = info[name]
        assert affinity(column["type"]) == kind, (table, name, column["type"])
        if column["pk"] or (table, name) in NULLABILITY_UNSPECIFIED:
            continue
        assert bool(column["notnull"]) is not nullable, (table, name)


@pytest.mark.parametrize("table", sorted(PRIMARY_KEYS))
def test_primary_keys(schema_db, table):
    pk = [r["name"] for r in schema_db.rows(f"PRAGMA table_info('{table}')") if r["pk"]]
    assert pk == [PRIMARY_KEYS[table]]


@pytest.mark.parametrize("table", sorted(AUTOINCREMENT_TABLES))
def test_id_tables_use_autoincrement(schema_db, table):
    sql = schema_db.scalar("SELECT sql FROM sqlite_master WHERE type='table' AND name=?", table)
    assert "AUTOINCREMENT" in sql.upper()


def test_foreign_keys(schema_db):
    found = {}
    for table in COLUMNS:
        for fk in schema_db.rows(f"PRAGMA foreign_key_list('{table}')"):
            found[(table, fk["from"])] = (fk["table"], fk["to"], fk["on_delete"])
    assert found == FOREIGN_KEYS


def test_indexes(schema_db):
    found = set()
    for table in COLUMNS:
        for index in schema_db.rows(f"PRAGMA index_list('{table}')"):
            cols = tuple(r["name"] for r in schema_db.rows(f"PRAGMA index_info('{index['name']}')"))
            found.add((table, cols, bool(index["unique"])))
    assert found >= INDEXES


def test_column_defaults(schema_db):
    for (table, column), value in DEFAULTS.items():
        info = {r["name"]: r for r in schema_db.rows(f"PRAGMA table_info('{table}')")}
        assert info[column]["dflt_value"].strip("'") == value, (table, column)


def test_revision_record_is_one_row_at_head(schema_db):
    rows = schema_db.rows("SELECT version_num FROM alembic_version")
    assert [r[0] for r in rows] == ["0012"]


def test_the_code_s_tables_agree_with_the_migrated_schema(schema_db):
    from cafleet.adapters.store.sqlalchemy.tables import metadata

    for table in metadata.tables.values():
        info = {r["name"]: r for r in schema_db.rows(f"PRAGMA table_info('{table.name}')")}
        assert set(info) == {c.name for c in table.columns}, table.name
        for column in table.columns:
            if not column.primary_key:
                assert bool(info[column.name]["notnull"]) is not column.nullable, column


def test_the_direct_adapter_s_columns_are_the_migrated_schema_s(schema_db):
    """The SQL on the standard sqlite3 module names each table's columns itself: they must be
    the head schema's, in both sources of truth (the tables and the migrations)."""
    from cafleet.adapters.store.sqlalchemy.tables import metadata
    from cafleet.adapters.store.sqlite.statements import COLUMNS

    assert set(COLUMNS) == set(metadata.tables)
    for name, columns in COLUMNS.items():
        migrated = [r["name"] for r in schema_db.rows(f"PRAGMA table_info('{name}')")]
        assert sorted(columns) == sorted(migrated), name
        assert sorted(columns) == sorted(c.name for c in metadata.tables[name].columns), name


def seed_director(db_path, more_sql: str = "") -> None:
    """A fleet, its Director and the Director's placement, in a schema of any revision."""
    conn = sqlite3.connect(db_path)
    with conn:
        conn.executescript(
            "INSERT INTO fleets (fleet_id, name, created_at) VALUES (1, 'old', 't');"
            "INSERT INTO agents (agent_id, fleet_id, name, description, status, registered_at,"
            " agent_card_json) VALUES (1, 1, 'Director', 'd', 'active', 't', '{}');"
            "INSERT INTO agent_placements (agent_id, mux_session, mux_window_id, mux_pane_id,"
            " created_at) VALUES (1, 'main', '@0', '%0', 't');" + more_sql
        )
    conn.close()


def test_upgrading_to_0006_keeps_every_row_and_marks_old_messages_unverified(db, db_path):
    from cafleet.adapters.store.sqlite.schema import migrate

    migrate(db_path, target="0005")
    seed_director(
        db_path,
        "INSERT INTO tasks (context_id, from_agent_id, to_agent_id, type, created_at,"
        " status_state, status_timestamp, text) VALUES (1, 1, 1, 'unicast', 't',"
        " 'input_required', 't', 'before');",
    )
    before = [dict(r) for r in db.rows("SELECT * FROM tasks")]

    migrate(db_path)

    assert [dict(r) for r in db.rows("SELECT * FROM tasks")] == [
        {**r, "sender_verified": 0, "in_reply_to": None, "thread_id": r["task_id"]} for r in before
    ]
    assert db.scalar("SELECT identity_digest FROM agent_placements") is None


def test_downgrading_to_0005_drops_only_the_later_columns(migrated, db, db_path):
    from alembic import command
    from alembic.config import Config

    from cafleet.adapters.store.sqlalchemy.engine import open_engine
    from cafleet.adapters.store.sqlite.schema import MIGRATIONS

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    engine = open_engine(db_path)
    try:
        with engine.connect() as conn:
            config.attributes["connection"] = conn
            command.downgrade(config, "0005")
            conn.commit()
    finally:
        engine.dispose()

    tasks = {r["name"] for r in db.rows("PRAGMA table_info('tasks')")}
    placements = {r["name"] for r in db.rows("PRAGMA table_info('agent_placements')")}
    assert tasks == set(COLUMNS["tasks"]) - {"sender_verified", "in_reply_to", "thread_id"}
    assert placements == set(COLUMNS["agent_placements"]) - {"identity_digest", "host"}
    assert "AUTOINCREMENT" in db.scalar("SELECT sql FROM sqlite_master WHERE name = 'tasks'")
    tables = {r["name"] for r in db.rows("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert not tables & {"relays", "relay_requests", "pane_reports"}


# --------------------------------------------------------------------------- connection policy


def test_database_file_is_in_wal_mode(schema_db):
    assert schema_db.scalar("PRAGMA journal_mode") == "wal"


def test_app_connections_follow_the_connection_policy(migrated, db_path):
    engine = open_engine(db_path)
    try:
        with engine.connect() as conn:
            pragma = {
                name: conn.exec_driver_sql(f"PRAGMA {name}").scalar()
                for name in ("foreign_keys", "busy_timeout", "journal_mode", "synchronous")
            }
    finally:
        engine.dispose()
    assert pragma == {
        "foreign_keys": 1,
        "busy_timeout": 5000,
        "journal_mode": "wal",
        "synchronous": 1,
    }


def test_app_connections_enforce_foreign_keys(migrated, db_path):
    engine = open_engine(db_path)
    try:
        with engine.connect() as conn, pytest.raises(IntegrityError, match="FOREIGN KEY"):
            conn.exec_driver_sql(
                "INSERT INTO tasks (context_id, from_agent_id, type, created_at, status_state,"
                " status_timestamp, text) VALUES (424242, 1, 'unicast', 'x', 'input_required',"
                " 'x', 'orphan')"
            )
    finally:
        engine.dispose()
    assert migrated.count("tasks") == 0


def test_cli_connections_reassert_wal_mode(migrated, cli, db_path):
    conn = sqlite3.connect(db_path, isolation_level=None)
    try:
        assert conn.execute("PRAGMA journal_mode=DELETE").fetchone()[0] == "delete"
    finally:
        conn.close()
    cli.ok("fleet", "list")
    assert migrated.scalar("PRAGMA journal_mode") == "wal"


def test_upgrading_to_0007_keeps_every_placement_with_no_host(db, db_path):
    """A placement from before hosts is taken to be on whichever host asks (NULL)."""
    from cafleet.adapters.store.sqlite.schema import migrate

    migrate(db_path, target="0006")
    seed_director(db_path)
    before = [dict(r) for r in db.rows("SELECT * FROM agent_placements")]

    migrate(db_path)

    after = [dict(r) for r in db.rows("SELECT * FROM agent_placements")]
    assert after == [{**r, "host": None} for r in before]


def old_database_with_messages(path, revision, texts=("text", "text", "text")):
    """A database at `revision` with two agents, a unicast (1), a broadcast summary (2) and
    its copy (3), bodies `texts`."""
    from cafleet.adapters.store.sqlite.schema import migrate

    migrate(path, target=revision)
    columns = (
        "(task_id, context_id, from_agent_id, to_agent_id, type, created_at, status_state,"
        " status_timestamp, origin_task_id, text)"
    )
    with sqlite3.connect(path) as conn:
        conn.execute("INSERT INTO fleets (fleet_id, name, created_at) VALUES (1, 'f', 't')")
        for agent in (1, 2):
            conn.execute(
                "INSERT INTO agents (agent_id, fleet_id, name, description, status,"
                " registered_at, agent_card_json) VALUES (?, 1, 'a', 'd', 'active', 't', '{}')",
                (agent,),
            )
        conn.executemany(
            f"INSERT INTO tasks {columns} VALUES (?, ?, 1, ?, ?, 't', 'x', 't', ?, ?)",
            [(1, 2, 2, "unicast", None, texts[0]), (2, 1, None, "broadcast_summary", 2, texts[1]),
             (3, 2, 2, "unicast", 2, texts[2])],
        )  # fmt: skip
    conn.close()


def test_existing_messages_each_start_a_thread_and_copies_join_their_broadcast(tmp_path):
    """Revision 0010 on a database with messages: a message's thread is its own id, a
    broadcast copy's its summary's."""
    from cafleet.adapters.store.sqlite.schema import migrate

    path = tmp_path / "old.db"
    old_database_with_messages(path, "0009")

    migrate(path)

    with sqlite3.connect(path) as conn:
        threads = conn.execute("SELECT task_id, in_reply_to, thread_id FROM tasks ORDER BY 1")
        assert threads.fetchall() == [(1, None, 1), (2, None, 2), (3, None, 2)]
    conn.close()


def test_existing_messages_are_indexed_for_search_and_later_changes_follow(tmp_path):
    """Revision 0011 on a database with messages: the FTS5 index is built from them, and the
    triggers keep it in step with later inserts, edits and deletes."""
    from cafleet.adapters.store.sqlite.schema import migrate

    path = tmp_path / "old.db"
    old_database_with_messages(path, "0010", ("ancient lighthouse", "summary", "copy of harbour"))

    migrate(path)

    def found(conn, word):
        rows = conn.execute(
            "SELECT rowid FROM tasks_fts WHERE tasks_fts MATCH ? ORDER BY 1", (word,)
        )
        return [r[0] for r in rows]

    with sqlite3.connect(path) as conn:
        assert found(conn, "lighthouse") == [1]
        assert found(conn, "harbour") == [3]
        conn.execute(
            "INSERT INTO tasks (task_id, context_id, from_agent_id, to_agent_id, type,"
            " created_at, status_state, status_timestamp, text)"
            " VALUES (4, 2, 1, 2, 'unicast', 't', 'x', 't', 'new lighthouse')"
        )
        conn.execute("UPDATE tasks SET text = 'renamed' WHERE task_id = 1")
        conn.execute("DELETE FROM tasks WHERE task_id = 3")
        assert found(conn, "lighthouse") == [4]
        assert found(conn, "renamed") == [1]
        assert found(conn, "harbour") == []
        assert conn.execute("INSERT INTO tasks_fts(tasks_fts) VALUES ('integrity-check')")
    conn.close()


def test_search_ranks_only_the_newest_matches_of_a_common_query(tmp_path):
    """Past `ranked` matches, the older ones are not ranked at all: a query found in most
    messages costs what one found in a few does (RANKED_MATCHES in use)."""
    from cafleet.adapters.store.sqlite.search import search_statement
    from cafleet.domain.search import SearchQuery

    path = tmp_path / "old.db"
    old_database_with_messages(path, "head", ("deploy deploy deploy", "summary", "deploy once"))
    with sqlite3.connect(path) as conn:
        conn.execute(
            "INSERT INTO tasks (task_id, context_id, from_agent_id, to_agent_id, type,"
            " created_at, status_state, status_timestamp, text)"
            " VALUES (4, 2, 1, 2, 'unicast', 't', 'x', 't', 'deploy later')"
        )

        def ids(ranked):
            sql, params = search_statement(1, SearchQuery("deploy"), None, 0, 10, ranked)
            return [row[0] for row in conn.execute(sql, params)]

        assert ids(100) == [1, 4, 3]  # all ranked: the best match first
        assert ids(2) == [4, 3]  # only the two newest matches are ranked
    conn.close()

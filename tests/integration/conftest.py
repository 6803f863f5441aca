"""Fixtures for the integration suite.

Every test runs the installed `cafleet` script as a subprocess against a real SQLite file in a
temporary directory, with HOME pointed at a temporary directory and no CAFLEET_* / multiplexer
variable of the outer shell. Tests that need a calling pane get a private tmux server of their
own (`tmux -L cafleet-test-<uuid>`), which is always killed on teardown.

A module marked `both_stores` runs each of its tests twice: on a SQLite file and on a
database of the private PostgreSQL server (`migrated` and `db` read either through the same
`rows`/`scalar`/`execute` calls, `?` placeholders included). A test that is about the SQLite
file itself is marked `sqlite_only` and runs once.

Helpers are exposed as fixtures so that test modules never import this file.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from support.cli import CAFLEET, Cli, run_cafleet
from support.postgres import PostgresServer
from support.postgres_fixtures import HEAD_TEMPLATE, scratch_database
from support.tmux import TmuxServer, clean_environment

HERE = Path(__file__).resolve().parent
SEND_LOOP = HERE / "send_loop.py"


# --------------------------------------------------------------------------- the database file


class _Reads:
    """What both stores' test access builds on its rows()."""

    def rows(self, sql: str, *params: Any) -> list[Any]:
        raise NotImplementedError

    def row(self, sql: str, *params: Any) -> Any:
        rows = self.rows(sql, *params)
        assert len(rows) == 1, [tuple(r) for r in rows]
        return rows[0]

    def scalar(self, sql: str, *params: Any) -> Any:
        return self.row(sql, *params)[0]

    def count(self, table: str) -> int:
        return int(self.scalar(f"SELECT count(*) FROM {table}"))


class Database(_Reads):
    """Direct access to the SQLite file; every call opens and closes its own connection."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, isolation_level=None, timeout=30)
        conn.row_factory = sqlite3.Row
        return conn

    def rows(self, sql: str, *params: Any) -> list[sqlite3.Row]:
        conn = self.connect()
        try:
            return list(conn.execute(sql, params))
        finally:
            conn.close()

    def execute(self, sql: str, *params: Any) -> int | None:
        """Run one write statement in its own transaction; returns lastrowid."""
        conn = self.connect()
        try:
            cursor = conn.execute(sql, params)
            return cursor.lastrowid
        finally:
            conn.close()

    def dump(self) -> list[str]:
        conn = sqlite3.connect(self.path)
        try:
            return list(conn.iterdump())
        finally:
            conn.close()


# --------------------------------------------------------------------------- fixtures


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "cafleet.db"


STORES = ("sqlite", pytest.param("postgres", marks=pytest.mark.postgres))


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A `both_stores` module's tests run on each store (see the module doc)."""
    both = metafunc.definition.get_closest_marker("both_stores") is not None
    single = metafunc.definition.get_closest_marker("sqlite_only") is not None
    if both and not single and "store_kind" in metafunc.fixturenames:
        metafunc.parametrize("store_kind", STORES, indirect=True)


@pytest.fixture
def store_kind(request: pytest.FixtureRequest) -> str:
    kind: str = getattr(request, "param", "sqlite")
    return kind


@pytest.fixture
def db_url(db_path: Path, store_kind: str, request: pytest.FixtureRequest) -> Iterator[str]:
    """The test's store: a SQLite file not created yet, or on PostgreSQL a copy of the head
    template (see `migrated`)."""
    if store_kind != "postgres":
        yield f"sqlite:///{db_path}"
        return
    server = request.getfixturevalue("postgres_server")
    template = request.getfixturevalue("postgres_head_template")
    with scratch_database(server, request, template) as url:
        yield url


@pytest.fixture(scope="session")
def postgres_head_template(
    postgres_server: PostgresServer, tmp_path_factory: pytest.TempPathFactory
) -> str:
    """A PostgreSQL database as `cafleet setup` leaves it (schema at head, the skills
    install recorded): each PostgreSQL test's database is a copy, made in milliseconds."""
    url = postgres_server.create_database(HEAD_TEMPLATE)
    home = tmp_path_factory.mktemp("postgres-template") / "home"
    home.mkdir()
    cli = Cli(clean_environment(HOME=str(home), CAFLEET_DATABASE_URL=url))
    cli.ok("setup", "db")
    cli.ok("setup", "skill", "--agent", "claude")
    return HEAD_TEMPLATE


@pytest.fixture
def runtime_dir(tmp_path: Path) -> Path:
    """XDG_RUNTIME_DIR for the CLI (per-pane send locks live there)."""
    path = tmp_path / "run"
    path.mkdir(mode=0o700)
    return path


@pytest.fixture
def env(home: Path, db_url: str, runtime_dir: Path) -> dict[str, str]:
    return clean_environment(
        HOME=str(home), CAFLEET_DATABASE_URL=db_url, XDG_RUNTIME_DIR=str(runtime_dir)
    )


@pytest.fixture(name="run_cafleet")
def run_cafleet_fixture() -> Any:
    """The plain runner: `run_cafleet(*args, env=..., input=None)` -> (code, stdout, stderr)."""
    return run_cafleet


@pytest.fixture
def cli(env: dict[str, str]) -> Cli:
    """`cafleet` outside any multiplexer, on the temporary database."""
    return Cli(env)


# root passes every permission check; without these two capabilities it meets them like anyone
WITHOUT_DAC_OVERRIDE = (
    "--inh-caps=-dac_override,-dac_read_search",
    "--bounding-set=-dac_override,-dac_read_search",
)


@pytest.fixture
def unprivileged_cli(env: dict[str, str]) -> Cli:
    """`cafleet` as a user that file permissions apply to (root without its override)."""
    if os.geteuid() != 0:
        return Cli(env)
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: permission bits cannot be tested")
    return Cli(env, (setpriv, *WITHOUT_DAC_OVERRIDE))


class PostgresDatabase(_Reads):
    """The same calls as Database, on a PostgreSQL database (`?` placeholders work; rows are
    read by column name or position)."""

    def __init__(self, url: str) -> None:
        from sqlalchemy.engine import make_url

        parsed = make_url(url)
        self.conninfo = {
            "dbname": parsed.database,
            "user": parsed.username,
            "host": parsed.query.get("host") or parsed.host,
        }

    def connect(self) -> Any:
        import psycopg

        return psycopg.connect(**self.conninfo, autocommit=True, row_factory=_by_name_or_position)

    def rows(self, sql: str, *params: Any) -> list[Any]:
        with self.connect() as conn:
            cursor = conn.execute(sql.replace("?", "%s"), params)
            return list(cursor.fetchall()) if cursor.description else []

    def execute(self, sql: str, *params: Any) -> int | None:
        """One write statement; an INSERT returns its row's first column (its id)."""
        returning = " RETURNING *" if sql.lstrip().upper().startswith("INSERT") else ""
        rows = self.rows(sql + returning, *params)
        return rows[0][0] if rows else None


class _Row(tuple):  # type: ignore[type-arg]
    """A row read like sqlite3.Row: by position, or by column name."""

    names: tuple[str, ...] = ()

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            return super().__getitem__(self.names.index(key))
        return super().__getitem__(key)

    def keys(self) -> list[str]:
        return list(self.names)


def _by_name_or_position(cursor: Any) -> Any:
    names = tuple(column.name for column in cursor.description or ())

    def make(values: Sequence[Any]) -> _Row:
        row = _Row(values)
        row.names = names
        return row

    return make


@pytest.fixture
def db(db_path: Path, db_url: str, store_kind: str) -> Database | PostgresDatabase:
    return PostgresDatabase(db_url) if store_kind == "postgres" else Database(db_path)


@pytest.fixture(scope="session")
def migrated_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One database brought to head by `cafleet setup db`, with the bundled skills installed by
    `cafleet setup skill` (team commands refuse to run without that record); built once."""
    root = tmp_path_factory.mktemp("template")
    home = root / "home"
    home.mkdir()
    path = root / "cafleet.db"
    cli = Cli(clean_environment(HOME=str(home), CAFLEET_DATABASE_URL=f"sqlite:///{path}"))
    cli.ok("setup", "db")
    cli.ok("setup", "skill", "--agent", "claude")
    conn = sqlite3.connect(path)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
    wal = path.with_name(path.name + "-wal")
    assert not wal.exists() or wal.stat().st_size == 0
    return path


@pytest.fixture
def migrated(
    request: pytest.FixtureRequest, db: Database | PostgresDatabase
) -> Database | PostgresDatabase:
    """The database at head with the current skills install recorded: a copy of the
    template file on SQLite; on PostgreSQL the test's database is one already (db_url)."""
    if isinstance(db, PostgresDatabase):
        return db
    shutil.copyfile(request.getfixturevalue("migrated_template"), db.path)
    return db


@pytest.fixture
def tmux_cli(cli: Cli, tmux: TmuxServer) -> Cli:
    """`cafleet` as if run in the first pane of the private tmux server."""
    return cli.with_env(**tmux.env)


@dataclass(frozen=True)
class FleetIds:
    fleet_id: int
    director: int
    admin: int


@pytest.fixture
def make_fleet(tmux_cli: Cli, migrated: Database) -> Any:
    """Create fleets through `cafleet fleet create` in the private tmux pane."""

    def make(name: str = "proj") -> FleetIds:
        made = tmux_cli.json("fleet", "create", "--name", name)
        return FleetIds(
            made["fleet_id"], made["director"]["agent_id"], made["administrator_agent_id"]
        )

    return make


@pytest.fixture
def fleet(make_fleet: Any) -> FleetIds:
    made: FleetIds = make_fleet()
    return made


# The rule `member create` records when each agent was seen ready for text.
READY_RULES = {"claude": "hook", "codex": "screen", "opencode": "http", "custom": "wait"}
LIVE_PANE = "live"


@pytest.fixture
def add_member(migrated: Database, tmux: TmuxServer) -> Any:
    """Register a member directly in the tables (pane spawning is not under test here).

    The row set mirrors what `member create` stores: an active agent with a plain card, a
    placement whose director is the root Director and whose agent was seen ready, and a 720 s
    monitor enrollment. By default the member gets a real pane of its own in the private tmux
    server (a new window running `sleep`, so nothing typed there is ever run): the first one
    is `%1`. `pane_id=None` leaves the placement pending, any other id is recorded as given;
    `ready=False` leaves the agent "starting".
    """

    def add(
        fleet: FleetIds,
        name: str = "worker",
        *,
        description: str = "Worker member",
        pane_id: str | None = LIVE_PANE,
        coding_agent: str = "claude",
        kind: str | None = None,
        ready: bool = True,
    ) -> int:
        if pane_id == LIVE_PANE:
            pane_id = tmux.run("new-window", "-d", "-P", "-F", "#{pane_id}", "sleep 3600")
        card: dict[str, Any] = {"name": name, "description": description, "skills": []}
        if kind is not None:
            card["cafleet"] = {"kind": kind}
        now = datetime.now(UTC).isoformat(timespec="microseconds")
        agent_id = migrated.execute(
            "INSERT INTO agents (fleet_id, name, description, status, registered_at,"
            " agent_card_json) VALUES (?, ?, ?, 'active', ?, ?)",
            fleet.fleet_id,
            name,
            description,
            now,
            json.dumps(card, separators=(",", ":")),
        )
        director = migrated.row("SELECT * FROM agent_placements WHERE agent_id = ?", fleet.director)
        ready_at = now if ready and pane_id is not None else None
        migrated.execute(
            "INSERT INTO agent_placements (agent_id, director_agent_id, mux_session,"
            " mux_window_id, mux_pane_id, backend, coding_agent, created_at, mux_socket,"
            " ready_at, ready_rule, host) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            agent_id,
            fleet.director,
            director["mux_session"],
            director["mux_window_id"],
            pane_id,
            director["backend"],
            coding_agent,
            now,
            director["mux_socket"],
            ready_at,
            READY_RULES[coding_agent] if ready_at else None,
            director["host"],  # beside its Director, as `member create` places it
        )
        if kind is None:
            migrated.execute(
                "INSERT INTO monitor_config (agent_id, interval_seconds) VALUES (?, 720)",
                agent_id,
            )
        assert agent_id is not None
        return agent_id

    return add


@pytest.fixture
def cafleet_argv() -> list[str]:
    return list(CAFLEET)


@pytest.fixture
def send_loop() -> Path:
    return SEND_LOOP


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests that use the private tmux server carry the `tmux` marker."""
    for item in items:
        if not item.path.resolve().is_relative_to(HERE):
            continue
        if "tmux" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.tmux)

"""The private PostgreSQL server of support/postgres.py and its fixtures.

Data goes in through SQLAlchemy with the URL the fixture hands out and comes back through a
bare psycopg connection; every test gets a database of its own; the server listens exactly
where it was told to (checked in the kernel's socket tables, not only in its settings); and
`stop()` leaves no process or file behind.
"""

from __future__ import annotations

import os
import re
import socket
from pathlib import Path

import psycopg
import pytest
import sqlalchemy as sa
from psycopg.conninfo import make_conninfo
from sqlalchemy.engine import make_url

from support.postgres import LOOPBACK, SUPERUSER, PostgresError, PostgresServer
from support.postgres_fixtures import HEAD_TEMPLATE

pytestmark = pytest.mark.postgres


def libpq_conninfo(url: str) -> str:
    """A `postgresql+psycopg://` URL as the libpq connection string psycopg itself takes."""
    parsed = make_url(url)
    assert parsed.drivername == "postgresql+psycopg"
    params = {"user": parsed.username or "", "dbname": parsed.database or ""}
    for key in ("host", "port"):
        value = parsed.query.get(key)
        if isinstance(value, str):
            params[key] = value
    if parsed.host:
        params["host"] = parsed.host
    if parsed.port:
        params["port"] = str(parsed.port)
    return make_conninfo(**params)


def table_names(url: str) -> list[str]:
    engine = sa.create_engine(url)
    try:
        return sorted(sa.inspect(engine).get_table_names())
    finally:
        engine.dispose()


def running(pid: int) -> bool:
    """Alive and not a zombie waiting for init."""
    try:
        os.kill(pid, 0)
        stat = Path(f"/proc/{pid}/stat").read_text()
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return stat.rpartition(")")[2].split()[0] != "Z"


def listening(pid: int) -> tuple[set[tuple[str, int]], set[str]]:
    """The TCP (address, port) pairs and unix socket paths that process `pid` listens on,
    from /proc: its socket inodes matched against its network namespace's socket tables."""
    if not Path(f"/proc/{pid}/net/unix").exists():
        pytest.skip("needs Linux's /proc to see which sockets a process holds")
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            found = re.fullmatch(r"socket:\[(\d+)\]", os.readlink(fd))
        except OSError:
            continue
        if found:
            inodes.add(found[1])
    tcp = set()
    for table, family in (("tcp", socket.AF_INET), ("tcp6", socket.AF_INET6)):
        path = Path(f"/proc/{pid}/net/{table}")
        if not path.exists():
            continue
        for line in path.read_text().splitlines()[1:]:
            fields = line.split()
            local, state, inode = fields[1], fields[3], fields[9]
            if state == "0A" and inode in inodes:  # 0A: LISTEN
                address, port = local.split(":")
                # the kernel prints each 32-bit word of the address in host (little) order
                raw = b"".join(
                    bytes.fromhex(address[i : i + 8])[::-1] for i in range(0, len(address), 8)
                )
                tcp.add((socket.inet_ntop(family, raw), int(port, 16)))
    unix = set()
    for line in Path(f"/proc/{pid}/net/unix").read_text().splitlines()[1:]:
        fields = line.split()
        if len(fields) > 7 and fields[6] in inodes:
            unix.add(fields[7])
    return tcp, unix


# --------------------------------------------------------------------------- the fixtures


def test_a_url_writes_through_sqlalchemy_and_reads_back_through_psycopg(postgres_url: str) -> None:
    engine = sa.create_engine(postgres_url)
    try:
        with engine.begin() as conn:
            conn.execute(sa.text("CREATE TABLE notes (id serial PRIMARY KEY, body text)"))
            conn.execute(
                sa.text("INSERT INTO notes (body) VALUES (:a), (:b)"),
                {"a": "hello", "b": "ünïcode ✓"},
            )
    finally:
        engine.dispose()

    with psycopg.connect(libpq_conninfo(postgres_url)) as conn:
        rows = conn.execute("SELECT id, body FROM notes ORDER BY id").fetchall()
        where = conn.execute(
            "SELECT current_database(), current_user, pg_encoding_to_char(encoding)"
            " FROM pg_database WHERE datname = current_database()"
        ).fetchone()
    assert rows == [(1, "hello"), (2, "ünïcode ✓")]
    assert where == (make_url(postgres_url).database, SUPERUSER, "UTF8")


@pytest.mark.parametrize("run", [1, 2])
def test_every_test_starts_from_an_empty_database(postgres_url: str, run: int) -> None:
    # Run twice: the second run would find the first one's table if they shared a database.
    assert table_names(postgres_url) == []
    engine = sa.create_engine(postgres_url)
    try:
        with engine.begin() as conn:
            conn.execute(sa.text("CREATE TABLE left_behind (run int)"))
            conn.execute(sa.text("INSERT INTO left_behind VALUES (:run)"), {"run": run})
    finally:
        engine.dispose()


def test_two_databases_on_one_server_are_separate(
    postgres_server: PostgresServer, postgres_url: str
) -> None:
    other = postgres_server.create_database("separate_other")
    try:
        assert make_url(other).database != make_url(postgres_url).database
        for url, table in ((postgres_url, "mine"), (other, "theirs")):
            engine = sa.create_engine(url)
            try:
                with engine.begin() as conn:
                    conn.execute(sa.text(f"CREATE TABLE {table} (x int)"))
            finally:
                engine.dispose()
        assert table_names(postgres_url) == ["mine"]
        assert table_names(other) == ["theirs"]
    finally:
        postgres_server.drop_database("separate_other")
    assert "separate_other" not in postgres_server.psql("SELECT datname FROM pg_database")


def test_postgres_url_databases_are_dropped_after_their_test(
    postgres_server: PostgresServer, postgres_url: str
) -> None:
    # every earlier test's database is gone: only this test's own is left (and the session's
    # head template the CLI suite copies, once it was made)
    mine = make_url(postgres_url).database
    assert mine is not None
    names = set(postgres_server.psql("SELECT datname FROM pg_database").split())
    assert names - {HEAD_TEMPLATE} == {"postgres", "template0", "template1", mine}


# --------------------------------------------------------------------------- where it listens


def test_the_session_server_listens_on_its_unix_socket_only(
    postgres_server: PostgresServer,
) -> None:
    settings = postgres_server.psql(
        "SELECT current_setting('listen_addresses'), current_setting('unix_socket_directories')"
    )
    assert settings == f"|{postgres_server.socket_dir}"
    pid = postgres_server.pid
    assert pid is not None
    tcp, unix = listening(pid)
    assert tcp == set()
    assert unix == {str(postgres_server.socket_dir / f".s.PGSQL.{postgres_server.port}")}
    assert postgres_server.socket_dir.stat().st_mode & 0o077 == 0  # the only access control
    with pytest.raises(PostgresError, match="unix socket only"):
        postgres_server.url("postgres", tcp=True)


def test_a_tcp_server_listens_on_a_free_loopback_port_too_and_stop_removes_it(
    postgres_server: PostgresServer,  # for its skip (or failure) without PostgreSQL
) -> None:
    with PostgresServer(tcp=True, bindir=postgres_server.bindir) as server:
        pid = server.pid
        assert pid is not None
        tcp, unix = listening(pid)
        assert tcp == {(LOOPBACK, server.port)}
        assert unix == {str(server.socket_dir / f".s.PGSQL.{server.port}")}

        url = server.create_database("over_tcp", tcp=True)
        assert url == f"postgresql+psycopg://{SUPERUSER}@{LOOPBACK}:{server.port}/over_tcp"
        engine = sa.create_engine(url)
        try:
            with engine.connect() as conn:
                address, port = conn.execute(
                    sa.text("SELECT host(inet_server_addr()), inet_server_port()")
                ).one()
        finally:
            engine.dispose()
        assert (address, port) == (LOOPBACK, server.port)
        # the unix socket URL reaches the same server: its socket is named after the port
        assert table_names(server.url("over_tcp")) == []
        directory = server.directory
    assert not running(pid)
    assert not directory.exists()


def test_stop_runs_when_the_block_fails(postgres_server: PostgresServer) -> None:
    with (
        pytest.raises(RuntimeError, match="boom"),
        PostgresServer(bindir=postgres_server.bindir) as server,
    ):
        pid = server.pid
        directory = server.directory
        raise RuntimeError("boom")
    assert pid is not None
    assert not running(pid)
    assert not directory.exists()
    server.stop()  # a second stop is harmless


def test_database_names_are_checked(postgres_server: PostgresServer) -> None:
    with pytest.raises(ValueError, match="database name"):
        postgres_server.create_database('x"; DROP DATABASE postgres; --')
    assert "postgres" in postgres_server.psql("SELECT datname FROM pg_database").split()

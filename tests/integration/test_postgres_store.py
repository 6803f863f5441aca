"""The CLI on PostgreSQL: `CAFLEET_DATABASE_URL=postgresql+psycopg://...` creates the schema
with the same migrations, runs a fleet's commands, and keeps twenty concurrent senders'
messages, each once. Runs on a private server (tests/support/postgres.py)."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import create_engine, text

from cafleet.adapters.store.postgres.schema import migrate, read_revision
from cafleet.adapters.store.postgres.unit_of_work import PostgresUnitOfWorkFactory
from cafleet.adapters.store.sqlite.schema import HEAD_REVISION, MigrationOutcome
from cafleet.domain.errors import ConnectionLost, Invalid, SchemaMissing
from cafleet.domain.fleet import Fleet
from cafleet.domain.search import SearchQuery

from .test_concurrency import assert_all_clean, release_and_collect, start_senders

pytestmark = pytest.mark.postgres


@pytest.fixture
def pg_cli(cli: Any, postgres_url: str) -> Any:
    return cli.with_env(CAFLEET_DATABASE_URL=postgres_url)


@pytest.fixture
def pg_fleet(pg_cli: Any, tmux: Any) -> tuple[Any, dict[str, Any]]:
    """A migrated PostgreSQL store with the skills recorded and a fleet made in a tmux pane."""
    pg_cli.ok("setup", "db")
    pg_cli.ok("setup", "skill", "--agent", "claude")
    in_pane = pg_cli.with_env(**tmux.env)
    return in_pane, in_pane.json("fleet", "create", "--name", "pg")


def rows(url: str, sql: str) -> list[Any]:
    engine = create_engine(url)
    try:
        with engine.begin() as conn:
            result = conn.execute(text(sql))
            return list(result) if result.returns_rows else []
    finally:
        engine.dispose()


def test_setup_db_creates_the_schema_once_and_doctor_reads_it(pg_cli: Any, postgres_url: str):
    created = pg_cli.ok("setup", "db")
    assert created.startswith("Created postgresql+psycopg://cafleet@/")
    assert f"applied migrations to head ({HEAD_REVISION})" in created
    assert pg_cli.ok("setup", "db").splitlines() == [
        f"Already at head ({HEAD_REVISION}); nothing to do.",
        "On each host with member panes, run `cafleet relay` in a pane of its own"
        " (docs/multi-host.md).",
    ]
    # not in a pane and no skills installed: doctor exits 1, but reads the store
    database = json.loads(pg_cli("--json", "doctor").stdout)["database"]
    assert (database["revision"], database["head"]) == (HEAD_REVISION, HEAD_REVISION)
    assert database["url"].startswith("postgresql+psycopg://")
    assert read_revision(postgres_url) == HEAD_REVISION


def test_a_fleet_talks_through_postgresql(pg_fleet: tuple[Any, dict[str, Any]], postgres_url):
    cli, made = pg_fleet
    fleet, director, admin = (str(made["fleet_id"]), str(made["director"]["agent_id"]),
                              str(made["administrator_agent_id"]))  # fmt: skip

    sent = cli.json("message", "send", "--fleet-id", fleet, "--agent-id", director,
                    "--to", admin, "--text", "hello over postgres")  # fmt: skip
    inbox = cli.json("message", "poll", "--fleet-id", fleet, "--agent-id", admin)
    assert [m["text"] for m in inbox] == ["hello over postgres"]
    cli.ok("message", "ack", "--fleet-id", fleet, "--agent-id", admin,
           "--task-id", str(sent["task"]["id"]))  # fmt: skip

    assert [m["state"] for m in cli.json("message", "poll", "--fleet-id", fleet,
                                         "--agent-id", admin)] == []  # fmt: skip
    [(state,)] = rows(
        postgres_url, f"SELECT status_state FROM tasks WHERE task_id = {sent['task']['id']}"
    )
    assert state == "completed"
    members = cli.json("member", "list", "--fleet-id", fleet)
    assert members == []


def test_the_monitor_loop_ticks_on_postgresql(pg_fleet: tuple[Any, dict[str, Any]], cafleet_argv):
    cli, made = pg_fleet
    fleet = str(made["fleet_id"])
    loop = subprocess.Popen([*cafleet_argv, "monitor", "start", "--fleet-id", fleet, "--tick", "1"],
                            env=cli.env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        runtime: dict[str, Any] = {}
        while time.monotonic() < deadline and not runtime.get("last_tick_at"):
            runtime = cli.json("monitor", "status", "--fleet-id", fleet)["runtime"] or {}
            time.sleep(0.3)
        assert runtime.get("running") is True, runtime
        assert runtime["pid"] == loop.pid and runtime["last_tick_at"]
    finally:
        loop.terminate()
        out, err = loop.communicate(timeout=30)
    assert "Traceback" not in err, err
    assert out.startswith(f"monitor loop started (fleet {fleet}, tick 1s, pid {loop.pid})")


def test_a_command_on_a_store_not_yet_migrated_says_so(pg_cli: Any):
    assert pg_cli.fails("fleet", "list") == (
        "Error: the database schema is missing or outdated; run 'cafleet setup' or"
        " 'cafleet setup db' first"
    )


def test_an_unreachable_server_is_one_line_without_the_password(cli: Any, tmp_path):
    url = f"postgresql+psycopg://someone:s3cret@/nowhere?host={tmp_path}"
    line = cli.with_env(CAFLEET_DATABASE_URL=url).fails("fleet", "list")
    assert line.startswith("Error: cannot reach database postgresql+psycopg://someone:***@/")
    assert "s3cret" not in line


def test_a_second_migration_finds_the_first_ones_work(postgres_url: str):
    assert migrate(postgres_url).outcome is MigrationOutcome.CREATED
    assert migrate(postgres_url).outcome is MigrationOutcome.AT_HEAD


def test_a_database_with_tables_of_its_own_is_not_migrated(postgres_url: str):
    rows(postgres_url, "CREATE TABLE theirs (x int)")
    with pytest.raises(Invalid, match="refusing to migrate an unknown schema"):
        migrate(postgres_url)


OLD_MESSAGES = (
    "INSERT INTO fleets (fleet_id, name, created_at) VALUES (1, 'f', 't')",
    "INSERT INTO agents (agent_id, fleet_id, name, description, status, registered_at,"
    " agent_card_json) VALUES (1, 1, 'a', 'd', 'active', 't', '{}')",
    "INSERT INTO tasks (task_id, context_id, from_agent_id, to_agent_id, type, created_at,"
    " status_state, status_timestamp, text, thread_id) VALUES"
    " (1, 1, 1, 1, 'unicast', :at, 'input_required', :at, 'ancient lighthouse', 1),"
    " (2, 1, 1, 1, 'unicast', :at, 'input_required', :at, 'quiet harbour', 2)",
)


def test_messages_stored_before_0012_are_searched_through_their_stored_vectors(
    postgres_url: str,
):
    """0012 moves the search vector into a stored column: the bodies already stored get
    theirs at the upgrade, and later edits keep them in step."""
    migrate(postgres_url, target="0011")
    for sql in OLD_MESSAGES:
        rows(postgres_url, sql.replace(":at", "'2026-01-01T00:00:00+00:00'"))

    assert migrate(postgres_url).outcome is MigrationOutcome.UPGRADED
    rows(postgres_url, "UPDATE tasks SET text = 'harbour lights' WHERE task_id = 1")

    def found(words: str) -> list[int]:
        with factory() as uow:
            return [h.message.task_id for h in uow.messages.search(1, SearchQuery(words), 0, 10)]

    factory = PostgresUnitOfWorkFactory(postgres_url)
    try:
        assert found("lighthouse") == []
        assert sorted(found("harbour")) == [1, 2]
        assert found("lights") == [1]
    finally:
        factory.close()
    indexes = rows(postgres_url, "SELECT indexdef FROM pg_indexes WHERE tablename = 'tasks'")
    assert any("gin (text_search)" in i for (i,) in indexes)
    assert not any("to_tsvector" in i for (i,) in indexes)


def test_units_of_work_refuse_a_store_behind_the_head(postgres_url: str):
    factory = PostgresUnitOfWorkFactory(postgres_url)
    try:
        with pytest.raises(SchemaMissing):
            factory()
    finally:
        factory.close()


def test_writers_take_turns_and_readers_do_not_wait(postgres_url: str):
    migrate(postgres_url)
    factory = PostgresUnitOfWorkFactory(postgres_url)
    order: list[str] = []
    try:
        with factory(write=True):
            second = threading.Thread(target=lambda: _write_once(factory, order))
            second.start()
            time.sleep(0.5)
            with factory() as reader:  # a reader is not held up by the writer
                assert reader.fleets.list_all() == []
            order.append("first done")
        second.join(10)
    finally:
        factory.close()
    assert order == ["first done", "second began"]


def test_a_commit_whose_connection_broke_is_connection_lost(postgres_url: str):
    """Its fate unknown to the writer: a send then looks for its message (MessagingService)."""
    migrate(postgres_url)
    factory = PostgresUnitOfWorkFactory(postgres_url)
    others = (
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
        " WHERE datname = current_database() AND pid <> pg_backend_pid()"
    )
    try:
        with (
            pytest.raises(ConnectionLost, match=r"^cannot reach database "),
            factory(write=True) as uow,
        ):
            uow.fleets.add(Fleet(0, "cut off", datetime.now(UTC)))
            rows(postgres_url, others)
            uow.commit()
        with factory() as reader:  # a fresh connection: the store answers again
            assert reader.fleets.list_all() == []
    finally:
        factory.close()


def _write_once(factory: PostgresUnitOfWorkFactory, order: list[str]) -> None:
    with factory(write=True):
        order.append("second began")


@pytest.mark.slow
def test_twenty_concurrent_senders_lose_nothing(pg_fleet, env, send_loop, cafleet_argv,
                                                postgres_url):  # fmt: skip
    _, made = pg_fleet
    processes, per_process = 20, 10
    configs = [
        {"mode": "cli", "cafleet": cafleet_argv, "fleet_id": made["fleet_id"],
         "agent_id": made["administrator_agent_id"], "to": made["director"]["agent_id"],
         "count": per_process, "tag": f"p{p}"}
        for p in range(processes)
    ]  # fmt: skip
    results = release_and_collect(
        start_senders(send_loop, {**env, "CAFLEET_DATABASE_URL": postgres_url}, configs)
    )
    assert_all_clean(results)

    texts = [r[0] for r in rows(postgres_url, "SELECT text FROM tasks ORDER BY task_id")]
    assert sorted(texts) == sorted(
        f"p{p}-{n}" for p in range(processes) for n in range(per_process)
    )
    ids = sorted(int(r["stdout"]) for per in results for r in per)
    assert len(set(ids)) == processes * per_process
    stamps = [r[0] for r in rows(postgres_url, "SELECT created_at FROM tasks ORDER BY task_id")]
    assert stamps == sorted(stamps)  # one writer at a time: ids in time order


def test_a_relay_carries_out_what_another_host_left_for_its_panes(
    pg_fleet: tuple[Any, dict[str, Any]], postgres_url: str, cafleet_argv: list[str], tmp_path
):
    """Two hosts on one PostgreSQL store: the fleet's panes are on this machine's name, and a
    command run as CAFLEET_HOST=build-server leaves its pane work for this host's relay."""
    cli, made = pg_fleet
    fleet, director = str(made["fleet_id"]), str(made["director"]["agent_id"])
    log = tmp_path / "worker.jsonl"
    demo = shlex.join([sys.executable, "-m", "cafleet.demo.agent"])
    member = cli.with_env(CAFLEET_DEMO_LOG=str(log), CAFLEET_SUBMIT_DELAY_CUSTOM="0.05").ok(
        "member", "create", "--fleet-id", fleet, "--agent-id", director, "--name", "worker",
        "--description", "w", "--coding-agent", "custom", "--agent-command", demo,
        "--text", "You are a demo member.",
    ).split()[0]  # fmt: skip
    elsewhere = cli.with_env(CAFLEET_HOST="build-server")

    sent = elsewhere.json("message", "send", "--fleet-id", fleet, "--agent-id", director,
                          "--to", member, "--text", "across hosts")  # fmt: skip
    assert sent["notification"] == {
        "state": "pending", "transport": None, "reason": f"relay:{os.uname().nodename}",
    }  # fmt: skip

    relay = subprocess.Popen([*cafleet_argv, "relay", "--poll", "0.1"], env=cli.env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        task = sent["task"]["id"]
        states: list[Any] = []
        while time.monotonic() < deadline and states != [("sent",)]:
            states = rows(postgres_url, f"SELECT state FROM deliveries WHERE task_id = {task}")
            time.sleep(0.2)
        assert states == [("sent",)]
        screen = elsewhere.ok("member", "capture", "--fleet-id", fleet, "--member-id", member)
        assert "across hosts" in screen
    finally:
        relay.terminate()
        out, err = relay.communicate(timeout=30)
    assert err == "", err
    pane = cli.env["TMUX_PANE"]  # it runs with the Director pane's environment
    assert out.splitlines()[0] == (
        f"relay started (host {os.uname().nodename!r}, pid {relay.pid}, in pane {pane})"
    )
    assert rows(postgres_url, "SELECT host FROM relays") == []

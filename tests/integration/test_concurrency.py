"""Several processes on one database file: write lock, ordering, contention."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from datetime import datetime
from itertools import pairwise

import pytest

DATABASE_BUSY = (
    "Error: database is busy (other cafleet processes held the write lock for more than 60s);"
    " retry the command.\n"
)


def start_senders(send_loop, env, configs):
    """Start one sender process per config; each waits for the start signal."""
    procs = []
    for config in configs:
        proc = subprocess.Popen(
            [sys.executable, str(send_loop), json.dumps(config)],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        procs.append(proc)
    for proc in procs:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready"
    return procs


def release_and_collect(procs, timeout=300):
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=timeout)
        assert proc.returncode == 0, err
        assert "Traceback" not in err, err
        results.append(json.loads(out.strip().splitlines()[-1]))
    return results


def assert_all_clean(results):
    """Zero non-zero exits; no lock or busy message and no traceback on any stderr."""
    for per_process in results:
        for r in per_process:
            assert r["code"] == 0, r
            lowered = r["stderr"].lower()
            assert "database is locked" not in lowered, r
            assert "busy" not in lowered, r
            assert "traceback" not in lowered, r


# --------------------------------------------------------------------------- a held write lock


@pytest.mark.slow
def test_send_reports_busy_when_the_write_lock_is_held(cli, fleet, migrated, db_path):
    msg = (
        "message", "send", "--fleet-id", str(fleet.fleet_id), "--agent-id", str(fleet.admin),
        "--to", str(fleet.director),
    )  # fmt: skip
    cli.ok(*msg, "--text", "before")
    before = migrated.dump()

    holder = sqlite3.connect(db_path, isolation_level=None)
    try:
        holder.execute("BEGIN IMMEDIATE")  # held for as long as the command below waits (> 5 s)
        holder.execute(
            "INSERT INTO tasks (context_id, from_agent_id, to_agent_id, type, created_at,"
            " status_state, status_timestamp, text) VALUES (?, ?, ?, 'unicast', ?,"
            " 'input_required', ?, 'uncommitted')",
            (
                fleet.director,
                fleet.admin,
                fleet.director,
                "2026-01-01T00:00:00.000000+00:00",
                "2026-01-01T00:00:00.000000+00:00",
            ),
        )
        result = cli(*msg, "--text", "while locked")
    finally:
        holder.execute("ROLLBACK")
        holder.close()

    assert result.code == 1
    assert result.stdout == ""
    assert result.stderr == DATABASE_BUSY

    assert migrated.dump() == before
    assert migrated.scalar("PRAGMA integrity_check") == "ok"
    assert [r["text"] for r in migrated.rows("SELECT text FROM tasks ORDER BY task_id")] == [
        "before"
    ]
    cli.ok(*msg, "--text", "after")
    texts = [r["text"] for r in migrated.rows("SELECT text FROM tasks ORDER BY task_id")]
    assert texts == ["before", "after"]
    assert migrated.count("deliveries") == 2


def test_reads_are_not_blocked_by_a_held_write_lock(cli, fleet, migrated, db_path):
    holder = sqlite3.connect(db_path, isolation_level=None)
    try:
        holder.execute("BEGIN IMMEDIATE")
        listed = cli.json("fleet", "list")
        polled = cli.json(
            "message", "poll", "--fleet-id", str(fleet.fleet_id), "--agent-id", str(fleet.director)
        )
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert [f["fleet_id"] for f in listed] == [fleet.fleet_id]
    assert polled == []


# --------------------------------------------------------------------------- two writers


def test_two_interleaving_writers_keep_id_order_equal_to_time_order(
    fleet, migrated, env, send_loop
):
    per_process = 50
    configs = [
        {
            "mode": "inprocess",
            "fleet_id": fleet.fleet_id,
            "agent_id": sender,
            "to": recipient,
            "count": per_process,
            "tag": tag,
        }
        for sender, recipient, tag in (
            (fleet.admin, fleet.director, "a"),
            (fleet.director, fleet.admin, "b"),
        )
    ]
    results = release_and_collect(start_senders(send_loop, env, configs))
    assert_all_clean(results)

    rows = migrated.rows(
        "SELECT task_id, created_at, status_timestamp, text FROM tasks ORDER BY task_id"
    )
    assert sorted(r["text"] for r in rows) == sorted(
        f"{tag}-{n}" for tag in "ab" for n in range(per_process)
    )
    for tag in "ab":  # each process's own messages are stored in its sending order
        own = [int(r["text"].split("-")[1]) for r in rows if r["text"].startswith(f"{tag}-")]
        assert own == list(range(per_process))
    times = [datetime.fromisoformat(r["created_at"]) for r in rows]
    assert all(earlier < later for earlier, later in pairwise(times)), (
        "task ids are not in created_at order"
    )
    assert all(r["created_at"] == r["status_timestamp"] for r in rows)
    returned_ids = sorted(int(r["stdout"]) for per in results for r in per)
    assert returned_ids == [r["task_id"] for r in rows]
    assert migrated.count("deliveries") == 2 * per_process


# --------------------------------------------------------------------------- many writers


@pytest.mark.slow
def test_twenty_concurrent_senders_lose_nothing(fleet, migrated, env, send_loop, cafleet_argv):
    processes, per_process = 20, 10
    configs = [
        {
            "mode": "cli",
            "cafleet": cafleet_argv,
            "fleet_id": fleet.fleet_id,
            "agent_id": fleet.admin,
            "to": fleet.director,
            "count": per_process,
            "tag": f"p{p}",
        }
        for p in range(processes)
    ]
    results = release_and_collect(start_senders(send_loop, env, configs))
    assert_all_clean(results)

    texts = [
        r["text"]
        for r in migrated.rows("SELECT text FROM tasks WHERE to_agent_id = ?", fleet.director)
    ]
    expected = [f"p{p}-{n}" for p in range(processes) for n in range(per_process)]
    assert sorted(texts) == sorted(expected)
    assert migrated.count("tasks") == processes * per_process
    ids = sorted(int(r["stdout"]) for per in results for r in per)
    assert len(set(ids)) == processes * per_process
    assert migrated.count("deliveries") == processes * per_process
    assert migrated.scalar("SELECT count(*) FROM deliveries WHERE state = 'pending'") == 0
    times = [
        r["created_at"] for r in migrated.rows("SELECT created_at FROM tasks ORDER BY task_id")
    ]
    assert times == sorted(times)


@pytest.mark.slow
def test_fifty_concurrent_senders_and_ten_pollers_see_no_busy_database(
    fleet, migrated, env, send_loop
):
    """50 processes x 5 sends to the Administrator (no pane) while 10 processes poll: the
    write units of work wait their turn (retrying BEGIN IMMEDIATE) instead of failing."""
    senders, per_sender = 50, 5
    common = {"mode": "inprocess", "fleet_id": fleet.fleet_id}
    configs = [
        {**common, "agent_id": fleet.director, "to": fleet.admin, "count": per_sender,
         "tag": f"s{p}"}
        for p in range(senders)
    ] + [
        {**common, "verb": "poll", "agent_id": fleet.admin, "count": 5}
        for _ in range(10)
    ]  # fmt: skip
    results = release_and_collect(start_senders(send_loop, env, configs))
    assert_all_clean(results)

    texts = sorted(r["text"] for r in migrated.rows("SELECT text FROM tasks"))
    assert texts == sorted(f"s{p}-{n}" for p in range(senders) for n in range(per_sender))
    assert migrated.count("deliveries") == senders * per_sender
    assert migrated.scalar("PRAGMA integrity_check") == "ok"

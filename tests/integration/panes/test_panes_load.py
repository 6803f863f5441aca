"""Load on one live pane: many simultaneous senders, and senders killed mid-delivery.

The member is a stand-in composer that enables bracketed paste and logs every byte it
receives, so the test sees exactly what was submitted: one paste followed by one Enter per
message.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from panes_support import PaneFleet, wait_until

RAWLOG = """import os, sys, tty
tty.setraw(0)
os.write(1, b"\\x1b[?2004hrawlog ready\\r\\n")
with open(sys.argv[1], "ab", buffering=0) as log:
    while True:
        data = os.read(0, 65536)
        if not data:
            break
        log.write(data)
"""
SUBMISSION = re.compile(
    rb"\x1b\[200~\[cafleet msg (\d+) from \d+ [^]]+\][ \n].*?\x1b\[201~\r", re.S
)


def raw_member(fleet: PaneFleet, name: str) -> tuple[int, Path]:
    script = fleet.tmp / "rawlog.py"
    script.write_text(RAWLOG, encoding="utf-8")
    log = fleet.tmp / f"{name}.bytes"
    member = fleet.create_member(name, agent_argv=[sys.executable, str(script), str(log)])
    fleet.wait_screen(member.pane, "rawlog ready")
    return member.agent_id, log


def submitted(log: Path) -> list[int]:
    """The task ids submitted, in order; the whole log must be paste + Enter pairs."""
    data = log.read_bytes() if log.exists() else b""
    assert SUBMISSION.sub(b"", data) == b"", data[-400:]
    return [int(task) for task in SUBMISSION.findall(data)]


def pasted(log: Path) -> list[int]:
    """Every task id pasted, in order, whether or not its Enter followed (a sender killed
    between paste and Enter leaves its paste to be submitted with the next one)."""
    data = log.read_bytes() if log.exists() else b""
    return [int(task) for task in re.findall(rb"\x1b\[200~\[cafleet msg (\d+) from ", data)]


def send_argv(fleet: PaneFleet, to: int, text: str) -> tuple[str, ...]:
    return (
        "--json", "message", "send", "--fleet-id", str(fleet.fleet_id),
        "--agent-id", str(fleet.director), "--to", str(to), "--text", text,
    )  # fmt: skip


def states(fleet: PaneFleet, to: int) -> list[tuple[int, str, str | None]]:
    rows = fleet.rows(
        "SELECT task_id, state, error FROM deliveries WHERE recipient_agent_id = ?"
        " ORDER BY task_id, attempt",
        to,
    )
    return [(int(r[0]), str(r[1]), r[2]) for r in rows]


@pytest.mark.slow
def test_thirty_five_simultaneous_senders_to_one_pane_are_all_submitted_once_in_order(
    pane_fleet: PaneFleet,
) -> None:
    fleet = pane_fleet
    member, log = raw_member(fleet, "sink")
    paced = {"CAFLEET_SUBMIT_DELAY_CUSTOM": "1"}  # typing all 35 takes 35 s at least
    started = time.monotonic()
    procs = [fleet.popen(*send_argv(fleet, member, f"load {n}"), env=paced) for n in range(35)]

    def finish(proc: subprocess.Popen[str]) -> tuple[int, str, str, float]:
        out, err = proc.communicate(timeout=120)
        return proc.returncode, out, err, time.monotonic() - started

    with ThreadPoolExecutor(len(procs)) as pool:
        outputs = list(pool.map(finish, procs))
    assert [(code, err) for code, _, err, _ in outputs if code or err] == []
    reports = [json.loads(out)["notification"] for _, out, _, _ in outputs]
    assert {(r["state"], r["reason"]) for r in reports} <= {("sent", None), ("pending", "queued")}

    def settled() -> list[tuple[int, str, str | None]] | None:
        rows = states(fleet, member)
        return rows if len(rows) == 35 and all(s != "pending" for _, s, _ in rows) else None

    rows = wait_until(settled, "every delivery settled", timeout=90)
    assert {(state, error) for _, state, error in rows} == {("sent", None)}
    tasks = sorted(task for task, _, _ in rows)
    wait_until(lambda: len(submitted(log)) >= 35, "35 submissions", timeout=30)
    assert submitted(log) == tasks  # each once, in task order
    returned = [seconds for *_, seconds in outputs]
    assert max(returned) < 25, returned  # nobody waited for the others' messages to be typed


def kill_senders_mid_delivery(fleet: PaneFleet, member: int) -> None:
    """Three rounds of three senders killed between paste and Enter: rows left begun
    (interrupted) and rows left queued behind them, with no drainer."""
    slow = {"CAFLEET_SUBMIT_DELAY_CUSTOM": "2"}  # a long window between paste and Enter
    for _ in range(3):
        procs = [fleet.popen(*send_argv(fleet, member, "k9"), env=slow) for _ in range(3)]
        time.sleep(4)  # stored and begun, not finished: the submit delay is 2 s
        for proc in procs:
            proc.send_signal(signal.SIGKILL)
            proc.communicate(timeout=30)
    assert any(state == "pending" for _, state, _ in states(fleet, member))


def kill_drainers(fleet: PaneFleet) -> None:
    """SIGKILL the detached `python -m cafleet.entrypoints.processes.drain` processes of this
    fleet's database (found by their environment, so no other test's process is touched)."""
    database = fleet.environment()["CAFLEET_DATABASE_URL"].encode()
    for proc in Path("/proc").iterdir():
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
            env = (proc / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if (
            b"cafleet.entrypoints.processes.drain" in argv
            and b"CAFLEET_DATABASE_URL=" + database in env
        ):
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(proc.name), signal.SIGKILL)


def no_row_pending(
    fleet: PaneFleet, member: int, timeout: float
) -> list[tuple[int, str, str | None]]:
    def settled() -> list[tuple[int, str, str | None]] | None:
        rows = states(fleet, member)
        return None if any(state == "pending" for _, state, _ in rows) else rows

    rows = wait_until(settled, "no row left pending", timeout=timeout)
    assert all(error.startswith("interrupted") for _, s, error in rows if s == "failed")
    return rows


@pytest.mark.slow
def test_rows_left_pending_by_killed_senders_are_settled_by_the_next_delivery(
    pane_fleet: PaneFleet,
) -> None:
    fleet = pane_fleet
    member, log = raw_member(fleet, "sink")
    kill_senders_mid_delivery(fleet, member)

    after = fleet.json(*send_argv(fleet, member, "after")[1:])

    notification = after["notification"]
    assert (notification["state"], notification["reason"]) in {
        ("sent", None),
        ("pending", "queued"),
    }
    no_row_pending(fleet, member, timeout=60)
    assert len(submitted(log)) == len(set(submitted(log)))  # an interrupted one is not retyped
    assert submitted(log)[-1] == after["task"]["id"]


@pytest.mark.slow
def test_rows_left_pending_by_killed_senders_are_settled_by_the_monitor_alone(
    pane_fleet: PaneFleet,
) -> None:
    fleet = pane_fleet
    member, log = raw_member(fleet, "sink")
    kill_senders_mid_delivery(fleet, member)
    kill_drainers(fleet)
    time.sleep(1)
    left = [task for task, state, _ in states(fleet, member) if state == "pending"]
    assert left, "every row settled before the monitor started"
    monitor = fleet.popen("monitor", "start", "--fleet-id", str(fleet.fleet_id), "--tick", "2")
    try:
        started = time.monotonic()
        rows = no_row_pending(fleet, member, timeout=60)  # nothing more is sent to the pane
        took = time.monotonic() - started
    finally:
        monitor.send_signal(signal.SIGINT)
        out, _ = monitor.communicate(timeout=30)
    assert "queued deliveries left by ended senders -> drainer" in out
    sent = {task for task, state, _ in rows if state == "sent"}
    typed = sent & set(left)  # the queued ones, typed by the monitor's drainer
    wait_until(lambda: set(pasted(log)) >= typed, f"{typed} typed", timeout=10)
    assert len(pasted(log)) == len(set(pasted(log)))  # none typed twice
    submitted(log)  # and each paste went in with an Enter
    assert took < 60

"""`cafleet monitor start|status|config` end to end: a real tmux server, a real SQLite file,
the demo agent as the monitoring member."""

from __future__ import annotations

import socket
import subprocess
from typing import Any

import pytest

pytestmark = pytest.mark.tmux

STARTED = r"^monitor loop started \(fleet {fid}, tick 1s, pid (\d+)\)$"


def start_and_wait(monitored: Any) -> Any:
    loop = monitored.start_loop("--tick", "1")
    started = loop.wait_for_line(STARTED.format(fid=monitored.fleet_id))
    assert int(started.group(1)) == loop.pid
    return loop


# --------------------------------------------------------------------------- a running loop


def test_the_startup_line_names_fleet_tick_and_pid(running: Any) -> None:
    started = running.loop.wait_for_line(STARTED.format(fid=running.fleet.fleet_id))

    assert int(started.group(1)) == running.loop.pid
    assert running.loop.out[0] == started.group(0)


def test_the_watcher_is_woken_with_a_wake_naming_the_due_member(running: Any) -> None:
    fleet = running.fleet

    wake = fleet.wait_for_wake(f"member {fleet.member_id} (worker)")

    assert wake.startswith("[monitor] wake: ")
    assert f"with the Director pane ({fleet.director_id}) always inspected." in wake


def test_each_delivered_wake_prints_a_due_line_per_agent(running: Any) -> None:
    fleet = running.fleet

    line = running.loop.wait_for_line(
        rf"^\S+ due agent {fleet.member_id} \(worker\) \[[a-z:,-]+\] -> wake monitor$"
    )

    assert line
    assert running.loop.err == []


def test_a_one_second_interval_wakes_the_watcher_again_and_again(running: Any) -> None:
    fleet = running.fleet
    named = f"member {fleet.member_id} (worker) [interval]"

    fleet.wait_until(
        lambda: sum(named in w for w in fleet.wakes()) >= 2,
        "two interval-only wakes naming the member",
    )

    entries = [w.split(". Capture")[0] for w in fleet.wakes()]
    assert not any(f"({fleet.watcher_id})" in e or f" {fleet.watcher_id} (" in e for e in entries)


def test_status_json_shows_the_running_loop_and_its_pid(running: Any) -> None:
    fleet = running.fleet

    status = fleet.status()

    assert status["runtime"]["running"] is True
    assert status["runtime"]["pid"] == running.loop.pid
    assert status["runtime"]["host"] == socket.gethostname()
    assert status["runtime"]["tick_seconds"] == 1
    assert [(a["agent_id"], a["role"]) for a in status["agents"]] == [
        (fleet.director_id, "director"),
        (fleet.member_id, "member"),
    ]
    assert status["agents"][1]["interval_seconds"] == 1


def test_status_text_heads_with_the_running_pid(running: Any) -> None:
    fleet = running.fleet

    text = fleet.cli.ok("monitor", "status", "--fleet-id", str(fleet.fleet_id))

    assert text.splitlines()[0].startswith(f"monitor: running (pid {running.loop.pid}, last tick ")


def test_a_second_start_is_refused_while_one_runs(running: Any) -> None:
    fleet = running.fleet

    second = fleet.cli("monitor", "start", "--fleet-id", str(fleet.fleet_id))

    assert second.code == 1
    assert second.stdout == ""
    runtime = fleet.status()["runtime"]
    assert runtime["pid"] == running.loop.pid
    assert second.stderr.splitlines() == [
        f"Error: monitor already running for fleet {fleet.fleet_id}"
        f" (pid {running.loop.pid} on {runtime['host']})"
    ]


# --------------------------------------------------------------------------- stopping


def test_sigterm_stops_the_loop_with_exit_0_and_frees_the_slot(monitored: Any) -> None:
    loop = start_and_wait(monitored)
    monitored.wait_for_wake(f"member {monitored.member_id} (worker)")

    loop.terminate()

    assert loop.wait() == 0
    runtime = monitored.status()["runtime"]
    assert (runtime["running"], runtime["pid"], runtime["tick_seconds"]) == (False, None, 1)
    row = monitored.runtime_row()
    assert (row["pid"], row["started_at"], row["last_tick_at"]) == (None, None, None)
    # after a clean stop the slot is free for the next loop
    successor = start_and_wait(monitored)
    assert monitored.status()["runtime"]["pid"] == successor.pid


def test_deleting_the_fleet_stops_the_loop_with_exit_0(monitored: Any) -> None:
    loop = start_and_wait(monitored)

    monitored.cli.ok("fleet", "delete", "--fleet-id", str(monitored.fleet_id))

    assert loop.wait() == 0
    assert loop.out[-1] == f"monitor loop stopped: fleet {monitored.fleet_id} was deleted"
    assert monitored.runtime_row() is None


# --------------------------------------------------------------------------- no loop


def test_starting_for_an_unknown_fleet_fails(idle_fleet: Any) -> None:
    result = idle_fleet.cli("monitor", "start", "--fleet-id", "9999")

    assert (result.code, result.stderr.strip()) == (1, "Error: fleet 9999 not found")


def test_status_of_a_fleet_that_never_ran_a_monitor(idle_fleet: Any) -> None:
    text = idle_fleet.cli.ok("monitor", "status", "--fleet-id", str(idle_fleet.fleet_id))

    assert text.splitlines()[0] == "monitor: stopped"
    assert idle_fleet.status()["runtime"]["tick_seconds"] is None


def test_config_shows_the_edited_interval(idle_fleet: Any) -> None:
    shown = idle_fleet.cli.ok(
        "monitor", "config", "--fleet-id", str(idle_fleet.fleet_id),
        "--member-id", str(idle_fleet.member_id),
    )  # fmt: skip

    assert shown.strip() == f"agent {idle_fleet.member_id}: interval 1s, enabled, last_ping -"


def test_config_refuses_the_monitoring_member(idle_fleet: Any) -> None:
    result = idle_fleet.cli(
        "monitor", "config", "--fleet-id", str(idle_fleet.fleet_id),
        "--member-id", str(idle_fleet.watcher_id),
    )  # fmt: skip

    assert result.code == 1
    assert result.stderr.strip() == (
        f"Error: agent {idle_fleet.watcher_id} is not enrolled in monitoring"
        f" for fleet {idle_fleet.fleet_id}."
    )


# --------------------------------------------------------------------------- faults


def test_the_loop_outlives_its_stdout_reader(monitored: Any) -> None:
    """`cafleet monitor start | head -1`: the reader leaves, the watch goes on."""
    proc = subprocess.Popen(
        monitored.loop_argv("--tick", "1"),
        env=monitored.cli.env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().startswith("monitor loop started")
        proc.stdout.close()  # like `head -1` exiting
        woken = len(monitored.wakes())
        monitored.wait_until(lambda: len(monitored.wakes()) >= woken + 3, "three more wakes")
        assert proc.poll() is None
        assert monitored.status()["runtime"]["pid"] == proc.pid
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
    assert proc.returncode == 0
    assert err.splitlines() == [
        "standard output is closed (Broken pipe); the monitor goes on, on stderr only"
    ]
    assert monitored.runtime_row()["pid"] is None

"""Reused pane ids on a real tmux server: after the server restarts, its new panes get the
old ids (%0, %1, ...). The fleet's placements must not reach them: nothing is typed, shown or
closed there (the attacker's report, H1)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from panes_support import PaneFleet, wait_until

pytestmark = pytest.mark.tmux

# Someone's unrelated program: raw terminal, logs every byte it receives. It runs the same
# interpreter as the members' agent, so the agent check alone would let keystrokes through.
RAW_LOGGER = """\
import os, pathlib, sys, tty
tty.setraw(0)
log = pathlib.Path(sys.argv[1])
log.write_bytes(b"")
with log.open("ab", buffering=0) as handle:
    while chunk := os.read(0, 65536):
        handle.write(chunk)
"""


def restart_with_unrelated_work(fleet: PaneFleet, logs: list[Path]) -> None:
    """The tmux server ends; a new one on the same socket runs a logger in each of `logs`."""
    tmux = fleet.tmux
    tmux.run("kill-server")
    wait_until(lambda: tmux.run("list-sessions", check=False) == "" or None, "tmux to stop")
    wait_until(
        lambda: (
            subprocess.run(
                [tmux.binary, "-L", tmux.name, "list-sessions"], capture_output=True, check=False
            ).returncode
            != 0
        ),
        "the old tmux server to exit",
    )
    script = fleet.tmp / "raw_logger.py"
    script.write_text(RAW_LOGGER, encoding="utf-8")
    first, *others = logs
    tmux.run("new-session", "-d", "-s", "work", "-x", "220", "-y", "60",
             sys.executable, str(script), str(first))  # fmt: skip
    for log in others:
        tmux.run("split-window", "-d", "-t", "work", sys.executable, str(script), str(log))
    for log in logs:
        wait_until(log.exists, f"the logger writing {log.name}")


def test_a_restarted_server_s_panes_with_the_fleet_s_ids_are_never_touched(
    pane_fleet: PaneFleet,
) -> None:
    fleet = pane_fleet
    first = fleet.create_member("first")
    second = fleet.create_member("second")
    old_ids = [fleet.director_pane, first.pane, second.pane]
    logs = [fleet.tmp / f"unrelated-{n}.log" for n in range(3)]

    restart_with_unrelated_work(fleet, logs)
    assert set(fleet.tmux.panes()) == set(old_ids)  # the new server reused every id

    fleet.send(fleet.director, first.agent_id, "SECRET for member")
    fleet.send(fleet.admin, fleet.director, "SECRET for the Director")
    pushes = fleet.rows(
        "SELECT recipient_agent_id, state, error FROM deliveries WHERE task_id IN"
        " (SELECT task_id FROM tasks WHERE text LIKE 'SECRET%')"
    )
    executed = fleet.run("member", "exec", *fleet.target(first.agent_id), "echo typed-here")
    pinged = fleet.run("member", "ping", *fleet.target(first.agent_id))
    captured = fleet.run("member", "capture", *fleet.target(first.agent_id))
    deleted = fleet.ok("member", "delete", *fleet.target(first.agent_id), "--timeout", "1")
    gone = fleet.ok("fleet", "delete", "--fleet-id", str(fleet.fleet_id), "--timeout", "1")

    assert sorted(tuple(p) for p in pushes) == [
        (fleet.director, "skipped", "pane-gone"),
        (first.agent_id, "skipped", "pane-gone"),
    ]
    for refused in (executed, pinged, captured):
        assert refused.code == 1, refused
        assert refused.stderr.startswith("Error: ") and refused.stderr.count("\n") == 1, refused
        assert first.pane in refused.stderr
    assert "typed-here" not in captured.stdout
    assert f"{first.pane} (pane-gone: not the member's pane any more; left untouched)" in deleted
    assert "already gone" in gone
    assert set(fleet.tmux.panes()) == set(old_ids)  # nothing was closed
    assert [log.read_bytes() for log in logs] == [b"", b"", b""]  # nothing was typed

"""A disk that fills between a send's commit and the record of its outcome.

The database lives on a small tmpfs mounted for the test (root only; skipped where mounting
is not allowed). `tmux` on the sender's PATH is a wrapper that fills that disk just before the
Enter of the preview: the message is stored and typed, and the store then refuses the outcome
with SQLITE_FULL. The send must report the stored message (exit 0, a warning), and the member
must get it once, never again once the disk has room.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from panes_support import TMUX, PaneFleet

pytestmark = pytest.mark.tmux

FULL = "database or disk is full"

# fills the disk once, just before the first call that presses Enter after it was armed
TMUX_WRAPPER = """#!/bin/sh
case " $* " in
*" Enter "*)
    if rm {arm} 2>/dev/null; then
        cat /dev/zero > {filler} 2>/dev/null
    fi;;
esac
exec {tmux} "$@"
"""


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """An 8 MiB tmpfs of the test's own, unmounted at teardown."""
    mount, umount = shutil.which("mount"), shutil.which("umount")
    if os.geteuid() != 0 or mount is None or umount is None:
        pytest.skip("mounting a small tmpfs needs root and mount(8)")
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(
        [mount, "-t", "tmpfs", "-o", "size=8m,mode=0700", "tmpfs", str(disk)],
        capture_output=True,
        text=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield disk
    finally:
        subprocess.run([umount, "--lazy", str(disk)], capture_output=True, check=False)


@pytest.fixture
def fleet_on_small_disk(bare_pane_fleet: PaneFleet, small_disk: Path) -> PaneFleet:
    fleet = bare_pane_fleet
    for path in fleet.db_path.parent.glob(f"{fleet.db_path.name}*"):
        shutil.copy2(path, small_disk / path.name)
    fleet.db_path = small_disk / fleet.db_path.name
    fleet.env["CAFLEET_DATABASE_URL"] = f"sqlite:///{fleet.db_path}"
    made = fleet.json("fleet", "create", "--name", "t", "--coding-agent", "custom")
    fleet.fleet_id, fleet.director = made["fleet_id"], made["director"]["agent_id"]
    return fleet


def filling_tmux(where: Path, disk: Path) -> tuple[dict[str, str | None], Path]:
    """A PATH whose tmux fills `disk` before its next Enter, and the file that arms it."""
    assert TMUX is not None
    arm, bin_dir = where / "fill-on-enter", where / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "tmux"
    wrapper.write_text(
        TMUX_WRAPPER.format(
            arm=shlex.quote(str(arm)),
            filler=shlex.quote(str(disk / "filler")),
            tmux=shlex.quote(TMUX),
        )
    )
    wrapper.chmod(0o700)
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}, arm


def test_a_send_whose_outcome_meets_a_full_disk_reports_the_stored_message(
    fleet_on_small_disk: PaneFleet, small_disk: Path, tmp_path: Path
) -> None:
    fleet = fleet_on_small_disk
    member = fleet.create_member("worker")
    path, arm = filling_tmux(tmp_path, small_disk)
    arm.touch()

    first = fleet.run(
        *("--json", "message", "send", "--fleet-id", str(fleet.fleet_id)),
        *("--agent-id", str(fleet.director), "--to", str(member.agent_id)),
        *("--text", "typed as the disk filled"),
        env=path,
    )

    assert not arm.exists(), "the disk was not filled"
    assert first.code == 0, first
    sent = json.loads(first.stdout)
    task_id = sent["task"]["id"]
    assert sent["notification"]["state"] == "sent"
    assert FULL in sent["notification"]["unrecorded"]
    assert first.stderr.startswith(f"Warning: message {task_id} is stored; its preview was sent")
    member.wait_for(lambda e: e["event"] == "submit", "the first preview")

    (small_disk / "filler").unlink()  # room again: the next send finds the row begun
    second = fleet.send(fleet.director, member.agent_id, "after the disk has room")
    member.wait_for(lambda e: e["event"] == "submit", "the second preview", count=2)

    submitted = member.submits()
    assert [s for s in submitted if "typed as the disk filled" in s] == submitted[:1]
    assert [s for s in submitted if "after the disk has room" in s] == submitted[1:]
    sent_to_member = "SELECT task_id FROM tasks WHERE context_id = ? ORDER BY task_id"
    stored = [r["task_id"] for r in fleet.rows(sent_to_member, member.agent_id)]
    assert stored == [task_id, second["task"]["id"]]  # stored once, and reported as stored
    # never typed again: the next queue holder finds the row begun and only finishes what it
    # may have left in the composer (a custom agent's composer cannot be read: one Enter)
    row = fleet.delivery(task_id)
    assert (row["state"], row["channel"]) == ("sent", "keys"), dict(row)

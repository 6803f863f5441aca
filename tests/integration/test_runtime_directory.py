"""The private runtime directory end to end: a directory that is not the user's alone makes
every command that needs it fail with one line naming it, before anything is typed."""

from __future__ import annotations

import os
import shutil
import stat

import pytest


@pytest.fixture
def runtime(runtime_dir):
    return runtime_dir / "cafleet"


def test_first_use_creates_the_runtime_directory_0700(cli, fleet, add_member, runtime):
    member = add_member(fleet)

    cli.ok(
        "message", "send", "--fleet-id", str(fleet.fleet_id), "--agent-id", str(fleet.director),
        "--to", str(member), "--text", "hello",
    )  # fmt: skip

    assert stat.S_IMODE(os.lstat(runtime).st_mode) == 0o700


@pytest.mark.parametrize("planted", ["open", "symlink"])
def test_a_runtime_directory_open_to_others_or_a_link_is_refused(
    cli, fleet, add_member, runtime, tmp_path, planted
):
    member = add_member(fleet)
    shutil.rmtree(runtime, ignore_errors=True)  # `fleet create` may have made it already
    if planted == "open":
        runtime.mkdir()
        runtime.chmod(0o777)
        problem = "open to group or others (mode 0777)"
    else:
        (tmp_path / "elsewhere").mkdir(mode=0o700)
        runtime.symlink_to(tmp_path / "elsewhere")
        problem = "a symbolic link, not a directory"

    line = cli.fails(
        "message", "send", "--fleet-id", str(fleet.fleet_id), "--agent-id", str(fleet.director),
        "--to", str(member), "--text", "hello",
    )  # fmt: skip

    assert line == f"Error: refusing the runtime directory {runtime}: {problem}"
    assert cli.fails("member", "list", "--fleet-id", str(fleet.fleet_id)) == line
    assert list((tmp_path / "elsewhere").iterdir() if planted == "symlink" else []) == []

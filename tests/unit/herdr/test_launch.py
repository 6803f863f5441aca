"""`python -m cafleet.launch <file>`: read and delete the launch file, chdir, exec argv with
the environment plus the file's env; every failure is one stderr line and exit 127."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPORT = (
    "import json, os, sys; json.dump({'argv': sys.argv[1:], 'cwd': os.getcwd(),"
    " 'env': dict(os.environ)}, open(sys.argv[1], 'w')); sys.exit(3)"
)


def launch(path: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cafleet.launch", str(path)],
        env={**os.environ, "INHERITED": "yes", **(env or {})},
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


def write(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data) if not isinstance(data, str) else data, encoding="utf-8")
    path.chmod(0o600)
    return path


def test_the_agent_replaces_the_launcher_with_argv_env_and_cwd(tmp_path: Path) -> None:
    workdir = tmp_path / "work dir"
    workdir.mkdir()
    report = tmp_path / "report.json"
    argv = [sys.executable, "-c", REPORT, str(report), "two words", "line\nbreak", "it's"]
    file = write(
        tmp_path / "launch.json",
        {"argv": argv, "env": {"CAFLEET_AGENT_ID": "7", "INHERITED": "overridden"},
         "cwd": str(workdir)},
    )  # fmt: skip

    done = launch(file)

    assert done.returncode == 3  # the agent's own status: the launcher is gone
    assert not file.exists()
    seen = json.loads(report.read_text())
    assert seen["argv"] == argv[3:]
    assert Path(seen["cwd"]).resolve() == workdir.resolve()
    assert seen["env"]["CAFLEET_AGENT_ID"] == "7"
    assert seen["env"]["INHERITED"] == "overridden"
    assert seen["env"]["PATH"] == os.environ["PATH"]


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        pytest.param("{not json", "cannot read launch file", id="bad-json"),
        pytest.param({"argv": [], "env": {}, "cwd": "/"}, "argv must be", id="empty-argv"),
        pytest.param({"argv": ["x", 1], "env": {}, "cwd": "/"}, "argv must be", id="argv-type"),
        pytest.param({"argv": ["a", "b"], "env": {"A": 1}, "cwd": "/"}, "env must", id="env"),
        pytest.param({"argv": ["a", "b"], "env": {}}, "cwd must", id="no-cwd"),
        pytest.param([1, 2], "cannot read launch file", id="not-an-object"),
    ],
)
def test_a_bad_launch_file_exits_127_and_is_deleted(
    tmp_path: Path, content: Any, fragment: str
) -> None:
    file = write(tmp_path / "launch.json", content)

    done = launch(file)

    assert done.returncode == 127
    assert done.stderr.startswith("cafleet.launch: ")
    assert fragment in done.stderr
    assert len(done.stderr.splitlines()) == 1
    assert not file.exists()


def test_a_missing_launch_file_exits_127(tmp_path: Path) -> None:
    done = launch(tmp_path / "absent.json")

    assert done.returncode == 127
    assert "cannot read launch file" in done.stderr


def test_a_missing_directory_exits_127(tmp_path: Path) -> None:
    file = write(
        tmp_path / "l.json", {"argv": ["/bin/true", "x"], "env": {}, "cwd": str(tmp_path / "no")}
    )

    done = launch(file)

    assert done.returncode == 127
    assert f"cannot change to {tmp_path / 'no'}" in done.stderr


def test_a_missing_program_exits_127(tmp_path: Path) -> None:
    file = write(
        tmp_path / "l.json", {"argv": [str(tmp_path / "nope"), "x"], "env": {}, "cwd": "/"}
    )

    done = launch(file)

    assert done.returncode == 127
    assert f"cannot run {tmp_path / 'nope'}: No such file or directory" in done.stderr


def test_usage_without_exactly_one_argument() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "cafleet.launch"], capture_output=True, text=True, check=False
    )

    assert done.returncode == 127
    assert done.stderr.strip() == "cafleet.launch: usage: python -m cafleet.launch <launch file>"


def test_the_launcher_imports_nothing_beyond_the_standard_library() -> None:
    probe = (
        "import runpy, sys; sys.argv = ['x']\n"
        "try:\n    runpy.run_module('cafleet.launch', run_name='__main__')\n"
        "except SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in"
        " ('cafleet', 'click', 'sqlalchemy', 'alembic', 'fastapi')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=30
    )

    assert done.stdout.strip() == "['cafleet']"  # the package __init__ holds __version__ only

"""`python -m cafleet.hook <event file> <event>`: append `<event> <unix time>`, print
nothing, never fail the agent's hook."""

from __future__ import annotations

import io
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cafleet.hook import main


@pytest.fixture(autouse=True)
def _hook_json_on_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO('{"session_id": "s", "prompt": "hi"}'))


def test_an_event_is_appended_with_its_time(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    events = tmp_path / "events"
    before = time.time()

    assert main([str(events), "session"]) == 0
    assert main([str(events), "prompt"]) == 0

    lines = events.read_text().splitlines()
    assert [line.split(" ")[0] for line in lines] == ["session", "prompt"]
    stamps = [float(line.split(" ")[1]) for line in lines]
    assert before - 1 <= stamps[0] <= stamps[1] <= time.time() + 1
    assert all(len(line.split(" ")[1].split(".")[1]) == 3 for line in lines)
    assert capsys.readouterr() == ("", "")


def test_the_event_file_is_private(tmp_path: Path) -> None:
    events = tmp_path / "events"

    main([str(events), "idle"])

    assert stat.S_IMODE(events.stat().st_mode) == 0o600


def test_a_bad_path_prints_nothing_and_exits_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing_dir = tmp_path / "discarded-pad" / "events"

    assert main([str(missing_dir), "prompt"]) == 0
    assert main([str(tmp_path), "prompt"]) == 0  # a directory, not a file

    assert not missing_dir.parent.exists()
    assert capsys.readouterr() == ("", "")


@pytest.mark.parametrize("args", [[], ["only-a-path"], ["a", "b", "c"]])
def test_wrong_arguments_do_nothing_and_exit_0(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    args: list[str],
) -> None:
    monkeypatch.chdir(tmp_path)

    assert main(args) == 0

    assert list(tmp_path.iterdir()) == []
    assert capsys.readouterr() == ("", "")


def test_an_unreadable_stdin_does_not_fail_the_hook(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    closed = io.StringIO()
    closed.close()
    monkeypatch.setattr(sys, "stdin", closed)

    assert main([str(tmp_path / "events"), "waiting"]) == 0

    assert (tmp_path / "events").read_text().startswith("waiting ")


def test_as_a_hook_command_it_reads_stdin_and_prints_nothing(tmp_path: Path) -> None:
    events = tmp_path / "events"

    done = subprocess.run(
        [sys.executable, "-m", "cafleet.hook", str(events), "prompt"],
        input='{"hook_event_name": "UserPromptSubmit"}',
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    bad = subprocess.run(
        [sys.executable, "-m", "cafleet.hook", str(tmp_path / "gone" / "events"), "prompt"],
        input="{}",
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )

    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert events.read_text().startswith("prompt ")
    assert (bad.returncode, bad.stdout, bad.stderr) == (0, "", "")


def test_the_hook_imports_nothing_beyond_the_standard_library() -> None:
    probe = (
        "import runpy, sys; sys.argv = ['x']\n"
        "try:\n    runpy.run_module('cafleet.hook', run_name='__main__')\n"
        "except SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in"
        " ('cafleet', 'click', 'sqlalchemy', 'alembic', 'fastapi')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=30
    )

    assert done.stdout.strip() == "['cafleet']"

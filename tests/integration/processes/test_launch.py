"""`python -m cafleet.entrypoints.processes.launch <file>`: read and delete the launch file, chdir,
exec argv with the environment plus the file's env (or the file's env alone, with the pane's own
variables); supervised with a state directory; every failure is one stderr line and exit 127."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pexpect
import pytest

from support.probes import probe_module

# no CAFLEET_*, multiplexer or agent-home variable of the outer shell leaks in
pytestmark = pytest.mark.usefixtures("outer_variables_removed")


REPORT = (
    "import json, os, sys; json.dump({'argv': sys.argv[1:], 'cwd': os.getcwd(),"
    " 'env': dict(os.environ)}, open(sys.argv[1], 'w')); sys.exit(3)"
)


def launch(path: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cafleet.entrypoints.processes.launch", str(path)],
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


def planted_launch(tmp_path: Path, how: str) -> tuple[Path, Path, str]:
    """A launch file someone else could have put in place; running it would make `ran`."""
    ran = tmp_path / "ran"
    data = {"argv": ["/bin/sh", "-c", f"touch {ran}"], "env": {}, "cwd": "/"}
    directory = tmp_path / "launch dir"
    directory.mkdir(mode=0o700)
    path = directory / "launch.json"
    if how == "symlink":
        path.symlink_to(write(tmp_path / "theirs.json", data))
        return path, ran, "a symbolic link, not a regular file"
    write(path, data)
    if how == "readable":
        path.chmod(0o644)
        return path, ran, "open to group or others (mode 0644)"
    if how == "hardlink":
        os.link(path, tmp_path / "other-name.json")
        return path, ran, "a hard link: the file has another name"
    directory.chmod(0o777)
    return path, ran, f"lies in {directory}: open to group or others (mode 0777)"


@pytest.mark.parametrize("how", ["symlink", "readable", "hardlink", "open-directory"])
def test_a_launch_file_that_is_not_still_private_is_refused(tmp_path: Path, how: str) -> None:
    path, ran, problem = planted_launch(tmp_path, how)

    done = launch(path)

    assert done.returncode == 127
    assert done.stderr == f"cafleet.launch: cannot read launch file {path}: {problem}\n"
    assert not ran.exists()
    assert not path.exists() and not path.is_symlink()  # read once, even when refused


# the old name stays for one release: a launch line typed before the move names it
@pytest.mark.parametrize("module", ["cafleet.entrypoints.processes.launch", "cafleet.launch"])
def test_usage_without_exactly_one_argument(module: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", module],
        capture_output=True,
        text=True,
        check=False,
    )

    assert done.returncode == 127
    usage = "usage: python -m cafleet.entrypoints.processes.launch <launch file>"
    assert done.stderr.strip() == f"cafleet.launch: {usage}"


def test_the_launcher_imports_nothing_beyond_the_standard_library() -> None:
    ran = probe_module("cafleet.entrypoints.processes.launch")

    # the package __inits__ hold __version__ or nothing; private_files is standard library only
    assert (
        str(ran.loaded(("cafleet", "click", "sqlalchemy", "alembic", "fastapi")))
        == "['cafleet', 'cafleet.adapters', 'cafleet.adapters.runtime',"
        " 'cafleet.adapters.runtime.private_files', 'cafleet.entrypoints',"
        " 'cafleet.entrypoints.processes']"
    )


# --------------------------------------------------------------------------- the whole environment

PANE_OWN = {
    "TERM": "xterm-pane",
    "TMUX": "/tmp/tmux-test/default,1,0",
    "TMUX_PANE": "%42",
    "COLUMNS": "132",
    "LINES": "43",
    "HERDR_PANE_ID": "w1:p9",
    "HERDR_SOCKET_PATH": "/run/herdr-test.sock",
}


def report_env(report: Path) -> dict[str, str]:
    seen: dict[str, str] = json.loads(report.read_text())["env"]
    seen.pop("LC_CTYPE", None)  # Python may coerce a C locale in the agent itself
    return seen


def test_without_inherit_the_file_s_env_is_the_whole_environment(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    given = {"PATH": os.environ["PATH"], "MEMBER_ONLY": "1", "HOME": "/member/home"}
    file = write(
        tmp_path / "launch.json",
        {"argv": [sys.executable, "-c", REPORT, str(report)], "env": given,
         "cwd": str(tmp_path), "inherit": False},
    )  # fmt: skip

    done = launch(file, {"LEAKED_FROM_THE_PANE_SHELL": "x", "HOME": "/pane/home"})

    assert done.returncode == 3
    assert report_env(report).get("MEMBER_ONLY") == "1"
    assert report_env(report)["HOME"] == "/member/home"
    assert "INHERITED" not in report_env(report)
    assert "LEAKED_FROM_THE_PANE_SHELL" not in report_env(report)


def test_without_inherit_the_pane_s_own_variables_are_kept_from_the_pane(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    given = {
        "PATH": os.environ["PATH"],
        "MEMBER_ONLY": "1",
        "TERM": "dumb",  # the Director's terminal is not the member's
        "TMUX_PANE": "%0",
        "HERDR_PANE_ID": "w1:p1",
        "HERDR_ENV": "1",  # a pane variable the launching pane does not have
        "HERDR_AGENT": "claude",  # herdr's hint for the member's agent: never the pane's
    }
    file = write(
        tmp_path / "launch.json",
        {"argv": [sys.executable, "-c", REPORT, str(report)], "env": given,
         "cwd": str(tmp_path), "inherit": False},
    )  # fmt: skip
    pane_env = {k: v for k, v in os.environ.items() if not k.startswith("HERDR_")}
    pane_env = {k: v for k, v in pane_env.items() if k not in PANE_OWN} | PANE_OWN
    pane_env["HERDR_AGENT"] = "codex"  # inherited from herdr's own environment

    done = subprocess.run(
        [sys.executable, "-m", "cafleet.entrypoints.processes.launch", str(file)],
        env=pane_env,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )

    assert done.returncode == 3, done.stderr
    assert report_env(report) == {
        "PATH": os.environ["PATH"],
        "MEMBER_ONLY": "1",
        "HERDR_AGENT": "claude",
        **PANE_OWN,
    }


def test_inherit_true_is_the_default_and_adds_to_the_environment(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    file = write(
        tmp_path / "launch.json",
        {"argv": [sys.executable, "-c", REPORT, str(report)], "env": {"ADDED": "1"},
         "cwd": str(tmp_path), "inherit": True},
    )  # fmt: skip

    launch(file)

    seen = report_env(report)
    assert (seen["ADDED"], seen["INHERITED"]) == ("1", "yes")


# --------------------------------------------------------------------------- supervised


# An agent for the supervised launcher: records its pid, process group and what the status
# file says while it runs; touches <state>/ready if asked; exits with the given code (or
# kills itself with a signal).
SUPERVISED = """\
import json, os, signal, sys
state, report, action = sys.argv[1], sys.argv[2], sys.argv[3]
with open(os.path.join(state, "status"), encoding="utf-8") as handle:
    status = handle.read()
json.dump({"pid": os.getpid(), "pgrp": os.getpgrp(), "status": status,
           "fg": os.tcgetpgrp(0) if os.isatty(0) else None}, open(report, "w"))
if "ready" in action:
    open(os.path.join(state, "ready"), "w").close()
if action.endswith("kill"):
    os.kill(os.getpid(), signal.SIGKILL)
sys.exit(int(action.rsplit(":", 1)[1]))
"""


def supervised_file(tmp_path: Path, action: str) -> tuple[Path, Path, Path]:
    state = tmp_path / "pad"
    state.mkdir(mode=0o700)
    report = tmp_path / "report.json"
    argv = [sys.executable, "-c", SUPERVISED, str(state), str(report), action]
    file = write(
        state / "launch.json",
        {"argv": argv, "env": {"PATH": os.environ["PATH"]}, "cwd": str(tmp_path),
         "inherit": False, "state": str(state)},
    )  # fmt: skip
    return file, state, report


def launch_with_hold(path: Path, hold: float) -> subprocess.Popen[str]:
    """The launcher with a shorter hold than its 30 s, so a held pane can be timed out."""
    code = (
        "import sys, cafleet.entrypoints.processes.launch as launch\n"
        f"launch.HOLD_SECONDS = {hold}\n"
        "sys.exit(launch.main(sys.argv[1:]))"
    )
    return subprocess.Popen(
        [sys.executable, "-c", code, str(path)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_until(probe: Any, what: str, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while not probe():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def test_a_ready_agent_ends_the_launcher_with_its_code_and_the_state_goes(
    tmp_path: Path,
) -> None:
    file, state, report = supervised_file(tmp_path, "ready:5")

    done = launch(file)

    assert done.returncode == 5
    assert not state.exists()  # the pad has served its purpose
    seen = json.loads(report.read_text())
    assert seen["status"] == f"running {seen['pid']}\n"
    assert seen["pgrp"] == seen["pid"]  # the agent leads its own process group
    assert done.stdout == ""


def test_a_ready_agent_killed_by_a_signal_gives_128_plus_the_signal(tmp_path: Path) -> None:
    file, state, _ = supervised_file(tmp_path, "ready:kill")

    done = launch(file)

    assert done.returncode == 128 + 9
    assert not state.exists()


def test_an_agent_that_dies_during_start_up_holds_the_pane_until_the_state_is_removed(
    tmp_path: Path,
) -> None:
    file, state, report = supervised_file(tmp_path, "start:4")
    launcher = launch_with_hold(file, hold=60.0)
    try:
        wait_until(
            lambda: (state / "status").exists() and (state / "status").read_text() == "exited 4\n",
            "the exit status",
        )
        time.sleep(0.5)
        assert launcher.poll() is None  # still holding the pane open
        assert not file.exists()  # the launch file was read once and deleted

        shutil.rmtree(state)  # what discarding the pad does
        stdout, _ = launcher.communicate(timeout=10)
    finally:
        if launcher.poll() is None:
            launcher.kill()
            launcher.communicate()

    assert launcher.returncode == 4
    assert (
        stdout.splitlines()[-1] == f"cafleet: {sys.executable} exited with status 4 during start-up"
    )
    assert json.loads(report.read_text())["status"].startswith("running ")


def test_a_held_pane_closes_by_itself_after_the_hold(tmp_path: Path) -> None:
    file, state, _ = supervised_file(tmp_path, "start:0")
    started = time.monotonic()

    launcher = launch_with_hold(file, hold=1.0)
    stdout, _ = launcher.communicate(timeout=20)

    assert launcher.returncode == 0
    assert time.monotonic() - started >= 1.0
    assert (state / "status").read_text() == "exited 0\n"  # nobody removed the pad
    assert "exited with status 0 during start-up" in stdout


def test_a_missing_agent_is_reported_and_recorded_as_127(tmp_path: Path) -> None:
    state = tmp_path / "pad"
    state.mkdir(mode=0o700)
    missing = str(tmp_path / "no-such-agent")
    file = write(
        state / "launch.json",
        {"argv": [missing, "x"], "env": {}, "cwd": str(tmp_path), "inherit": False,
         "state": str(state)},
    )  # fmt: skip

    launcher = launch_with_hold(file, hold=0.5)
    stdout, stderr = launcher.communicate(timeout=20)

    assert launcher.returncode == 127
    assert stderr.strip() == f"cafleet.launch: cannot run {missing}: No such file or directory"
    assert (state / "status").read_text() == "exited 127\n"
    assert stdout.strip() == f"cafleet: {missing} exited with status 127 during start-up"


def test_a_state_that_is_not_a_path_is_refused(tmp_path: Path) -> None:
    file = write(
        tmp_path / "l.json", {"argv": ["/bin/true", "x"], "env": {}, "cwd": "/", "state": 7}
    )

    done = launch(file)

    assert done.returncode == 127
    assert "state must be a directory path" in done.stderr
    assert len(done.stderr.splitlines()) == 1


def test_on_a_terminal_the_agent_gets_the_foreground_and_the_screen_is_cleared(
    tmp_path: Path,
) -> None:
    file, state, report = supervised_file(tmp_path, "ready:0")

    # pexpect starts it as a multiplexer starts a pane's program: a new session whose
    # controlling terminal is a pty
    launcher = pexpect.spawn(
        sys.executable, ["-m", "cafleet.entrypoints.processes.launch", str(file)], timeout=20
    )
    launcher.expect(pexpect.EOF)
    launcher.close()

    assert launcher.exitstatus == 0
    assert launcher.before.startswith(b"\x1b[H\x1b[2J\x1b[3J")
    seen = json.loads(report.read_text())
    assert seen["fg"] == seen["pgrp"] == seen["pid"]  # the multiplexer shows the agent in front
    assert not state.exists()

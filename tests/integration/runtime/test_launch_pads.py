"""RuntimeLaunchPads / DirectoryLaunchPad: one private start-up directory per spawn, holding
the launch file, hook settings, the hooks' events and the launcher's status."""

from __future__ import annotations

import base64
import json
import os
import re
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from cafleet.adapters.fake.launch_pads import FakeLaunchPads
from cafleet.adapters.runtime.launch_pads import DirectoryLaunchPad, RuntimeLaunchPads
from cafleet.application.ports.agents import HttpEndpoint, LauncherStatus
from cafleet.domain.errors import Unavailable
from cafleet.entrypoints.processes.hook import main as record_event

# no CAFLEET_*, multiplexer or agent-home variable of the outer shell leaks in
pytestmark = pytest.mark.usefixtures("outer_variables_removed")


PYTHON = "/opt/python/bin/python3"


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def runtime(tmp_path: Path) -> Path:
    path = tmp_path / "run" / "cafleet"
    path.mkdir(parents=True, mode=0o700)
    return path


@pytest.fixture
def pad(runtime: Path) -> DirectoryLaunchPad:
    return RuntimeLaunchPads(runtime, python=PYTHON).prepare(3, 17)


# --------------------------------------------------------------------------- prepare


def test_each_spawn_gets_its_own_private_directory(runtime: Path) -> None:
    pads = RuntimeLaunchPads(runtime, python=PYTHON)

    first, second = pads.prepare(3, 17), pads.prepare(3, 17)

    assert first.directory != second.directory
    for made in (first, second):
        assert made.directory.parent == runtime / "members"
        assert re.fullmatch(r"3-17-[0-9a-f]{12}", made.directory.name)
        assert mode(made.directory) == 0o700
        assert list(made.directory.iterdir()) == []
    assert mode(runtime / "members") == 0o700


def test_a_directory_that_cannot_be_made_is_unavailable(runtime: Path) -> None:
    (runtime / "members").write_text("a file in the way")

    with pytest.raises(Unavailable) as raised:
        RuntimeLaunchPads(runtime, python=PYTHON).prepare(1, 2)

    assert raised.value.message == f"cannot use {runtime / 'members'}: not a directory"
    assert "\n" not in raised.value.message


def test_the_launcher_defaults_to_this_python(runtime: Path) -> None:
    made = RuntimeLaunchPads(runtime).prepare(1, 2)

    assert made.launcher(["/b/agent", "x"], {}, "/")[0] == sys.executable
    assert made.event_recorder()[0] == sys.executable


# --------------------------------------------------------------------------- files


def test_the_launch_file_is_private_and_supervised(pad: DirectoryLaunchPad) -> None:
    argv = ["/b/claude", "--name", "coder", "--", "a prompt\nwith 'quotes'"]
    env = {"PATH": "/usr/bin", "CAFLEET_AGENT_ID": "17", "ANTHROPIC_API_KEY": "sk-secret"}

    launcher = pad.launcher(argv, env, "/srv/project")

    launch = pad.directory / "launch.json"
    assert launcher == [PYTHON, "-m", "cafleet.entrypoints.processes.launch", str(launch)]
    assert mode(launch) == 0o600
    assert json.loads(launch.read_text()) == {
        "argv": argv,
        "env": env,
        "cwd": "/srv/project",
        "inherit": False,
        "state": str(pad.directory),
    }
    assert "sk-secret" not in " ".join(launcher)  # only the path is ever on a command line


def test_written_files_are_private(pad: DirectoryLaunchPad) -> None:
    path = pad.write("agent-settings.json", '{"hooks": {}}')

    assert path == str(pad.directory / "agent-settings.json")
    assert mode(Path(path)) == 0o600
    assert Path(path).read_text() == '{"hooks": {}}'


def test_a_file_is_never_overwritten(pad: DirectoryLaunchPad) -> None:
    pad.write("agent-settings.json", "first")

    with pytest.raises(Unavailable) as raised:
        pad.write("agent-settings.json", "second")

    assert raised.value.message == (
        f"cannot write {pad.directory / 'agent-settings.json'}: File exists"
    )
    assert (pad.directory / "agent-settings.json").read_text() == "first"


def test_a_symlink_planted_as_a_pad_file_is_not_followed(
    pad: DirectoryLaunchPad, tmp_path: Path
) -> None:
    target = tmp_path / "victim-file"
    for name in ("agent-settings.json", "ready"):
        (pad.directory / name).symlink_to(target)

    with pytest.raises(Unavailable) as raised:
        pad.write("agent-settings.json", "x")
    pad.mark_ready()

    assert raised.value.message.startswith(f"cannot write {pad.directory / 'agent-settings.json'}")
    assert not target.exists()


def test_a_symlinked_pad_file_is_not_read(pad: DirectoryLaunchPad, tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_text("running 1\nsession 1.0\n")
    for name in ("status", "events", "session"):
        (pad.directory / name).symlink_to(secret)

    assert pad.read("session") is None
    assert pad.status() == LauncherStatus()
    assert pad.events() == ()


def test_members_must_be_a_private_directory(runtime: Path, tmp_path: Path) -> None:
    (tmp_path / "theirs").mkdir(mode=0o700)
    (runtime / "members").symlink_to(tmp_path / "theirs")

    with pytest.raises(Unavailable) as raised:
        RuntimeLaunchPads(runtime, python=PYTHON).prepare(1, 2)

    assert raised.value.message == (
        f"cannot use {runtime / 'members'}: a symbolic link, not a directory"
    )
    assert list((tmp_path / "theirs").iterdir()) == []


def test_a_pad_that_is_a_link_or_open_to_others_is_not_reopened(
    runtime: Path, tmp_path: Path
) -> None:
    pads = RuntimeLaunchPads(runtime, python=PYTHON)
    open_pad, linked = pads.prepare(1, 2).directory, runtime / "members" / "1-3-linked"
    open_pad.chmod(0o755)
    (tmp_path / "theirs").mkdir(mode=0o700)
    linked.symlink_to(tmp_path / "theirs")

    assert pads.reopen(str(open_pad)) is None
    assert pads.reopen(str(linked)) is None


def test_a_discarded_pad_cannot_be_written(pad: DirectoryLaunchPad) -> None:
    pad.discard()

    with pytest.raises(Unavailable) as raised:
        pad.launcher(["/b/agent", "x"], {}, "/")

    assert raised.value.message == (
        f"cannot write {pad.directory / 'launch.json'}: No such file or directory"
    )


# --------------------------------------------------------------------------- status


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        pytest.param(None, LauncherStatus(), id="not-started"),
        pytest.param("running 4242\n", LauncherStatus(pid=4242), id="running"),
        pytest.param("exited 0\n", LauncherStatus(exit_code=0), id="exited-0"),
        pytest.param("exited 127", LauncherStatus(exit_code=127), id="exited-127"),
        pytest.param("exited -9\n", LauncherStatus(exit_code=-9), id="signal"),
        pytest.param("", LauncherStatus(), id="empty"),
        pytest.param("running\n", LauncherStatus(), id="no-number"),
        pytest.param("exited soon\n", LauncherStatus(), id="not-a-number"),
    ],
)
def test_the_launcher_status_is_read_from_its_file(
    pad: DirectoryLaunchPad, content: str | None, expected: LauncherStatus
) -> None:
    if content is not None:
        (pad.directory / "status").write_text(content)

    status = pad.status()

    assert status == expected
    assert status.exited is (expected.exit_code is not None)


def test_a_discarded_pad_reports_no_status_and_no_events(pad: DirectoryLaunchPad) -> None:
    (pad.directory / "status").write_text("exited 1\n")
    pad.discard()

    assert pad.status() == LauncherStatus()
    assert pad.events() == ()


# --------------------------------------------------------------------------- events


def test_events_are_the_first_words_of_the_event_file(pad: DirectoryLaunchPad) -> None:
    assert pad.events() == ()

    (pad.directory / "events").write_text("session 1.000\n\nprompt 2.500\nidle 3.000\n")

    assert [(e.name, e.at.timestamp()) for e in pad.events()] == [
        ("session", 1.0),
        ("prompt", 2.5),
        ("idle", 3.0),
    ]


def test_the_event_recorder_is_the_hook_module_on_the_pad_s_event_file(
    pad: DirectoryLaunchPad,
) -> None:
    recorder = pad.event_recorder()

    assert recorder == [
        PYTHON,
        "-m",
        "cafleet.entrypoints.processes.hook",
        str(pad.directory / "events"),
    ]
    record_event([*recorder[3:], "session"])
    record_event([*recorder[3:], "prompt"])
    assert [e.name for e in pad.events()] == ["session", "prompt"]


# --------------------------------------------------------------------------- the agent's server


class AgentServer:
    """Stands in for an agent's own HTTP server on the pad's reserved port."""

    def __init__(self, endpoint: HttpEndpoint, user: str) -> None:
        expected = "Basic " + base64.b64encode(f"{user}:{endpoint.password}".encode()).decode()
        self.bodies: dict[str, str] = {}
        self.seen: list[tuple[str, str | None]] = []  # (path, authorization or POST body)
        self.post_statuses: dict[str, int] = {}
        self.post_delays: dict[str, float] = {}  # seconds a POST to the path takes
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                server.seen.append((self.path, self.headers.get("Authorization")))
                if self.headers.get("Authorization") != expected:
                    self.send_response(401)
                    self.end_headers()
                    return
                body = server.bodies.get(self.path, "{}").encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                server.seen.append((self.path, self.rfile.read(length).decode()))
                time.sleep(server.post_delays.get(self.path, 0.0))
                self.send_response(server.post_statuses.get(self.path, 204))
                self.end_headers()

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", endpoint.port), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def agent_server(pad: DirectoryLaunchPad) -> Iterator[AgentServer]:
    server = AgentServer(pad.endpoint(), "opencode")
    try:
        yield server
    finally:
        server.close()


def test_an_endpoint_is_a_free_loopback_port_and_a_private_password(
    pad: DirectoryLaunchPad, runtime: Path
) -> None:
    endpoint = pad.endpoint()
    other = RuntimeLaunchPads(runtime, python=PYTHON).prepare(3, 18).endpoint()

    assert 1024 <= endpoint.port <= 65535
    assert len(endpoint.password) >= 24
    assert endpoint.password != other.password
    saved = pad.directory / "endpoint.json"
    assert mode(saved) == 0o600
    assert json.loads(saved.read_text()) == {"port": endpoint.port, "password": endpoint.password}


def test_nothing_is_asked_before_an_endpoint_was_reserved(pad: DirectoryLaunchPad) -> None:
    assert pad.get("/session/status", "opencode") is None


def test_a_server_that_does_not_listen_yet_answers_none(pad: DirectoryLaunchPad) -> None:
    pad.endpoint()

    assert pad.get("/session/status", "opencode") is None


def test_get_asks_the_agent_s_server_with_its_password(
    pad: DirectoryLaunchPad, agent_server: AgentServer
) -> None:
    agent_server.bodies["/session/status"] = '{"ses_1": {"type": "busy"}}'

    answer = pad.get("/session/status", "opencode")

    assert answer == '{"ses_1": {"type": "busy"}}'
    [(path, authorization)] = agent_server.seen
    assert path == "/session/status"
    assert authorization is not None and authorization.startswith("Basic ")


def test_a_refused_login_answers_none(pad: DirectoryLaunchPad, agent_server: AgentServer) -> None:
    assert pad.get("/session/status", "someone-else") is None
    assert len(agent_server.seen) == 1


def test_post_sends_json_and_answers_the_status(
    pad: DirectoryLaunchPad, agent_server: AgentServer
) -> None:
    agent_server.post_statuses["/session/ses_1/shell"] = 409

    status = pad.post("/session/ses_1/shell", "opencode", {"command": "ls"})

    assert status == 409
    assert agent_server.seen == [("/session/ses_1/shell", '{"command": "ls"}')]


def test_post_gives_up_after_its_own_timeout(
    pad: DirectoryLaunchPad, agent_server: AgentServer
) -> None:
    agent_server.post_delays["/slow"] = 1.0

    started = time.monotonic()
    status = pad.post("/slow", "opencode", {}, timeout=0.2)

    assert status is None
    assert time.monotonic() - started < 0.9


# --------------------------------------------------------------------------- ready, discard


def test_mark_ready_leaves_a_private_ready_file(pad: DirectoryLaunchPad) -> None:
    pad.mark_ready()
    pad.mark_ready()  # twice is fine

    assert mode(pad.directory / "ready") == 0o600


def test_mark_ready_on_a_discarded_pad_is_harmless(pad: DirectoryLaunchPad) -> None:
    pad.discard()

    pad.mark_ready()

    assert not pad.directory.exists()


def test_discard_removes_the_whole_pad(pad: DirectoryLaunchPad) -> None:
    pad.launcher(["/b/agent", "x"], {"K": "v"}, "/")
    pad.write("agent-settings.json", "{}")
    (pad.directory / "events").write_text("prompt 1.0\n")

    pad.discard()
    pad.discard()  # twice is fine

    assert not pad.directory.exists()
    assert pad.directory.parent.exists()


# --------------------------------------------------------------------------- with the launcher


AGENT = """\
import os, sys, time
deadline = time.monotonic() + 20
while not os.path.exists(sys.argv[1]) and time.monotonic() < deadline:
    time.sleep(0.02)
print("agent done", flush=True)
sys.exit(6)
"""


def test_a_pad_s_launcher_runs_the_agent_reports_it_and_cleans_up(runtime: Path) -> None:
    pad = RuntimeLaunchPads(runtime, python=sys.executable).prepare(1, 2)
    argv = [sys.executable, "-c", AGENT, str(pad.directory / "ready")]
    env = {"PATH": os.environ["PATH"]}

    launcher = subprocess.Popen(
        pad.launcher(argv, env, str(runtime)),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 15
        while pad.status().pid is None and time.monotonic() < deadline:
            time.sleep(0.02)
        running = pad.status()
        assert running.pid is not None and not running.exited
        assert not (pad.directory / "launch.json").exists()  # read once, then deleted

        pad.mark_ready()
        stdout, _ = launcher.communicate(timeout=15)
    finally:
        if launcher.poll() is None:
            launcher.kill()
            launcher.communicate()

    assert launcher.returncode == 6
    assert stdout == "agent done\n"
    assert not pad.directory.exists()


# --------------------------------------------------------------------------- the fake


def test_the_fake_pad_is_transparent_and_records_what_it_was_given() -> None:
    pads = FakeLaunchPads()
    pad = pads.prepare(4, 9)

    argv = pad.launcher(["/b/claude", "go"], {"K": "v"}, "/srv/project")
    settings = pad.write("agent-settings.json", "{}")

    assert argv == ["/b/claude", "go"]
    assert (pad.argv, pad.env, pad.cwd) == (["/b/claude", "go"], {"K": "v"}, "/srv/project")
    assert settings == "/pads/4-9/agent-settings.json"
    assert pad.files == {"agent-settings.json": "{}"}
    assert pad.event_recorder() == ["record-event", "/pads/4-9/events"]
    pad.answers["/session/status"] = "{}"
    assert pad.get("/session/status", "opencode") is None  # no endpoint reserved yet
    assert pad.endpoint() == HttpEndpoint(4242, "fake-password") == pad.served
    assert pad.get("/session/status", "opencode") == "{}"
    assert pad.status() == LauncherStatus(pid=1)
    pad.reported.append("prompt")
    assert [e.name for e in pad.events()] == ["prompt"]
    pad.mark_ready()
    pad.discard()
    assert (pad.ready, pad.discarded) == (True, True)
    assert pads.for_agent(9) is pad

"""The PaneDriver backends the contract runs against, behind one observation interface.

`FakeBackend` wraps the in-memory FakePaneDriver; `TmuxBackend` wraps TmuxPaneDriver on a
private tmux server; `HerdrBackend` wraps HerdrPaneDriver on the fake herdr server of
tests/fakes in pty mode (real shells and programs in its panes). Each can start the same
kinds of panes (a recording agent, a screen printer, a launch recorder, a dead pane) and
report what those panes observed, so every contract case is written once and holds for all.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol, TypeVar

from cafleet.adapters.fake.pane_driver import FakePaneDriver
from cafleet.adapters.herdr.driver import HerdrPaneDriver
from cafleet.adapters.tmux.driver import TmuxPaneDriver
from cafleet.application.ports.panes import PaneDriver
from cafleet.domain.panes import strip_ansi
from support.tmux import TmuxServer, clean_environment

# tests/fakes is imported by its package path from the repository root (pytest's importlib
# mode does not put it on sys.path)
_ROOT = str(Path(__file__).resolve().parents[2])
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

from tests.fakes.herdr_server import FakeHerdrServer  # noqa: E402

T = TypeVar("T")

WAIT_SECONDS = 15.0
POLL_SECONDS = 0.02

AGENT_ARGV = (sys.executable, "-m", "cafleet.demo.agent")
AGENT_ENV = {"CAFLEET_FLEET_ID": "1", "CAFLEET_AGENT_ID": "2"}

# Writes its full command line, working directory and environment to the file named by its
# first argument (atomically), then stays alive so the pane stays open.
LAUNCH_RECORDER = """\
import json, os, sys, time
report = sys.argv[1]
data = {"argv": sys.orig_argv, "cwd": os.getcwd(), "env": dict(os.environ)}
with open(report + ".tmp", "w", encoding="utf-8") as handle:
    json.dump(data, handle)
os.replace(report + ".tmp", report)
time.sleep(600)
"""

# Prints the JSON list of lines given as its second argument, then touches the file named by
# its first argument and stays alive.
SCREEN_PRINTER = """\
import json, pathlib, sys, time
lines = json.loads(sys.argv[2])
sys.stdout.write("\\n".join(lines) + "\\n")
sys.stdout.flush()
pathlib.Path(sys.argv[1]).touch()
time.sleep(600)
"""

# Waits until the file named by its first argument exists, then exits.
EXIT_ON_SIGNAL_FILE = """\
import os, sys, time
deadline = time.monotonic() + 600
while not os.path.exists(sys.argv[1]) and time.monotonic() < deadline:
    time.sleep(0.02)
"""


def wait_for(probe: Callable[[], T | None], what: str, timeout: float = WAIT_SECONDS) -> T:
    """Poll until probe() returns something truthy; fail with `what` after timeout seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(POLL_SECONDS)


def logged_events(log: Path, kind: str) -> list[dict[str, Any]]:
    """The demo agent's logged events of one kind. A last line without its newline is still
    being written (a 9 KiB submission takes more than one write), so it is not read yet."""
    if not log.exists():
        return []
    complete = log.read_text(encoding="utf-8").rpartition("\n")[0]
    events = [json.loads(line) for line in complete.splitlines() if line.strip()]
    return [e for e in events if e.get("event") == kind]


def wait_for_events(log: Path, kind: str, at_least: int, pane_id: str) -> list[dict[str, Any]]:
    def enough() -> list[dict[str, Any]] | None:
        events = logged_events(log, kind)
        return events if len(events) >= at_least else None

    return wait_for(enough, f"{at_least} {kind} event(s) in {pane_id}")


class Backend(Protocol):
    name: str
    driver: PaneDriver
    anchor: str  # a pane that exists from the start (stands in for the Director's pane)
    prompts: bool  # the multiplexer has a prompt request of its own (herdr's agent.prompt)

    def spawn_agent(self) -> str: ...
    def detect(self, pane_id: str, state: str) -> None:
        """Where the multiplexer detects agents: it sees one in the pane, in `state`."""
        ...

    def submissions(self, pane_id: str, at_least: int) -> list[str]: ...
    def escapes(self, pane_id: str, at_least: int) -> int: ...
    def spawn_printer(self, lines: Sequence[str]) -> str: ...
    def recorder_argv(self, *extra: str) -> list[str]: ...
    def launched(self, pane_id: str, argv: Sequence[str]) -> dict[str, Any]: ...
    def spawn_dead(self) -> str: ...
    def calls(self) -> int: ...
    def stop_server(self) -> None: ...
    def restart_server(self) -> None:
        """The server ends and a new one starts on the same socket, numbering its panes
        from the start again (the anchor becomes a new pane, usually with the old id)."""
        ...

    def close(self) -> None: ...


class FakeBackend:
    name = "fake"
    prompts = False

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.fake = FakePaneDriver()
        self.driver: PaneDriver = self.fake
        self.anchor = self.fake.add_pane("bash").pane_id

    def spawn_agent(self) -> str:
        return self.driver.spawn(self.anchor, AGENT_ARGV, AGENT_ENV, str(self.workdir))

    def detect(self, pane_id: str, state: str) -> None:
        pass  # a tmux-like fake: no agent detection

    def submissions(self, pane_id: str, at_least: int) -> list[str]:
        return self.fake.panes[pane_id].submitted()

    def escapes(self, pane_id: str, at_least: int) -> int:
        return self.fake.panes[pane_id].typed.count(("key", "escape"))

    def spawn_printer(self, lines: Sequence[str]) -> str:
        marker = self.workdir / f"printed-{uuid.uuid4().hex}"
        argv = [sys.executable, "-c", SCREEN_PRINTER, str(marker), json.dumps(list(lines))]
        pane_id = self.driver.spawn(self.anchor, argv, {}, str(self.workdir))
        # what a terminal shows after printing the lines: the text, then an empty cursor row
        self.fake.panes[pane_id].screen = [*lines, "", ""]
        return pane_id

    def recorder_argv(self, *extra: str) -> list[str]:
        report = self.workdir / f"launch-{uuid.uuid4().hex}.json"
        return [sys.executable, "-c", LAUNCH_RECORDER, str(report), *extra]

    def launched(self, pane_id: str, argv: Sequence[str]) -> dict[str, Any]:
        pane = self.fake.panes[pane_id]
        return {"argv": list(pane.argv), "cwd": pane.cwd, "env": dict(pane.env)}

    def spawn_dead(self) -> str:
        pane_id = self.driver.spawn(
            self.anchor, [sys.executable, "-c", "pass"], {}, str(self.workdir)
        )
        self.fake.panes[pane_id].dead = True
        return pane_id

    def calls(self) -> int:
        return self.fake.calls

    def stop_server(self) -> None:
        self.fake.unreachable = "server exited"

    def restart_server(self) -> None:
        self.fake.restart()
        self.anchor = self.fake.add_pane("bash").pane_id

    def close(self) -> None:
        pass


class TmuxBackend:
    name = "tmux"
    prompts = False

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        # the server and every pane inherit its environment: nothing of the outer shell's
        # cafleet, herdr or tmux client settings may leak into the programs under test
        self.server = TmuxServer(
            "tmux", f"cafleet-contract-{uuid.uuid4().hex}", clean_environment()
        )
        try:
            self.server.start("t", (200, 50))
        except AssertionError:
            self.server.kill()
            raise
        self._env = self.server.environment
        self.socket = self.server.socket
        self.anchor = self.server.pane_id
        self.tmux_driver = TmuxPaneDriver(self.socket)
        self.driver: PaneDriver = self.tmux_driver
        self._logs: dict[str, Path] = {}
        self._calls = 0
        run = self.tmux_driver._run

        def counted(subcommand: str, *args: str, stdin: str | None = None) -> str:
            self._calls += 1
            return run(subcommand, *args, stdin=stdin)

        self.tmux_driver._run = counted  # type: ignore[method-assign]

    # -- raw tmux, independent of the driver under test

    def _tmux(self, *args: str) -> str:
        done = subprocess.run(
            ["tmux", *args], env=self._env, capture_output=True, text=True, timeout=10, check=False
        )
        if done.returncode != 0:
            raise AssertionError(f"tmux {' '.join(args)} failed: {done.stderr.strip()}")
        return done.stdout.strip()

    def raw(self, *args: str) -> str:
        return self._tmux("-S", self.socket, *args)

    def raw_screen(self, pane_id: str) -> str:
        return self.raw("capture-pane", "-p", "-t", pane_id)

    # -- panes

    def detect(self, pane_id: str, state: str) -> None:
        pass  # tmux detects no agents

    def spawn_agent(self) -> str:
        log = self.workdir / f"agent-{uuid.uuid4().hex}.jsonl"
        env = {**AGENT_ENV, "CAFLEET_DEMO_LOG": str(log)}
        pane_id = self.driver.spawn(self.anchor, AGENT_ARGV, env, str(self.workdir))
        self._logs[pane_id] = log
        wait_for(lambda: self._events(pane_id, "ready"), f"demo agent in {pane_id} to start")
        # once tmux shows the banner it has also seen the agent ask for bracketed paste
        wait_for(
            lambda: "cafleet demo agent 2 ready" in self.raw_screen(pane_id),
            f"the banner of {pane_id}",
        )
        return pane_id

    def _events(self, pane_id: str, kind: str) -> list[dict[str, Any]]:
        return logged_events(self._logs[pane_id], kind)

    def _wait_events(self, pane_id: str, kind: str, at_least: int) -> list[dict[str, Any]]:
        return wait_for_events(self._logs[pane_id], kind, at_least, pane_id)

    def submissions(self, pane_id: str, at_least: int) -> list[str]:
        return [e["text"] for e in self._wait_events(pane_id, "submit", at_least)]

    def escapes(self, pane_id: str, at_least: int) -> int:
        return len(self._wait_events(pane_id, "esc", at_least))

    def spawn_printer(self, lines: Sequence[str]) -> str:
        marker = self.workdir / f"printed-{uuid.uuid4().hex}"
        argv = [sys.executable, "-c", SCREEN_PRINTER, str(marker), json.dumps(list(lines))]
        pane_id = self.driver.spawn(self.anchor, argv, {}, str(self.workdir))
        wait_for(marker.exists, f"the printer in {pane_id} to finish")
        last = strip_ansi(next((line for line in reversed(lines) if line.strip()), ""))
        wait_for(lambda: last in self.raw_screen(pane_id), f"{last!r} on the screen of {pane_id}")
        return pane_id

    def recorder_argv(self, *extra: str) -> list[str]:
        report = self.workdir / f"launch-{uuid.uuid4().hex}.json"
        return [sys.executable, "-c", LAUNCH_RECORDER, str(report), *extra]

    def launched(self, pane_id: str, argv: Sequence[str]) -> dict[str, Any]:
        report = Path(argv[3])
        wait_for(report.exists, f"the launch report of {pane_id}")
        data: dict[str, Any] = json.loads(report.read_text(encoding="utf-8"))
        return data

    def spawn_dead(self) -> str:
        trigger = self.workdir / f"exit-{uuid.uuid4().hex}"
        argv = [sys.executable, "-c", EXIT_ON_SIGNAL_FILE, str(trigger)]
        pane_id = self.driver.spawn(self.anchor, argv, {}, str(self.workdir))
        self.raw("set-option", "-p", "-t", pane_id, "remain-on-exit", "on")
        trigger.touch()
        wait_for(
            lambda: self.raw("display-message", "-p", "-t", pane_id, "#{pane_dead}") == "1",
            f"{pane_id} to die",
        )
        return pane_id

    def calls(self) -> int:
        return self._calls

    def stop_server(self) -> None:
        self.raw("kill-server")

        def stopped() -> bool:
            done = subprocess.run(
                ["tmux", "-S", self.socket, "list-sessions"],
                env=self._env,
                capture_output=True,
                text=True,
                timeout=10,
                check=False,
            )
            return done.returncode != 0 and "exited unexpectedly" not in done.stderr

        wait_for(stopped, "the tmux server to stop")

    def restart_server(self) -> None:
        self.stop_server()
        self.raw("-f", "/dev/null", "new-session", "-d", "-s", "t", "-x", "200", "-y", "50")
        self.anchor = self.raw("display-message", "-p", "-t", "t", "#{pane_id}")

    def close(self) -> None:
        self.server.kill()


class HerdrBackend:
    name = "herdr"
    prompts = True

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("CAFLEET_", "HERDR_")) and k not in ("TMUX", "TMUX_PANE")
        }
        self.server = FakeHerdrServer(pty=True, env=env).start(cwd=str(workdir))
        self.anchor = self.server.root_pane
        launches = workdir / "launch"
        launches.mkdir(mode=0o700, exist_ok=True)
        self.launches = launches
        self.herdr_driver = HerdrPaneDriver(self.server.socket_path, launch_dir=lambda: launches)
        self.driver: PaneDriver = self.herdr_driver
        self._logs: dict[str, Path] = {}
        self._socket_dir: str | None = None

    def spawn_agent(self) -> str:
        log = self.workdir / f"agent-{uuid.uuid4().hex}.jsonl"
        env = {**AGENT_ENV, "CAFLEET_DEMO_LOG": str(log)}
        pane_id = self.driver.spawn(self.anchor, AGENT_ARGV, env, str(self.workdir))
        self._logs[pane_id] = log
        wait_for(lambda: self._events(pane_id, "ready"), f"demo agent in {pane_id} to start")
        # herdr brackets a paste only once the program has asked for bracketed paste
        wait_for(lambda: self.server.bracketed(pane_id), f"bracketed paste in {pane_id}")
        return pane_id

    def detect(self, pane_id: str, state: str) -> None:
        self.server.set_agent_status(pane_id, state, agent="claude")

    def _events(self, pane_id: str, kind: str) -> list[dict[str, Any]]:
        return logged_events(self._logs[pane_id], kind)

    def _wait_events(self, pane_id: str, kind: str, at_least: int) -> list[dict[str, Any]]:
        return wait_for_events(self._logs[pane_id], kind, at_least, pane_id)

    def submissions(self, pane_id: str, at_least: int) -> list[str]:
        return [e["text"] for e in self._wait_events(pane_id, "submit", at_least)]

    def escapes(self, pane_id: str, at_least: int) -> int:
        return len(self._wait_events(pane_id, "esc", at_least))

    def spawn_printer(self, lines: Sequence[str]) -> str:
        marker = self.workdir / f"printed-{uuid.uuid4().hex}"
        argv = [sys.executable, "-c", SCREEN_PRINTER, str(marker), json.dumps(list(lines))]
        pane_id = self.driver.spawn(self.anchor, argv, {}, str(self.workdir))
        wait_for(marker.exists, f"the printer in {pane_id} to finish")
        last = strip_ansi(next((line for line in reversed(lines) if line.strip()), ""))
        wait_for(
            lambda: last in self.server.screen_text(pane_id), f"{last!r} on the screen of {pane_id}"
        )
        return pane_id

    def recorder_argv(self, *extra: str) -> list[str]:
        report = self.workdir / f"launch-{uuid.uuid4().hex}.json"
        return [sys.executable, "-c", LAUNCH_RECORDER, str(report), *extra]

    def launched(self, pane_id: str, argv: Sequence[str]) -> dict[str, Any]:
        report = Path(argv[3])
        wait_for(report.exists, f"the launch report of {pane_id}")
        data: dict[str, Any] = json.loads(report.read_text(encoding="utf-8"))
        return data

    def spawn_dead(self) -> str:
        """herdr closes a pane whose process ended, so a "dead" pane is simply gone."""
        trigger = self.workdir / f"exit-{uuid.uuid4().hex}"
        argv = [sys.executable, "-c", EXIT_ON_SIGNAL_FILE, str(trigger)]
        pane_id = self.driver.spawn(self.anchor, argv, {}, str(self.workdir))
        trigger.touch()
        wait_for(lambda: not self.server.has_pane(pane_id), f"{pane_id} to close")
        return pane_id

    def calls(self) -> int:
        return len(self.server.request_log())

    def stop_server(self) -> None:
        self.server.stop()

    def restart_server(self) -> None:
        socket_path = self.server.socket_path
        self.server.stop()  # removes the directory it made for its socket
        self._socket_dir = os.path.dirname(socket_path)
        os.makedirs(self._socket_dir, exist_ok=True)
        self.server = FakeHerdrServer(socket_path, pty=True, env=self.server.env)
        self.server.start(cwd=str(self.workdir))
        self.anchor = self.server.root_pane

    def close(self) -> None:
        self.server.stop()
        if self._socket_dir is not None:
            shutil.rmtree(self._socket_dir, ignore_errors=True)


def make_backend(name: str, workdir: Path) -> Backend:
    if name == "herdr":
        return HerdrBackend(workdir)
    return FakeBackend(workdir) if name == "fake" else TmuxBackend(workdir)

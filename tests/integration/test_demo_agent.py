"""The built-in demo agent in a real terminal: a private tmux server, keys sent the way CAFleet
sends them (literal text, key names, bracketed paste), results read from its JSONL log and from
pane captures. The last test plays one ping-pong exchange against a real database.

Fixtures live in this module on purpose (the integration conftest belongs to other tests).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest

from support.cli import run_cafleet
from support.tmux import TmuxServer, clean_environment, require_tmux
from support.tmux import private_tmux as start_private_tmux

AGENT = [sys.executable, "-m", "cafleet.demo.agent"]
DEADLINE = 20.0
STEP = 0.05
MENU = "Do you want to proceed? 1. Yes 2. No"

T = TypeVar("T")


def wait_until(probe: Callable[[], T | None], what: str, timeout: float = DEADLINE) -> T:
    """Call `probe` until it returns something other than None (or False)."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value is not None and value is not False:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(STEP)


# --------------------------------------------------------------------------- tmux plumbing


def start_demo_agent(
    tmux: TmuxServer, workdir: Path, *args: str, env: dict[str, str] | None = None
) -> DemoPane:
    """Run the demo agent in a new session (several argv words: no shell in between)."""
    log = workdir / f"demo-{uuid.uuid4().hex[:8]}.jsonl"
    variables = {"CAFLEET_FLEET_ID": "1", "CAFLEET_AGENT_ID": "3", **(env or {})}
    variables["CAFLEET_DEMO_LOG"] = str(log)
    env_args = [arg for k, v in variables.items() for arg in ("-e", f"{k}={v}")]
    pane = tmux.run(
        "new-session", "-d", "-P", "-F", "#{pane_id}",
        "-s", f"agent-{uuid.uuid4().hex[:8]}", "-x", "200", "-y", "50",
        "-c", str(workdir), *env_args,
        "--", *AGENT, *args,
    )  # fmt: skip
    return DemoPane(tmux, pane, log)


@dataclass
class DemoPane:
    tmux: TmuxServer
    pane: str
    log: Path

    # -- input, the way CAFleet types it

    def type(self, text: str) -> None:
        self.tmux.run("send-keys", "-t", self.pane, "-l", "--", text)

    def key(self, *names: str) -> None:
        self.tmux.run("send-keys", "-t", self.pane, *names)

    def paste(self, text: str, keep_lf: bool = True) -> None:
        buffer = f"cafleet-{uuid.uuid4().hex}"
        self.tmux.run("load-buffer", "-b", buffer, "-", input=text)
        flags = ["-p", "-r", "-d"] if keep_lf else ["-p", "-d"]
        self.tmux.run("paste-buffer", *flags, "-b", buffer, "-t", self.pane)

    def submit(self, text: str) -> None:
        """Type a line and press Enter right away (no submit delay)."""
        self.type(text)
        self.key("Enter")

    # -- output

    def events(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        lines = self.log.read_text(encoding="utf-8").splitlines()
        return [json.loads(line) for line in lines if line.endswith("}")]

    def names(self) -> list[str]:
        return [e["event"] for e in self.events()]

    def submits(self) -> list[str]:
        return [e["text"] for e in self.events() if e["event"] == "submit"]

    def wait_event(self, timeout: float = DEADLINE, **fields: Any) -> dict[str, Any]:
        def probe() -> dict[str, Any] | None:
            for event in self.events():
                if all(event.get(k) == v for k, v in fields.items()):
                    return event
            return None

        return wait_until(probe, f"event {fields} in {self.names()}", timeout)

    def wait_submit(self, text: str) -> None:
        self.wait_event(event="submit", text=text)

    def screen(self) -> list[str]:
        captured = self.tmux.run("capture-pane", "-p", "-t", self.pane)
        return [line.rstrip() for line in captured.splitlines()]

    def wait_screen(self, line: str) -> list[str]:
        def probe() -> list[str] | None:
            screen = self.screen()
            return screen if line in screen else None

        return wait_until(probe, f"{line!r} on screen")

    def gone(self) -> bool:
        done = self.tmux.run("list-panes", "-a", "-F", "#{pane_id}", check=False)
        return self.pane not in done.split()

    def sentinel(self) -> None:
        """Submit a marker and wait for it: whatever was sent before has been handled."""
        marker = f"sentinel-{uuid.uuid4().hex[:6]}"
        self.submit(marker)
        self.wait_submit(marker)


@pytest.fixture
def private_tmux() -> Iterator[TmuxServer]:
    """A server whose `keep` session holds it up between agents."""
    with start_private_tmux(require_tmux(), "cafleet-t", (200, 50), session="keep") as server:
        yield server


@pytest.fixture
def start_agent(private_tmux: TmuxServer, tmp_path: Path) -> Callable[..., DemoPane]:
    """Start the agent with `args` after the defaults and wait until it is ready."""

    def start(*args: str, env: dict[str, str] | None = None) -> DemoPane:
        agent = start_demo_agent(
            private_tmux, tmp_path, "--rounds", "3", *args, "hello prompt", env=env
        )
        agent.wait_event(event="ready")
        return agent

    return start


# --------------------------------------------------------------------------- basics


@pytest.mark.tmux
def test_ready_line_and_prompt(start_agent: Callable[..., DemoPane]) -> None:
    agent = start_agent()

    assert agent.events() == [{"event": "ready", "fleet_id": 1, "agent_id": 3}]
    screen = agent.wait_screen("hello prompt")
    assert screen[:3] == ["cafleet demo agent 3 ready", "hello prompt", ">"]
    # argv with several words: tmux runs the agent directly, no shell in between
    command = agent.tmux.run("display-message", "-p", "-t", agent.pane, "#{pane_current_command}")
    assert command.startswith("python"), command


@pytest.mark.tmux
def test_typed_text_and_enter_is_one_submit(
    start_agent: Callable[..., DemoPane],
) -> None:
    agent = start_agent()

    agent.type("hello there")
    agent.wait_screen("> hello there")  # the composer is echoed
    agent.key("Enter")
    agent.sentinel()

    assert agent.submits()[0] == "hello there"
    assert len(agent.submits()) == 2
    assert "SUBMIT:hello there" in agent.screen()


@pytest.mark.parametrize("keep_lf", [True, False], ids=["lf", "cr"])
@pytest.mark.tmux
def test_two_line_bracketed_paste_is_one_submit(
    start_agent: Callable[..., DemoPane],
    keep_lf: bool,
) -> None:
    agent = start_agent()

    # without -r tmux turns the LF into CR: still a line break inside the paste
    agent.paste("first line\nsecond line", keep_lf=keep_lf)
    agent.wait_screen("> first line⏎second line")
    agent.key("Enter")
    agent.sentinel()

    assert agent.submits()[:-1] == ["first line\nsecond line"]
    assert "SUBMIT:first line\\nsecond line" in agent.screen()


@pytest.mark.tmux
def test_escape_is_logged_and_ignored(start_agent: Callable[..., DemoPane]) -> None:
    agent = start_agent()

    agent.key("Escape")
    agent.wait_event(event="esc")
    agent.type("kept")
    agent.key("Escape")  # does not clear the composer
    agent.key("Enter")
    agent.wait_submit("kept")
    # Esc immediately followed by a paste (no pause): both are parsed
    agent.key("Escape")
    agent.paste("pasted after esc\nsecond line")
    agent.key("Enter")
    agent.sentinel()

    assert agent.names()[1:] == ["esc", "esc", "submit", "esc", "submit", "submit"]
    assert agent.submits()[:2] == ["kept", "pasted after esc\nsecond line"]


@pytest.mark.tmux
def test_backspace_and_ctrl_u_edit_the_composer(
    start_agent: Callable[..., DemoPane],
) -> None:
    agent = start_agent()

    agent.type("abcX")
    agent.key("BSpace")
    agent.key("Enter")
    agent.type("junk")
    agent.key("C-u")
    agent.submit("ok")
    agent.wait_submit("ok")

    assert agent.submits() == ["abc", "ok"]


@pytest.mark.tmux
def test_exit_ends_the_process_and_the_pane(
    start_agent: Callable[..., DemoPane],
) -> None:
    agent = start_agent()

    agent.submit("/exit")

    wait_until(agent.gone, "the pane to close")
    assert agent.events()[-2:] == [
        {"event": "submit", "text": "/exit"},
        {"event": "exit", "code": 0},
    ]


@pytest.mark.tmux
def test_ctrl_c_exits_130(start_agent: Callable[..., DemoPane]) -> None:
    agent = start_agent()

    agent.key("C-c")

    wait_until(agent.gone, "the pane to close")
    assert agent.events()[-1] == {"event": "exit", "code": 130}


@pytest.mark.tmux
def test_shell_command_prints_its_output(
    start_agent: Callable[..., DemoPane],
) -> None:
    agent = start_agent()

    agent.submit("!echo hi")
    agent.submit("! echo demo-$((6 * 7))")

    screen = agent.wait_screen("demo-42")
    assert screen.index("SUBMIT:!echo hi") + 1 == screen.index("hi")
    assert screen.index("SUBMIT:! echo demo-$((6 * 7))") + 1 == screen.index("demo-42")


@pytest.mark.tmux
def test_wake_line_prints_wake(start_agent: Callable[..., DemoPane]) -> None:
    agent = start_agent()

    agent.submit("[monitor] wake: 1 agent due — director 3 (Director) [interval]. Capture…")

    screen = agent.wait_screen("WAKE")
    assert screen[screen.index("WAKE") - 1].startswith("SUBMIT:[monitor] wake: 1 agent due")
    agent.sentinel()
    assert "reply" not in agent.names()


# --------------------------------------------------------------------------- emulation options


@pytest.mark.parametrize("how", ["option", "env"])
@pytest.mark.tmux
def test_slow_composer_drops_an_immediate_enter(
    start_agent: Callable[..., DemoPane],
    how: str,
) -> None:
    if how == "option":
        agent = start_agent("--slow-composer", "300")
    else:
        agent = start_agent(env={"CAFLEET_DEMO_SLOW_COMPOSER_MS": "300"})

    agent.type("slow text")
    agent.key("Enter")  # right after the text: swallowed
    agent.wait_event(event="enter-dropped")
    assert agent.submits() == []
    assert "> slow text" in agent.screen()

    time.sleep(0.5)  # the point of the test: a sender that waits gets its turn
    agent.key("Enter")
    agent.wait_submit("slow text")

    agent.paste("pasted\ntext")
    agent.key("Enter")
    agent.wait_event(event="enter-dropped", timeout=5)
    time.sleep(0.5)
    agent.key("Enter")
    agent.wait_submit("pasted\ntext")
    assert agent.names()[1:] == ["enter-dropped", "submit", "enter-dropped", "submit"]


@pytest.mark.tmux
def test_permission_menu_is_dismissed_by_esc_and_approved_by_a_stray_enter(
    start_agent: Callable[..., DemoPane],
) -> None:
    # The emulated dialog: CAFleet itself never types into a dialog it recognises (and never
    # types Esc); these keys are sent by hand to pin down what the emulation does.
    agent = start_agent("--permission-menu")
    agent.wait_screen(MENU)

    # Esc dismisses it; a paste and Enter then submit as usual
    agent.key("Escape")
    time.sleep(0.1)
    agent.paste("first line\nof a paste")
    agent.key("Enter")
    agent.wait_event(event="submit")
    wait_until(lambda: agent.names().count("menu") == 2, "the menu to come back")

    # without Esc the Enter approves the menu, and nothing is submitted
    agent.paste("second")
    agent.key("Enter")
    agent.wait_event(event="menu-approved")
    assert agent.submits() == ["first line\nof a paste"]
    assert "(approved: 1. Yes)" in agent.screen()

    assert agent.names() == [
        "ready",
        "menu",
        "esc",
        "menu-dismissed",
        "submit",
        "menu",
        "menu-approved",
    ]


# --------------------------------------------------------------------------- identity


def test_missing_identity_exits_2(tmp_path: Path) -> None:
    log = tmp_path / "demo.jsonl"
    for env in ({}, {"CAFLEET_FLEET_ID": "1"}, {"CAFLEET_AGENT_ID": "3"}):
        done = subprocess.run(
            [*AGENT, "hello prompt"],
            env=clean_environment(CAFLEET_DEMO_LOG=str(log), **env),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 2, done
        assert done.stdout == ""
        assert len(done.stderr.splitlines()) == 1, done.stderr
        assert "CAFLEET_" in done.stderr
    assert not log.exists()


# --------------------------------------------------------------------------- ping-pong


@pytest.mark.slow
@pytest.mark.tmux
def test_ping_pong_against_a_real_database(
    private_tmux: TmuxServer,
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    base = {"HOME": str(home), "CAFLEET_DATABASE_URL": f"sqlite:///{tmp_path / 'cafleet.db'}"}

    def cafleet(*args: str, **extra: str) -> str:
        done = run_cafleet(*args, env=clean_environment(**base, **extra))
        assert done.code == 0, done
        return done.stdout

    cafleet("setup", "db")
    cafleet("setup", "skill", "--agent", "claude")  # team commands need a skills install
    # The fleet's Director placement is the `keep` pane (a shell, so no preview is typed
    # there); the demo agent runs as that Director in a pane of its own.
    fleet = json.loads(
        cafleet(
            "--json", "fleet", "create", "--name", "demo", "--coding-agent", "custom",
            TMUX=f"{private_tmux.socket},0,0", TMUX_PANE=private_tmux.pane_id,
        )
    )  # fmt: skip
    fleet_id = str(fleet["fleet_id"])
    director = fleet["director"]["agent_id"]
    admin = fleet["administrator_agent_id"]

    def send(sender: int, to: int, text: str) -> dict[str, Any]:
        out = cafleet(
            "--json", "message", "send", "--fleet-id", fleet_id,
            "--agent-id", str(sender), "--to", str(to), "--text", text,
        )  # fmt: skip
        task: dict[str, Any] = json.loads(out)["task"]
        return task

    def pending(agent_id: int) -> list[dict[str, Any]]:
        out = cafleet(
            "--json", "message", "poll", "--full",
            "--fleet-id", fleet_id, "--agent-id", str(agent_id),
        )  # fmt: skip
        found: list[dict[str, Any]] = json.loads(out)
        return found

    agent = start_demo_agent(
        private_tmux, tmp_path, "--rounds", "3", "hello prompt",
        env={**base, "CAFLEET_FLEET_ID": fleet_id, "CAFLEET_AGENT_ID": str(director)},
    )  # fmt: skip
    agent.wait_event(event="ready")

    # a preview typed the way CAFleet types it: bracketed paste, submit delay, Enter (no Esc)
    ping = send(admin, director, "ping 1")
    agent.paste(f"[cafleet msg {ping['id']} from {admin} {ping['ts']}]\nping 1")
    time.sleep(0.2)
    agent.key("Enter")

    agent.wait_event(event="reply", to=admin, text="pong 1")
    assert agent.events()[-2] == {"event": "ack", "task_id": ping["id"], "from": admin}
    assert pending(director) == []
    answers = pending(admin)
    assert [(m["from_agent_id"], m["to_agent_id"], m["text"]) for m in answers] == [
        (director, admin, "pong 1")
    ]
    assert f"REPLY to {admin}: pong 1" in agent.screen()

    # a typed poll line: pong n is answered with ping n+1 only while n < --rounds
    send(admin, director, "pong 1")
    send(admin, director, "pong 3")
    agent.submit(f"cafleet message poll --fleet-id {fleet_id} --agent-id {director}")
    wait_until(lambda: agent.names().count("ack") == 3, "three acks")
    agent.sentinel()

    replies = [e for e in agent.events() if e["event"] == "reply"]
    assert replies == [
        {"event": "reply", "to": admin, "text": "pong 1"},
        {"event": "reply", "to": admin, "text": "ping 2"},
    ]
    assert pending(director) == []
    assert sorted(m["text"] for m in pending(admin)) == ["ping 2", "pong 1"]
    assert "error" not in agent.names()

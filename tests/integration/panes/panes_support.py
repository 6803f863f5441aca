"""Helpers for end-to-end tests on a real tmux server with the demo agent as the coding agent.

Every test gets:

- a private tmux server (tests/support/tmux.py: `cafleet-it-<uuid>`, session `main`, 220x60),
  killed on teardown whatever happens; its first pane runs a plain shell and is the Director's;
- a scratch HOME and a scratch SQLite file as `cafleet setup` leaves them (database and
  skills; set up once per session, copied for each test);
- a fleet created from that first pane (`fleet create --name t --coding-agent custom`).

The CLI runs as a subprocess with exactly the environment a process in the Director's pane
would have (TMUX=<socket>,0,0, TMUX_PANE=<pane>), nothing from the outer shell's CAFLEET_*
variables, and CAFLEET_SUBMIT_DELAY_CUSTOM=0.05 to keep pushes fast. Members run
`python -m cafleet.demo.agent` with the interpreter running the tests; each member gets its
own CAFLEET_DEMO_LOG file (members inherit the caller's environment), which the tests read to
see exactly what the agent received: every key that reached it, an Esc included.

Waiting is done by polling with a deadline, never by fixed sleeps.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from support.cli import CAFLEET, Result, merged, run_cafleet
from support.demo_log import log_events
from support.tmux import TmuxServer
from support.tmux import clean_environment as shared_clean_environment

TMUX = shutil.which("tmux")
DEMO_AGENT = [sys.executable, "-m", "cafleet.demo.agent"]
SUBMIT_DELAY = "0.05"
# Shell names of the agent check (domain/panes.py): a pane showing one of these is not an agent.
SHELL_NAMES = frozenset({
    "sh", "bash", "zsh", "fish", "dash", "ksh", "mksh", "ash", "tcsh", "csh",
    "nu", "xonsh", "elvish", "pwsh", "busybox", "login",
})  # fmt: skip
DEADLINE = 30.0
STEP = 0.05

# A stand-in for Claude Code: takes Claude Code's command line, records it, runs the demo agent
# with the spawn prompt (and the flags in FAKE_CLAUDE_DEMO_FLAGS), and once the agent is up runs
# the UserPromptSubmit hooks of its --settings file the way Claude Code does when it takes a
# prompt. It runs no background (asyncRewake) hook, so no mail waiter ever waits: messages
# reach it by keystrokes, the ladder's last rung (the real hook channel is in realagents/).
FAKE_CLAUDE = """#!{python}
import json, os, shlex, subprocess, sys, threading, time

args = sys.argv[1:]
assert args[-2] == "--", args
log = os.environ.get("CAFLEET_DEMO_LOG", "")
with open(log + ".argv", "w", encoding="utf-8") as handle:
    json.dump(args, handle)


def take_prompt(settings):
    with open(settings, encoding="utf-8") as handle:
        hooks = json.load(handle)["hooks"]
    while '"ready"' not in (open(log).read() if os.path.exists(log) else ""):
        time.sleep(0.05)
    for entry in hooks.get("UserPromptSubmit", []):
        for hook in entry["hooks"]:
            if hook.get("asyncRewake"):
                continue  # like a Claude Code without background hooks: mail comes by keys
            subprocess.run(hook["command"], shell=True, input=b"{}", check=False)


if "--settings" in args:
    settings = args[args.index("--settings") + 1]
    threading.Thread(target=take_prompt, args=(settings,), daemon=True).start()

from cafleet.demo import agent as demo_agent

flags = shlex.split(os.environ.get("FAKE_CLAUDE_DEMO_FLAGS", ""))
sys.exit(demo_agent.main([*flags, args[-1]]))
"""

T = TypeVar("T")


def wait_until(probe: Callable[[], T | None], what: str, timeout: float = DEADLINE) -> T:
    """Call `probe` until it returns something other than None or False; fail at the deadline."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value is not None and value is not False:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(STEP)


def clean_environment(**extra: str) -> dict[str, str]:
    """The shared clean environment without XDG_RUNTIME_DIR either (each test has its own)."""
    env = shared_clean_environment(**extra)
    if "XDG_RUNTIME_DIR" not in extra:
        env.pop("XDG_RUNTIME_DIR", None)
    return env


# --------------------------------------------------------------------------- members


@dataclass
class Member:
    agent_id: int
    name: str
    pane: str
    log: Path | None
    created: Result

    def events(self) -> list[dict[str, Any]]:
        """The demo agent's JSON-lines log so far (a partly written last line is ignored)."""
        return [] if self.log is None else log_events(self.log)

    def submits(self) -> list[str]:
        return [e["text"] for e in self.events() if e["event"] == "submit"]

    def count(self, event: str) -> int:
        return sum(1 for e in self.events() if e["event"] == event)

    def wait_for(
        self,
        match: Callable[[dict[str, Any]], bool],
        what: str,
        count: int = 1,
        timeout: float = DEADLINE,
    ) -> list[dict[str, Any]]:
        """Wait until at least `count` logged events satisfy `match`; return them all."""

        def probe() -> list[dict[str, Any]] | None:
            hits = [e for e in self.events() if match(e)]
            return hits if len(hits) >= count else None

        return wait_until(probe, f"{what} in the log of {self.name}", timeout)

    def wait_event(self, event: str, count: int = 1, timeout: float = DEADLINE) -> None:
        self.wait_for(lambda e: e["event"] == event, f"{count}x {event!r}", count, timeout)


# --------------------------------------------------------------------------- the fleet


@dataclass
class PaneFleet:
    """A fleet whose Director is the first pane of a private tmux server."""

    tmp: Path
    home: Path
    db_path: Path
    tmux: TmuxServer
    env: dict[str, str]
    fleet_id: int = 0
    director: int = 0
    admin: int = 0
    members: list[Member] = field(default_factory=list)

    @property
    def director_pane(self) -> str:
        return self.tmux.pane_id

    # -- running the CLI

    def environment(self, overrides: Mapping[str, str | None] | None = None) -> dict[str, str]:
        return merged(self.env, overrides)

    def run(
        self,
        *args: str,
        env: Mapping[str, str | None] | None = None,
        cwd: Path | None = None,
        timeout: float = 120,
    ) -> Result:
        return run_cafleet(*args, env=self.environment(env), cwd=cwd or self.tmp, timeout=timeout)

    def ok(self, *args: str, **kwargs: Any) -> str:
        """Run; insist on exit 0 and an empty stderr; return stdout."""
        result = self.run(*args, **kwargs)
        assert result.code == 0, result
        assert result.stderr == "", result
        return result.stdout

    def json(self, *args: str, **kwargs: Any) -> Any:
        return json.loads(self.ok("--json", *args, **kwargs))

    def target(self, member_id: int) -> tuple[str, ...]:
        """`--fleet-id F --member-id M` for the member verbs."""
        return ("--fleet-id", str(self.fleet_id), "--member-id", str(member_id))

    def wait_screen(self, pane: str, needle: str, timeout: float = DEADLINE) -> str:
        """Wait until a capture of `pane` contains `needle`; return that capture."""

        def probe() -> str | None:
            screen = self.tmux.capture(pane)
            return screen if needle in screen else None

        return wait_until(probe, f"{needle!r} on the screen of {pane}", timeout)

    def popen(
        self, *args: str, env: Mapping[str, str | None] | None = None
    ) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [*CAFLEET, *args],
            env=self.environment(env),
            cwd=self.tmp,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def send(
        self, sender: int, to: int, text: str, env: Mapping[str, str | None] | None = None
    ) -> dict[str, Any]:
        """`cafleet --json message send`; returns its JSON object."""
        result: dict[str, Any] = self.json(
            "message",
            "send",
            "--fleet-id",
            str(self.fleet_id),
            "--agent-id",
            str(sender),
            "--to",
            str(to),
            "--text",
            text,
            env=env,
        )
        return result

    # -- members

    def member_create(
        self,
        name: str,
        *agent_options: str,
        prompt: str = "You are a demo member.",
        env: Mapping[str, str | None] | None = None,
        cwd: Path | None = None,
    ) -> Result:
        """`cafleet member create` for `name`; `agent_options` choose the coding agent."""
        return self.run(
            "member",
            "create",
            "--fleet-id",
            str(self.fleet_id),
            "--agent-id",
            str(self.director),
            "--name",
            name,
            "--description",
            f"{name} (end-to-end test member)",
            *agent_options,
            "--text",
            prompt,
            env=env,
            cwd=cwd,
        )

    def custom_options(self, argv: Sequence[str]) -> tuple[str, ...]:
        return ("--coding-agent", "custom", "--agent-command", shlex.join(argv))

    def create_member(
        self,
        name: str,
        *agent_flags: str,
        agent_argv: Sequence[str] | None = None,
        prompt: str = "You are a demo member.",
        env: Mapping[str, str | None] | None = None,
        cwd: Path | None = None,
        wait_ready: bool = True,
        demo: bool | None = None,
    ) -> Member:
        """`member create --coding-agent custom` running the demo agent (or `agent_argv`).

        A demo agent (`demo`, by default when no `agent_argv` is given) gets its own log file;
        `wait_ready` waits for its `ready` event so that nothing is typed before it has put the
        terminal in raw mode.
        """
        argv = list(agent_argv) if agent_argv is not None else [*DEMO_AGENT, *agent_flags]
        demo = agent_argv is None if demo is None else demo
        log = self.tmp / f"{name}.jsonl" if demo else None
        overrides: dict[str, str | None] = dict(env or {})
        if log is not None:
            overrides["CAFLEET_DEMO_LOG"] = str(log)
        result = self.member_create(
            name, *self.custom_options(argv), prompt=prompt, env=overrides, cwd=cwd
        )
        return self._created(result, "custom", log, wait_ready)

    # -- a stand-in for Claude Code

    def use_fake_claude(self) -> Path:
        """Put a `claude` on the PATH of every later call: the demo agent behind Claude Code's
        command line (see FAKE_CLAUDE). tmux shows it as its interpreter, which the settings
        accept as Claude Code's foreground name, as a user would for a differently named
        installation."""
        bin_dir = self.tmp / "bin"
        bin_dir.mkdir(exist_ok=True)
        script = bin_dir / "claude"
        script.write_text(FAKE_CLAUDE.replace("{python}", sys.executable), encoding="utf-8")
        script.chmod(0o755)
        self.env["PATH"] = os.pathsep.join([str(bin_dir), self.env.get("PATH", "")])
        self.env["CAFLEET_AGENT_COMMANDS_CLAUDE"] = f"claude,{Path(sys.executable).name}"
        return script

    def claude_member_create(
        self, name: str, *demo_flags: str, prompt: str = "You are a demo member."
    ) -> tuple[Result, Path]:
        """`member create --coding-agent claude` with the fake claude; (result, its log)."""
        log = self.tmp / f"{name}.jsonl"
        env = {"CAFLEET_DEMO_LOG": str(log), "FAKE_CLAUDE_DEMO_FLAGS": shlex.join(demo_flags)}
        result = self.member_create(name, "--coding-agent", "claude", prompt=prompt, env=env)
        return result, log

    def create_claude_member(
        self, name: str, *demo_flags: str, prompt: str = "You are a demo member."
    ) -> Member:
        result, log = self.claude_member_create(name, *demo_flags, prompt=prompt)
        return self._created(result, "claude", log, wait_ready=True)

    def _created(self, result: Result, backend: str, log: Path | None, wait_ready: bool) -> Member:
        assert result.code == 0, result
        assert result.stderr == "", result
        agent_id, shown_name, shown_backend, pane = result.stdout.split()
        assert shown_backend == f"coding_agent={backend}", result
        member = Member(int(agent_id), shown_name, pane.removeprefix("pane="), log, result)
        self.members.append(member)
        if wait_ready and log is not None:
            member.wait_event("ready")
        return member

    # -- the database, read directly

    def rows(self, sql: str, *params: Any) -> list[sqlite3.Row]:
        conn = sqlite3.connect(self.db_path, timeout=30)
        conn.row_factory = sqlite3.Row
        try:
            return list(conn.execute(sql, params))
        finally:
            conn.close()

    def delivery(self, task_id: int) -> sqlite3.Row:
        rows = self.rows("SELECT * FROM deliveries WHERE task_id = ?", task_id)
        assert len(rows) == 1, [tuple(r) for r in rows]
        return rows[0]

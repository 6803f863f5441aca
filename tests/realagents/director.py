"""A real coding agent as the Director, started and driven as a user does.

The user sets CAFleet up once (`cafleet setup`), gives the agent the least it needs to run
`cafleet` (docs/agents.md, "The Director as a coding agent"), starts the agent in a
pane of the private tmux server and types prompts into it. The scripted model server turns
each prompt into tool calls (`RUN: <cmd>` lines, see model_server.py), so the agent runs
`cafleet` through its own shell tool, with its own permission checks and sandbox.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cafleet.domain.agents.registry import PROFILES
from cafleet.domain.message import MessageState
from cafleet.domain.placement import CodingAgent
from realagents.fleet import Fleet
from realagents.model_server import ScriptedModelServer

START_TIMEOUT = 60.0
TURN_TIMEOUT = 90.0
# what the user exported before starting the agent; the agents override these for their
# tools, and a member must get them back as the user had them (or not at all)
USER_EXPORTS = {"PAGER": "less", "GIT_PAGER": "less -R", "GIT_EDITOR": "vi"}
# the agent's composer once it is up
COMPOSERS = {"claude": r"❯", "codex": r"›", "opencode": r"┃"}


def allow_cafleet_for_claude(home: Path) -> None:
    """The allow rule a Claude Code Director needs: `permissions.allow` in the user's
    settings (what `cafleet setup` tells the user to add)."""
    settings = home / ".claude" / "settings.json"
    current = json.loads(settings.read_text()) if settings.exists() else {}
    allow = current.setdefault("permissions", {}).setdefault("allow", [])
    allow.append("Bash(cafleet:*)")
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps(current, indent=2))


def grant_codex_sandbox(codex_home: Path, database_dir: Path) -> None:
    """What a Codex Director's default sandbox (workspace-write) needs to run `cafleet`: the
    tmux socket (a Unix socket: `network_access`) and the database's directory, in the
    user's config.toml."""
    config = codex_home / "config.toml"
    config.write_text(
        config.read_text()
        + "\n[sandbox_workspace_write]\nnetwork_access = true\n"
        + f"writable_roots = [{json.dumps(str(database_dir))}]\n"
    )


def login_profile(home: Path, path: str) -> None:
    """The user's ~/.profile puts the directories `cafleet` and the agents live in on PATH
    (Codex runs its tools in a login shell, which resets PATH)."""
    (home / ".profile").write_text(f'export PATH="{path}"\n')


@dataclass
class Director:
    """The agent in its pane, and a Fleet view of the store (read as a user would)."""

    agent: str
    tmux: Any  # conftest's AgentTmux
    pane: str
    server: ScriptedModelServer
    fleet: Fleet
    # the model server serves the whole test session (message ids restart in each fleet):
    # only the calls made from this Director's start on are its own
    first_request: int = 0

    @property
    def pid(self) -> int:
        return int(self.tmux.run("display-message", "-p", "-t", self.pane, "#{pane_pid}"))

    def started_with(self) -> dict[str, str]:
        """The environment the agent itself was started with."""
        return environ(self.pid)

    def screen(self) -> str:
        return str(self.tmux.capture(self.pane))

    def wait_ready(self) -> None:
        """Until the agent shows its composer (nothing typed before it would be lost)."""
        self.tmux.wait_for_screen(self.pane, COMPOSERS[self.agent], START_TIMEOUT)
        time.sleep(2)  # the TUI draws its composer a moment before it takes keys

    def say(self, text: str) -> int:
        """Paste a prompt and submit it; the model server's request count before it. (Keys
        typed in a quick run look like a paste to Codex, which then took the Enter for a line
        break.) While the composer still holds the text, Enter is pressed again."""
        since = len(self.server.requests)
        self.tmux.paste(self.pane, text)
        time.sleep(0.3)
        self.tmux.run("send-keys", "-t", self.pane, "Enter")
        profile = PROFILES[CodingAgent(self.agent)]
        for _ in range(3):
            time.sleep(1.0)
            if not profile.composer_holds(self.screen(), text):
                break
            self.tmux.run("send-keys", "-t", self.pane, "Enter")
        return since

    def run(self, command: str, timeout: float = TURN_TIMEOUT) -> str:
        """Have the agent run `command` with its shell tool; its output, as the model saw it."""
        since = self.say(f"RUN: {command}")
        return self.output_of(command, since, timeout)

    def output_of(self, command: str, since: int, timeout: float = TURN_TIMEOUT) -> str:
        """The output of the tool call running `command`, once it ended (Codex hands a long
        command's output over in parts)."""
        deadline = time.monotonic() + timeout
        while True:
            parts = [
                item
                for record in self.server.model_requests(since)
                for item in record["new"]
                if item["kind"] == "tool" and item["command"] == command
            ]
            if parts and parts[-1].get("running") is None:
                return "".join(str(part["text"]) for part in parts)
            if time.monotonic() > deadline:
                raise AssertionError(f"no output of {command!r} in {timeout}s:\n{self.screen()}")
            time.sleep(0.3)

    def create_fleet(self) -> None:
        """The Director creates the fleet from its own pane; the ids it printed are noted in
        the conversation, as an agent keeps them, so later previews are polled for."""
        coding = "" if self.agent == "claude" else f" --coding-agent {self.agent}"
        out = self.run(f"cafleet fleet create --name real{coding}")
        found = re.search(r"(\d+) director=(\d+)", out)
        assert found is not None, out
        self.fleet.fleet_id, self.fleet.director = int(found.group(1)), int(found.group(2))
        self.note(f"FLEET ID: {self.fleet.fleet_id}. YOUR MEMBER ID: {self.fleet.director}.")

    def note(self, text: str) -> None:
        """A line the model only acknowledges (FAKE-DONE)."""
        since = self.say(text)
        self.server.wait_for(lambda r: r["decision"]["rule"] == "done", TURN_TIMEOUT, since)

    def create_member(
        self, agent: str, name: str, *options: str, then: str = "Wait for messages."
    ) -> tuple[int, str]:
        """`member create` run by the Director's own tool; (member id, pane). `then` ends
        the spawn prompt (`RUN: ...` makes the member run it at once)."""
        prompt = (
            f"You are {name}. FLEET ID: {{fleet_id}}. YOUR MEMBER ID: {{agent_id}}."
            f" DIRECTOR ID: {{director_agent_id}}. {then}"
        )
        command = " ".join(
            (
                f"cafleet member create --fleet-id {self.fleet.fleet_id} --agent-id"
                f" {self.fleet.director} --name {name} --description '{agent} member'"
                f" --coding-agent {agent}",
                *options,
                f"--text '{prompt}'",
            )
        )
        out = self.run(command, timeout=TURN_TIMEOUT + 120)
        found = re.search(r"^(\d+) \S+ coding_agent=\S+ pane=(%\d+)", out, re.M)
        assert found is not None, f"{out}\n{self.screen()}"
        self.fleet.members.append(int(found.group(1)))
        return int(found.group(1)), found.group(2)

    def previews_seen(self, task_id: int, since: int = 0) -> int:
        """How many user texts the model got carrying the preview of message `task_id`,
        since request `since` (at the earliest, this Director's start)."""
        header = re.compile(rf"\[cafleet msg {task_id} from \d+")
        return sum(
            len(header.findall(item["text"]))
            for record in self.server.model_requests(max(since, self.first_request))
            for item in record["new"]
            if item["kind"] == "user"
        )

    def wait_polled(self, task_id: int, timeout: float = TURN_TIMEOUT) -> None:
        """Until the Director's poll (run after the preview) acknowledged the message."""
        deadline = time.monotonic() + timeout
        while not any(
            m.task_id == task_id and m.state is MessageState.COMPLETED
            for m in self.fleet.timeline()
        ):
            assert time.monotonic() < deadline, f"{task_id} never acked:\n{self.screen()}"
            time.sleep(0.5)


# set by the shell or the pane itself, whoever starts it
NOT_SESSION = {"SHLVL", "_", "PWD", "OLDPWD", "TERM", "TMUX", "TMUX_PANE"}


def tool_environment(director: Director, program: str, timeout: float = 30) -> dict[str, str]:
    """The environment of `program` run by the Director's shell tool, read from /proc
    while it runs."""
    deadline = time.monotonic() + timeout
    while True:
        for pid in descendants(director.pid):
            try:
                argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
                if argv[0].decode().rpartition("/")[2] == program:
                    return environ(pid)
            except OSError:
                continue
        assert time.monotonic() < deadline, f"no {program} under the Director"
        time.sleep(0.2)


def environ(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes()
    pairs = (entry.decode(errors="replace").partition("=") for entry in raw.split(b"\0"))
    return {name: value for name, sep, value in pairs if sep}


def parents() -> dict[int, int]:
    """pid -> parent pid of every process."""
    found = {}
    for entry in Path("/proc").iterdir():
        try:
            fields = (entry / "stat").read_text().rpartition(")")[2].split()
        except (OSError, NotADirectoryError):
            continue
        if entry.name.isdigit():
            found[int(entry.name)] = int(fields[1])
    return found


def descendants(pid: int) -> list[int]:
    """Every process below `pid`, nearest first."""
    children: dict[int, list[int]] = {}
    for child, parent in parents().items():
        children.setdefault(parent, []).append(child)
    found, todo = [], list(children.get(pid, []))
    while todo:
        found.append(todo.pop(0))
        todo.extend(children.get(found[-1], []))
    return found


def agent_process(pane_pid: int) -> int:
    """A member's agent: the child CAFleet's launcher (the pane's process) started."""
    below = [child for child, parent in parents().items() if parent == pane_pid]
    assert below, f"no agent process under the launcher {pane_pid}"
    return below[0]

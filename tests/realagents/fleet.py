"""A Director's view of a fleet of real-agent members: the `cafleet` CLI run as a user runs
it, and the store read as the WebUI reads it."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cafleet.application.monitoring.service import TickReport
from cafleet.composition import Components
from cafleet.domain.message import Message
from cafleet.settings import Settings

AGENTS = ("claude", "codex", "opencode")
PROMPT = (
    "You are {name}. FLEET ID: {{fleet_id}}. YOUR MEMBER ID: {{agent_id}}."
    " DIRECTOR ID: {{director_agent_id}}. Wait for messages."
)
REPLY_TIMEOUT = 90.0  # opencode needs 10-15 s for a turn on two busy cores
# dontAsk with CAFleet's rule runs `cafleet` only; the busy tests also need `sleep`, which a
# user adds with the documented override.
CLAUDE_EXTRA = "--allowedTools Bash(sleep:*)"


@dataclass
class Fleet:
    tmux: Any
    env: dict[str, str]
    workdir: Path
    fleet_id: int = 0
    director: int = 0
    members: list[int] = field(default_factory=list)

    def cli(
        self, *args: str, check: bool = True, timeout: float = 180, cwd: Path | None = None
    ) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "cafleet", *args],
            env=self.env,
            cwd=cwd or self.workdir,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if check and done.returncode != 0:
            raise AssertionError(f"cafleet {' '.join(args)} failed: {done.stderr}{done.stdout}")
        return done.stdout if check else done.stdout + done.stderr

    def json(self, *args: str) -> Any:
        return json.loads(self.cli("--json", *args))

    def create_member(self, agent: str, name: str, prompt: str | None = None) -> tuple[int, str]:
        out = self.cli(
            "member", "create", "--fleet-id", str(self.fleet_id), "--agent-id",
            str(self.director), "--name", name, "--description", f"{agent} member",
            "--coding-agent", agent, "--text", prompt or PROMPT.format(name=name),
        )  # fmt: skip
        agent_id, _, _, pane = out.split()
        self.members.append(int(agent_id))
        return int(agent_id), pane.removeprefix("pane=")

    def send(self, to: int, text: str) -> str:
        return self.cli(
            "message", "send", "--fleet-id", str(self.fleet_id), "--agent-id",
            str(self.director), "--to", str(to), "--text", text,
        )  # fmt: skip

    def send_task(self, to: int, text: str) -> int:
        """Send, and the new message's task id."""
        out = self.send(to, text)
        found = re.search(r"^\[(\d+) \|", out, re.M)
        assert found is not None, out
        return int(found.group(1))

    def components(self) -> Components:
        """The services over this fleet's store, as the CLI composes them."""
        return Components(Settings.from_environ(self.env), self.env)

    def tick_monitor(self) -> TickReport:
        """One tick of the fleet's monitor, as `cafleet monitor start` runs it."""
        monitor = self.components().monitoring
        monitor.claim(self.fleet_id, 5)
        try:
            return monitor.tick(self.fleet_id)
        finally:
            monitor.release(self.fleet_id)

    def timeline(self) -> list[Message]:
        """The fleet's whole history, read from the store as a WebUI would."""
        return self.components().messaging.timeline(self.fleet_id)

    def texts_to(self, agent_id: int) -> list[str]:
        return [m.text for m in self.timeline() if m.to_agent_id == agent_id]

    def texts_to_director(self) -> list[str]:
        return self.texts_to(self.director)

    def wait_for_texts(self, wanted: set[str], timeout: float = REPLY_TIMEOUT) -> list[str]:
        deadline = time.monotonic() + timeout
        while True:
            texts = self.texts_to_director()
            if wanted <= set(texts):
                return texts
            if time.monotonic() > deadline:
                panes = "\n\n".join(self.tmux.capture(p) for p in self.tmux.panes())
                raise AssertionError(f"missing {sorted(wanted - set(texts))}; got {texts}\n{panes}")
            time.sleep(0.5)

    def ledger(self, task_id: int) -> list[dict[str, Any]]:
        """Every ledger row of the message, in order, as `message show --full` gives it."""
        shown = self.json(
            "message", "show", "--fleet-id", str(self.fleet_id), "--agent-id",
            str(self.director), "--task-id", str(task_id), "--full",
        )  # fmt: skip
        return list(shown["deliveries"])

    def attempts(self, task_id: int) -> list[tuple[str | None, str]]:
        """(channel, state) of every ledger row of the message, in order."""
        return [(d["channel"], d["state"]) for d in self.ledger(task_id)]

    def wait_confirmed(self, task_id: int, timeout: float = 20.0) -> str:
        """When the member's agent said it took the message in (its sent attempt)."""
        deadline = time.monotonic() + timeout
        while True:
            sent = [d for d in self.ledger(task_id) if d["state"] == "sent"]
            if sent and sent[-1]["confirmed_at"]:
                return str(sent[-1]["confirmed_at"])
            if time.monotonic() > deadline:
                recipient = sent[-1]["recipient_agent_id"] if sent else None
                raise AssertionError(
                    f"no receipt for {task_id}: {sent}\n{self.hook_record(recipient)}"
                )
            time.sleep(0.3)

    def hook_record(self, member: int | None) -> str:
        """What the member's hooks recorded (Claude Code's prompt hook names the previews
        its prompts carried), for a failure to show."""
        with self.components().uow()() as uow:
            placement = None if member is None else uow.placements.get(member)
        pad = None if placement is None else placement.launch_pad
        events = None if pad is None else Path(pad) / "events"
        if events is None or not events.exists():
            return "(no hook record)"
        return f"hook record:\n{events.read_text()}"

    def announced_once(self, task_id: int) -> str | None:
        """The channel that delivered the message, asserting that exactly one did and that
        it was the last attempt."""
        tried = self.attempts(task_id)
        sent = [channel for channel, state in tried if state == "sent"]
        assert len(sent) == 1 and tried[-1][1] == "sent", tried
        return sent[0]

    def announced_or_joined(self, task_id: int) -> str:
        """How the recipient learned of the message: the one channel that delivered it, or
        `joined:<task>` when it joined the announcement of an earlier unread message that
        its agent had not taken in yet (then nothing announced it on its own)."""
        tried = self.ledger(task_id)
        if any(row["state"] == "sent" for row in tried):
            return str(self.announced_once(task_id))
        last = tried[-1]
        assert last["state"] == "skipped" and (last["error"] or "").startswith("joined:"), tried
        joined = int(last["error"].removeprefix("joined:"))
        assert self.announced_once(joined), tried  # what it joined was announced itself
        return str(last["error"])

    def member_status(self, member: int) -> str:
        rows = self.json("member", "list", "--fleet-id", str(self.fleet_id))
        return next(str(r["agent_status"]) for r in rows if r["agent_id"] == member)

    def wait_for_status(self, member: int, wanted: str, timeout: float = 90.0) -> None:
        deadline = time.monotonic() + timeout
        while (seen := self.member_status(member)) != wanted:
            assert time.monotonic() < deadline, f"member {member} stayed {seen}, not {wanted}"
            time.sleep(0.3)

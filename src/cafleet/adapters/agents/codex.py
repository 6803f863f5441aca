"""Codex's conversations as Codex records them, and `codex queue` (the CodexThreads port).

Codex (0.171) writes each conversation to `<CODEX_HOME>/sessions/YYYY/MM/DD/rollout-*.jsonl`:
a `session_meta` line with the thread id and working directory, then one JSON line per event:
`response_item` messages (the user's first one is the prompt it started with) and
`event_msg` lines whose `payload.type` is `task_started` / `task_complete` /
`turn_aborted` around each turn. `codex queue --thread <id> --message <text>` hands a message
to that conversation's running TUI: at once when it is idle, after the turn when it is busy.
"""

from __future__ import annotations

import json
import os
import subprocess
from datetime import datetime
from pathlib import Path
from typing import Any

from cafleet.application.ports.agents import AgentThread, CodexThreads
from cafleet.domain.agents.status import AgentStatus, StatusReport
from cafleet.domain.preview import previewed_tasks

HEAD_LINES = 200  # the prompt comes within the first few dozen lines
TAIL_BYTES = 256 * 1024
QUEUE_TIMEOUT_SECONDS = 15
TURN_EVENTS = {
    "task_started": AgentStatus.WORKING,
    "task_complete": AgentStatus.IDLE,
    "turn_aborted": AgentStatus.IDLE,
}


class CodexRollouts(CodexThreads):
    def find(self, home: str, cwd: str, prompt: str, since: datetime) -> AgentThread | None:
        found = []
        for path in Path(home, "sessions").glob("*/*/*/rollout-*.jsonl"):
            try:
                if path.stat().st_mtime < since.timestamp() - 5:
                    continue
            except OSError:
                continue
            started = _started_with(path)
            if started is not None and started[1:] == (cwd, prompt):
                found.append(AgentThread(started[0], str(path)))
        return found[0] if len(found) == 1 else None

    def queue(self, binary: str, home: str, thread_id: str, text: str) -> bool:
        try:
            done = subprocess.run(
                [binary, "queue", "--thread", thread_id, "--message", text],
                env={**os.environ, "CODEX_HOME": home},
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=QUEUE_TIMEOUT_SECONDS,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired):
            return False
        return done.returncode == 0 and b"Queued message" in done.stdout

    def status(self, transcript: str) -> StatusReport | None:
        lines = _tail(transcript)
        if lines is None:
            return None
        for line in reversed(lines):
            event = _json(line)
            payload = event.get("payload")
            kind = payload.get("type") if isinstance(payload, dict) else None
            if event.get("type") == "event_msg" and kind in TURN_EVENTS:
                return StatusReport(TURN_EVENTS[kind], _when(event.get("timestamp")))
        return None

    def taken(self, transcript: str) -> dict[int, datetime]:
        taken: dict[int, datetime] = {}
        for line in _tail(transcript) or []:
            event = _json(line)
            payload = event.get("payload")
            text = _user_text(payload) if isinstance(payload, dict) else None
            when = _when(event.get("timestamp"))
            if event.get("type") == "response_item" and text and when is not None:
                for task in previewed_tasks(text):
                    taken.setdefault(task, when)
        return taken


def _tail(transcript: str) -> list[str] | None:
    """The last lines of a transcript (a partial first line does not parse, so it is
    skipped); None when it cannot be read."""
    try:
        with open(transcript, "rb") as handle:
            handle.seek(max(0, os.fstat(handle.fileno()).st_size - TAIL_BYTES))
            return handle.read().decode("utf-8", "replace").splitlines()
    except OSError:
        return None


def _started_with(path: Path) -> tuple[str, str, str] | None:
    """(thread id, working directory, first user message) of a rollout file."""
    thread = cwd = None
    try:
        with path.open(encoding="utf-8", errors="replace") as handle:
            for _, line in zip(range(HEAD_LINES), handle, strict=False):
                event = _json(line)
                payload = event.get("payload")
                if not isinstance(payload, dict):
                    continue
                if event.get("type") == "session_meta":
                    thread, cwd = payload.get("id"), payload.get("cwd")
                text = _user_text(payload) if event.get("type") == "response_item" else None
                if text is not None and isinstance(thread, str) and isinstance(cwd, str):
                    return thread, cwd, text
    except OSError:
        return None
    return None


def _user_text(payload: dict[str, Any]) -> str | None:
    """The text of a user message, unless it is the context Codex adds itself."""
    if payload.get("type") != "message" or payload.get("role") != "user":
        return None
    parts = payload.get("content")
    texts = [p.get("text") for p in parts if isinstance(p, dict)] if isinstance(parts, list) else []
    text = "".join(t for t in texts if isinstance(t, str))
    return None if text.lstrip().startswith("<") else text  # <environment_context> and kin


def _json(line: str) -> dict[str, Any]:
    try:
        value = json.loads(line)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _when(stamp: object) -> datetime | None:
    if not isinstance(stamp, str):
        return None
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None

"""What CAFleet knows of a coding agent's own HTTP server (OpenCode's): where to ask whether
a session is busy or asks a person, where to post a prompt or a shell command, and how to
read the session listings it answers."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime

from cafleet.domain.agents.status import AgentStatus
from cafleet.domain.preview import previewed_tasks

SESSION_CLOCK_SLACK_SECONDS = 5.0  # a session found later started at most this much before


def _session_messages(answer: str | None) -> list[tuple[str, float, str]]:
    """(role, creation time in ms, text) of each message of an opencode session listing."""
    try:
        listed = json.loads(answer) if answer else []
    except ValueError:
        return []
    facts = [_message_facts(m) for m in listed] if isinstance(listed, list) else []
    return [(role, created, text) for role, created, text in facts if created is not None]


def _message_facts(message: object) -> tuple[str, float | None, str]:
    """(role, creation time in ms, text) of one message of an opencode session listing."""
    info = message.get("info") if isinstance(message, dict) else None
    parts = message.get("parts") if isinstance(message, dict) else None
    if not isinstance(info, dict):
        return "", None, ""
    times = info.get("time")
    created = times.get("created") if isinstance(times, dict) else None
    texts = [p.get("text") for p in parts if isinstance(p, dict)] if isinstance(parts, list) else []
    text = "".join(t for t in texts if isinstance(t, str))
    number = float(created) if isinstance(created, int | float) else None
    return str(info.get("role", "")), number, text


@dataclass(frozen=True)
class HttpFacts:
    """How to ask an agent's own HTTP server whether it took a prompt, and how to post one."""

    password_variable: str  # the agent protects its server with this variable's value
    user: str
    status_path: str  # answers a JSON object with an entry per busy session of this process
    prompt_path: str  # `{session}` is replaced; queues the prompt when the session is busy
    agent: str  # the agent preset every prompt runs under
    permission_path: str  # answers a JSON list of the permission requests awaiting a person
    # `{session}` is replaced; answers the session's newest messages, oldest first
    messages_path: str = "/session/{session}/message?limit=40"
    # answers the sessions of the server's project that no other session started
    sessions_path: str = "/session?roots=true"
    history_path: str = "/session/{session}/message"  # all its messages, oldest first
    # `{session}` is replaced; runs a shell command in the session (what the TUI's own shell
    # mode does), answering when it ends, or `busy_status` at once while a turn runs
    shell_path: str | None = None
    busy_status: int = 409

    def listed(self, answer: str | None) -> set[int]:
        """The CAFleet messages a user prompt of the session carries (queued ones too)."""
        return {
            task
            for role, _, text in _session_messages(answer)
            if role == "user"
            for task in previewed_tasks(text)
        }

    def taken(self, answer: str | None) -> dict[int, datetime]:
        """The CAFleet messages a user prompt of the session carried whose turn has begun:
        a prompt is listed at once, even while queued behind a running step, so it counts as
        taken when an answer of the model started after it. The time is that answer's."""
        prompts: list[tuple[float, list[int]]] = []
        taken: dict[int, datetime] = {}
        for role, created, text in _session_messages(answer):
            if role == "user" and (tasks := previewed_tasks(text)):
                prompts.append((created, tasks))
            elif role == "assistant":
                for task in (t for at, tasks in prompts if at <= created for t in tasks):
                    taken.setdefault(task, datetime.fromtimestamp(created / 1000, UTC))
                prompts = [(at, tasks) for at, tasks in prompts if at > created]
        return taken

    @staticmethod
    def sessions_since(answer: str | None, directory: str, since: datetime) -> tuple[str, ...]:
        """The sessions a listing shows started in `directory` at or after `since`, oldest
        first (the server lists every session of its project, other processes' too)."""
        try:
            listed = json.loads(answer) if answer else []
        except ValueError:
            return ()
        found = []
        for entry in listed if isinstance(listed, list) else []:
            info = entry if isinstance(entry, dict) else {}
            times = info.get("time")
            created = times.get("created") if isinstance(times, dict) else None
            if (
                info.get("directory") == directory
                and isinstance(info.get("id"), str)
                and isinstance(created, int | float)
                and created >= (since.timestamp() - SESSION_CLOCK_SLACK_SECONDS) * 1000
            ):
                found.append((float(created), str(info["id"])))
        return tuple(session for _, session in sorted(found))

    @staticmethod
    def begun_with(answer: str | None, prompt: str) -> bool:
        """Whether a session's history (all its messages) begins with a user message that
        carries `prompt` (its text, and whatever parts OpenCode adds to it)."""
        users = [text for role, _, text in _session_messages(answer) if role == "user"]
        return bool(users) and users[0].strip().startswith(prompt.strip())

    def prompt_taken(self, answer: str | None) -> bool:
        return bool(self.busy_sessions(answer))

    @staticmethod
    def busy_sessions(answer: str | None) -> tuple[str, ...]:
        try:
            sessions = json.loads(answer) if answer else None
        except ValueError:
            return ()
        return tuple(str(s) for s in sessions) if isinstance(sessions, dict) else ()

    def status(self, session: str, busy: str | None, asking: str | None) -> AgentStatus | None:
        """The session's status from the status and permission answers; None when the
        server did not answer."""
        if busy is None:
            return None
        try:
            requests = json.loads(asking) if asking else []
        except ValueError:
            requests = []
        if isinstance(requests, list) and requests:
            return AgentStatus.WAITING
        return AgentStatus.WORKING if session in self.busy_sessions(busy) else AgentStatus.IDLE

    def prompt(self, session: str, text: str) -> tuple[str, dict[str, object]]:
        """The path and JSON body that hand `text` to `session` as a user prompt."""
        body: dict[str, object] = {"agent": self.agent, "parts": [{"type": "text", "text": text}]}
        return self.prompt_path.format(session=session), body

    def shell(self, session: str, command: str) -> tuple[str, dict[str, object]] | None:
        """The path and JSON body that run `command` in `session`; None where the server
        has no such route."""
        if self.shell_path is None:
            return None
        return self.shell_path.format(session=session), {"agent": self.agent, "command": command}

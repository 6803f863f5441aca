"""What a member's agent is doing, as the agent itself (or its pane) says."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum


class AgentStatus(StrEnum):
    STARTING = "starting"  # the pane is up; the agent has not taken its spawn prompt
    WORKING = "working"  # in a turn
    IDLE = "idle"  # waiting for a prompt
    WAITING = "waiting"  # waiting for a person: a permission request or a question
    EXITED = "exited"  # the agent ended (or its pane is gone)
    UNKNOWN = "unknown"  # no source says


# herdr's `agent_status` of a pane (idle, working, blocked, done, unknown) in these words;
# `done` is an idle agent whose finished turn nobody has looked at yet
_DETECTED = {
    "working": AgentStatus.WORKING,
    "blocked": AgentStatus.WAITING,
    "idle": AgentStatus.IDLE,
    "done": AgentStatus.IDLE,
}


def detected_status(state: str | None) -> AgentStatus | None:
    """What the multiplexer's detected state says, None when it does not tell."""
    return None if state is None else _DETECTED.get(state)


@dataclass(frozen=True)
class HookEvent:
    """One line of a member's event file: what a hook reported, and when."""

    name: str  # e.g. `prompt`, `idle`, `waiting:permission_prompt`, `handed:12,13`
    at: datetime

    @property
    def kind(self) -> str:
        return self.name.split(":", 1)[0]

    @property
    def detail(self) -> str:
        return self.name.partition(":")[2]


@dataclass(frozen=True)
class StatusReport:
    status: AgentStatus
    since: datetime | None = None
    note: str | None = None  # why nothing tells, where that is known (`hooks off`)

    @staticmethod
    def unknown() -> StatusReport:
        return StatusReport(AgentStatus.UNKNOWN)

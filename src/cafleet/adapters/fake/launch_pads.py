"""In-memory launch pads: the launcher is transparent (the pane runs the agent's argv) and
what the launcher and hooks would report is set by the test."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from cafleet.application.ports import HttpEndpoint, LauncherStatus, LaunchPad, LaunchPads


@dataclass
class FakeLaunchPad(LaunchPad):
    fleet_id: int
    agent_id: int
    argv: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    cwd: str = ""
    files: dict[str, str] = field(default_factory=dict)
    reported: list[str] = field(default_factory=list)  # hook events, as the agent sends them
    launcher_status: LauncherStatus = field(default_factory=lambda: LauncherStatus(pid=1))
    ready: bool = False
    discarded: bool = False
    answers: dict[str, str] = field(default_factory=dict)  # path -> body of the agent's server
    served: HttpEndpoint | None = None

    def launcher(self, argv: Sequence[str], env: Mapping[str, str], cwd: str) -> list[str]:
        self.argv, self.env, self.cwd = list(argv), dict(env), cwd
        return list(argv)

    def write(self, name: str, text: str) -> str:
        self.files[name] = text
        return f"/pads/{self.fleet_id}-{self.agent_id}/{name}"

    def event_recorder(self) -> list[str]:
        return ["record-event", f"/pads/{self.fleet_id}-{self.agent_id}/events"]

    def endpoint(self) -> HttpEndpoint:
        self.served = HttpEndpoint(4242, "fake-password")
        return self.served

    def get(self, path: str, user: str) -> str | None:
        return self.answers.get(path) if self.served else None

    def status(self) -> LauncherStatus:
        return self.launcher_status

    def events(self) -> tuple[str, ...]:
        return tuple(self.reported)

    def mark_ready(self) -> None:
        self.ready = True

    def discard(self) -> None:
        self.discarded = True


class FakeLaunchPads(LaunchPads):
    def __init__(self) -> None:
        self.pads: list[FakeLaunchPad] = []

    def prepare(self, fleet_id: int, agent_id: int) -> FakeLaunchPad:
        pad = FakeLaunchPad(fleet_id, agent_id)
        self.pads.append(pad)
        return pad

    def for_agent(self, agent_id: int) -> FakeLaunchPad:
        return next(p for p in reversed(self.pads) if p.agent_id == agent_id)

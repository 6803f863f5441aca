"""In-memory launch pads: the launcher is transparent (the pane runs the agent's argv) and
what the launcher and hooks would report is set by the test."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from cafleet.application.ports.agents import HttpEndpoint, LauncherStatus, LaunchPad, LaunchPads
from cafleet.domain.agents.status import HookEvent

EPOCH = datetime(2026, 1, 1, tzinfo=UTC)


@dataclass
class FakeLaunchPad(LaunchPad):
    fleet_id: int
    agent_id: int
    argv: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    cwd: str = ""
    files: dict[str, str] = field(default_factory=dict)
    # hook events as the agent sends them (a bare name is stamped EPOCH)
    reported: list[str | HookEvent] = field(default_factory=list)
    launcher_status: LauncherStatus = field(default_factory=lambda: LauncherStatus(pid=1))
    ready: bool = False
    discarded: bool = False
    answers: dict[str, str] = field(default_factory=dict)  # path -> body of the agent's server
    served: HttpEndpoint | None = None
    # path -> status of a POST; a list answers one POST each, its last status from then on
    post_statuses: dict[str, int | list[int]] = field(default_factory=dict)
    posted: list[tuple[str, dict[str, object]]] = field(default_factory=list)
    waiter: bool = False  # a hook waits for mail; it takes each message at `takes_at`
    takes_at: datetime | None = EPOCH
    mail: dict[int, str] = field(default_factory=dict)  # posted, not taken
    taken: dict[int, tuple[str, datetime]] = field(default_factory=dict)
    withdrawn: list[int] = field(default_factory=list)

    @property
    def location(self) -> str:
        return f"/pads/{self.fleet_id}-{self.agent_id}"

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

    def post(
        self, path: str, user: str, payload: Mapping[str, object], timeout: float | None = None
    ) -> int | None:
        if not self.served or path not in self.post_statuses:
            return None
        self.posted.append((path, dict(payload)))
        status = self.post_statuses[path]
        if isinstance(status, int):
            return status
        return status.pop(0) if len(status) > 1 else status[0]

    def read(self, name: str) -> str | None:
        return self.files.get(name)

    def mail_waiter(self) -> list[str]:
        return ["wait-for-mail", self.location]

    def mail_waiting(self) -> bool:
        return self.waiter

    def post_mail(self, task_id: int, text: str) -> None:
        if self.waiter and self.takes_at is not None:
            self.taken[task_id] = (text, self.takes_at)
        else:
            self.mail[task_id] = text

    def mail_taken_at(self, task_id: int) -> datetime | None:
        return self.taken[task_id][1] if task_id in self.taken else None

    def withdraw_mail(self, task_id: int) -> bool:
        if self.mail.pop(task_id, None) is None:
            return False
        self.withdrawn.append(task_id)
        return True

    def status(self) -> LauncherStatus:
        return self.launcher_status

    def events(self) -> tuple[HookEvent, ...]:
        return tuple(e if isinstance(e, HookEvent) else HookEvent(e, EPOCH) for e in self.reported)

    def remember(self, name: str, text: str) -> None:
        self.files[name] = text

    def mark_ready(self) -> None:
        self.ready = True

    def discard(self) -> None:
        self.discarded = True


class FakeLaunchPads(LaunchPads):
    runtime = "/fake/runtime"

    def __init__(self) -> None:
        self.pads: list[FakeLaunchPad] = []

    def prepare(self, fleet_id: int, agent_id: int) -> FakeLaunchPad:
        pad = FakeLaunchPad(fleet_id, agent_id)
        self.pads.append(pad)
        return pad

    def reopen(self, location: str) -> FakeLaunchPad | None:
        return next((p for p in self.pads if p.location == location and not p.discarded), None)

    def for_agent(self, agent_id: int) -> FakeLaunchPad:
        return next(p for p in reversed(self.pads) if p.agent_id == agent_id)

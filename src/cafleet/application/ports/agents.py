"""The coding agents' side: a member's launch pad, the agents' own programs and files."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Protocol

from cafleet.domain.agents.status import HookEvent, StatusReport
from cafleet.domain.skills import SkillHome, SkillsCopied


@dataclass(frozen=True)
class LauncherStatus:
    """What a member's launcher recorded: not started yet, running, or exited with a code."""

    pid: int | None = None
    exit_code: int | None = None

    @property
    def exited(self) -> bool:
        return self.exit_code is not None


@dataclass(frozen=True)
class HttpEndpoint:
    """A loopback port and password for an agent's own HTTP server."""

    port: int
    password: str


class LaunchPad(Protocol):
    """One member's private directory: its launch file, hook files, its mailbox, and what
    the launcher and the agent itself (hooks, its HTTP server) report."""

    @property
    def location(self) -> str:
        """Where the pad is; recorded in the placement so later commands can reopen it."""
        ...

    def launcher(self, argv: Sequence[str], env: Mapping[str, str], cwd: str) -> list[str]:
        """Write the launch file (mode 0600); the argv that starts the launcher on it."""
        ...

    def write(self, name: str, text: str) -> str:
        """A private file in the pad; its path."""
        ...

    def event_recorder(self) -> list[str]:
        """The argv a hook runs, plus an event name, to record that event."""
        ...

    def endpoint(self) -> HttpEndpoint:
        """Reserve a free loopback port and a password for the agent's server."""
        ...

    def get(self, path: str, user: str) -> str | None:
        """GET `path` from the reserved endpoint with basic auth; None when it does not
        answer (yet)."""
        ...

    def post(
        self, path: str, user: str, payload: Mapping[str, object], timeout: float | None = None
    ) -> int | None:
        """POST JSON to the reserved endpoint; the HTTP status, or None when it does not
        answer within `timeout` seconds (None: the pad's own wait for a prompt to land)."""
        ...

    def read(self, name: str) -> str | None:
        """A file of the pad (see `write`), or None when it is not there."""
        ...

    def mail_waiter(self) -> list[str]:
        """The argv of a hook that waits for this member's mail and hands it over."""
        ...

    def mail_waiting(self) -> bool:
        """Whether such a hook is waiting now."""
        ...

    def post_mail(self, task_id: int, text: str) -> None: ...
    def mail_taken_at(self, task_id: int) -> datetime | None:
        """When the waiting hook took the message, or None while it has not."""
        ...

    def withdraw_mail(self, task_id: int) -> bool:
        """Take an untaken message back; False when the hook had taken it first."""
        ...

    def status(self) -> LauncherStatus: ...
    def events(self) -> tuple[HookEvent, ...]:
        """What the agent's hooks recorded, oldest first."""
        ...

    def remember(self, name: str, text: str) -> None:
        """Write (or replace) a small private note in the pad; best effort."""
        ...

    def mark_ready(self) -> None:
        """From now on the launcher just ends with its agent."""
        ...

    def discard(self) -> None:
        """Remove the pad (a launcher holding a failed pane open then lets it close)."""
        ...


class LaunchPads(Protocol):
    @property
    def runtime(self) -> str:
        """The directory the pads live in, beside the send locks: a member whose tools run
        in a sandbox must be able to write there to message and spawn."""
        ...

    def prepare(self, fleet_id: int, agent_id: int) -> LaunchPad: ...
    def reopen(self, location: str) -> LaunchPad | None:
        """The pad of a running member, or None when it is gone."""
        ...


class Programs(Protocol):
    """Where executables live, for launching agents by absolute path."""

    def which(self, name: str) -> str | None: ...
    def first_line(self, path: str) -> str | None:
        """The first line of a file (to read a script's #! interpreter), None if unreadable."""
        ...


class AgentStarts(Protocol):
    """How the agent this process runs under (as one of its tools) was started."""

    def environment(self, markers: Collection[str]) -> Mapping[str, str] | None:
        """The start environment of the nearest ancestor process whose own start holds none
        of `markers` (the agent that sets them for its tools); None when the ancestors
        cannot be read (a sandbox with its own process namespace)."""
        ...


class SkillInstaller(Protocol):
    """Copies the bundled skills into coding-agent homes."""

    def detected_homes(self) -> list[SkillHome]:
        """Coding agents whose home directory exists, in detection order."""
        ...

    def skills_dir(self, home: SkillHome) -> Path: ...
    def install(self, home: SkillHome) -> SkillsCopied:
        """Write each bundled skill's files into the home's skills directory, removing only
        files an earlier install wrote; files of the user's are kept and listed."""
        ...


@dataclass(frozen=True)
class AgentThread:
    """One Codex conversation: its id and the transcript file Codex writes for it."""

    thread_id: str
    transcript: str


class CodexThreads(Protocol):
    """Codex's own record of its conversations, and its way to queue a message for one."""

    def find(self, home: str, cwd: str, prompt: str, since: datetime) -> AgentThread | None:
        """The one conversation under `home` started in `cwd` since `since` with `prompt` as
        its first message; None when there is none, or more than one."""
        ...

    def queue(self, binary: str, home: str, thread_id: str, text: str) -> bool:
        """Queue `text` for the conversation (run at once when idle, after the turn when
        busy); whether Codex took it."""
        ...

    def status(self, transcript: str) -> StatusReport | None:
        """In a turn or idle, as the transcript's last turn event says; None if unreadable."""
        ...

    def taken(self, transcript: str) -> dict[int, datetime]:
        """The CAFleet messages whose previews the conversation took in as user turns, with
        when (recent ones: the transcript's tail); empty if unreadable."""
        ...

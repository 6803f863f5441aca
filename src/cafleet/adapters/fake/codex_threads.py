"""In-memory Codex conversations: what `find` returns, what `queue` accepted, and the status
and receipts each transcript shows are set by the test."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from cafleet.application.ports.agents import AgentThread, CodexThreads
from cafleet.domain.agents.status import StatusReport


@dataclass
class FakeCodexThreads(CodexThreads):
    threads: list[tuple[str, str, str, AgentThread]] = field(default_factory=list)
    queued: list[tuple[str, str, str, str]] = field(default_factory=list)  # binary, home, id, text
    refuses: bool = False
    statuses: dict[str, StatusReport] = field(default_factory=dict)  # transcript -> status
    took: dict[str, dict[int, datetime]] = field(default_factory=dict)  # transcript -> taken
    searches: int = 0

    def add(self, home: str, cwd: str, prompt: str, thread: AgentThread) -> None:
        self.threads.append((home, cwd, prompt, thread))

    def find(self, home: str, cwd: str, prompt: str, since: datetime) -> AgentThread | None:
        self.searches += 1
        found = [t for h, c, p, t in self.threads if (h, c, p) == (home, cwd, prompt)]
        return found[0] if len(found) == 1 else None

    def queue(self, binary: str, home: str, thread_id: str, text: str) -> bool:
        if self.refuses:
            return False
        self.queued.append((binary, home, thread_id, text))
        return True

    def status(self, transcript: str) -> StatusReport | None:
        return self.statuses.get(transcript)

    def taken(self, transcript: str) -> dict[int, datetime]:
        return dict(self.took.get(transcript, {}))

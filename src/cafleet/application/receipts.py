"""Which messages a member's agent took in, from what the agent records itself.

Claude Code's hooks name the previews of each prompt it took (and the mail its waiting hook
handed over) in the member's event file; OpenCode lists a session's prompts on its own
server, and a prompt counts once a model answer began after it; Codex writes each user turn
to its transcript. The monitor's tick records what these show as `confirmed_at` in the
ledger (Claude Code's prompt hook also does, through `cafleet.receipt`), and the delivery
ladder asks before it announces a message again to an agent that has not taken the last.
A receipt for a message still being announced waits for its record (`confirmations`).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from cafleet.application.channels import known_transcript, note_of
from cafleet.application.confirmations import confirm_taken
from cafleet.application.ports import CodexThreads, LaunchPads, UnitOfWorkFactory
from cafleet.domain.agent_profiles import (
    RECEIPT_EVENTS,
    SESSION_FILE,
    AgentProfiles,
)
from cafleet.domain.agent_status import HookEvent
from cafleet.domain.placement import CodingAgent, Placement


class ReceiptReader:
    def __init__(self, pads: LaunchPads, profiles: AgentProfiles, threads: CodexThreads) -> None:
        self._pads = pads
        self._profiles = profiles
        self._threads = threads

    def can_tell(self, agent: CodingAgent, launch_pad: str | None) -> bool:
        """Whether this member's agent keeps a record of what it took in."""
        return launch_pad is not None and agent is not CodingAgent.CUSTOM

    def taken(self, agent: CodingAgent, launch_pad: str | None) -> dict[int, datetime]:
        """Task id -> when the agent took that message in, as far as its record tells."""
        pad = None if launch_pad is None else self._pads.reopen(launch_pad)
        if pad is None or not self.can_tell(agent, launch_pad):
            return {}
        profile = self._profiles[agent]
        if profile.uses_hooks:
            return _named_in(pad.events())
        http = profile.server
        session = note_of(pad, SESSION_FILE)
        if http is not None:
            if not session:
                return {}
            return http.taken(pad.get(http.messages_path.format(session=session), http.user))
        transcript = known_transcript(pad, self._threads)
        return {} if transcript is None else self._threads.taken(transcript)


class ReceiptRecorder:
    """Writes what the agents' own records say they took in as `confirmed_at` (the first
    word is kept), each receipt once per process: the monitor's tick for its host's
    members, each relay's for its own."""

    def __init__(self, uow: UnitOfWorkFactory, reader: ReceiptReader) -> None:
        self._uow = uow
        self._reader = reader
        self._confirmed: set[tuple[int, int]] = set()  # (agent, task) written here

    def record(self, placements: Iterable[Placement]) -> None:
        fresh: dict[tuple[int, datetime], list[int]] = {}
        for placement in placements:
            agent = placement.agent_id
            for task, at in self._reader.taken(
                placement.coding_agent, placement.launch_pad
            ).items():
                if (agent, task) not in self._confirmed:
                    fresh.setdefault((agent, at), []).append(task)
        if not fresh:
            return
        done: set[tuple[int, int]] = set()
        with self._uow(write=True) as uow:
            for (agent, at), tasks in fresh.items():
                _, announcing = confirm_taken(uow, agent, tasks, at)
                done.update((agent, t) for t in tasks if t not in announcing)  # next tick
            uow.commit()
        self._confirmed.update(done)


def _named_in(events: tuple[HookEvent, ...]) -> dict[int, datetime]:
    taken: dict[int, datetime] = {}
    for event in events:
        if event.kind in RECEIPT_EVENTS:
            for task in event.detail.split(","):
                if task.isdigit():
                    taken.setdefault(int(task), event.at)
    return taken

"""Which messages a member's agent took in, from what the agent records itself.

Claude Code's hooks name the previews of each prompt it took (and the mail its waiting hook
handed over) in the member's event file; OpenCode lists a session's prompts on its own
server, and a prompt counts once a model answer began after it; Codex writes each user turn
to its transcript. The monitor's tick records what these show as `confirmed_at` in the
ledger (Claude Code's prompt hook also does, through `cafleet.entrypoints.processes.receipt`), and
the delivery ladder asks before it announces a message again to an agent that has not taken the last
(a record that cannot be read now, `None`, never holds a message back). A receipt for a message
still being announced waits for its record (`confirmations`).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from cafleet.application.members.pads import known_session, known_transcript
from cafleet.application.messaging.confirmations import confirm_taken
from cafleet.application.ports.agents import CodexThreads, LaunchPads
from cafleet.application.ports.store import UnitOfWorkFactory
from cafleet.domain.agents.claude import RECEIPT_EVENTS
from cafleet.domain.agents.registry import AgentProfiles
from cafleet.domain.agents.status import HookEvent
from cafleet.domain.placement import CodingAgent, Placement


class ReceiptReader:
    def __init__(self, pads: LaunchPads, profiles: AgentProfiles, threads: CodexThreads) -> None:
        self._pads = pads
        self._profiles = profiles
        self._threads = threads

    def taken(self, agent: CodingAgent, launch_pad: str | None) -> dict[int, datetime] | None:
        """Task id -> when the agent took that message in, as its own record tells now;
        None when there is no record to read now: a custom agent or the Director's pane,
        hooks that never ran, an OpenCode session not found or a server that does not
        answer, a Codex conversation not found."""
        pad = None if launch_pad is None else self._pads.reopen(launch_pad)
        if pad is None or agent is CodingAgent.CUSTOM:
            return None
        profile = self._profiles[agent]
        if profile.uses_hooks:
            events = pad.events()
            return None if profile.hooks_off(events) else _named_in(events)
        http = profile.http  # a server not opened answers nothing: no record
        if http is not None:
            session = known_session(pad, http)
            if session is None:
                return None
            listing = pad.get(http.messages_path.format(session=session), http.user)
            return None if listing is None else http.taken(listing)
        transcript = known_transcript(pad, self._threads)
        return None if transcript is None else self._threads.taken(transcript)


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
            taken = self._reader.taken(placement.coding_agent, placement.launch_pad)
            for task, at in (taken or {}).items():
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

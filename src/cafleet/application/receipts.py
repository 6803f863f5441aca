"""Which messages a member's agent took in, from what the agent records itself.

OpenCode lists a session's prompts on its own server, and a prompt counts once a model answer
began after it; Codex writes each user turn to its transcript. (Claude Code says so itself:
its prompt hook starts `cafleet.receipt`.) The monitor's tick records what these show as
`confirmed_at` in the ledger.
"""

from __future__ import annotations

from datetime import datetime

from cafleet.application.channels import note_of
from cafleet.application.ports import CodexThreads, LaunchPads
from cafleet.domain.agent_profiles import SESSION_FILE, TRANSCRIPT_FILE, AgentProfiles
from cafleet.domain.placement import Placement


class ReceiptReader:
    def __init__(self, pads: LaunchPads, profiles: AgentProfiles, threads: CodexThreads) -> None:
        self._pads = pads
        self._profiles = profiles
        self._threads = threads

    def taken(self, placement: Placement) -> dict[int, datetime]:
        """Task id -> when the agent took that message in, as far as its record tells."""
        pad = None if placement.launch_pad is None else self._pads.reopen(placement.launch_pad)
        if pad is None:
            return {}
        http = self._profiles[placement.coding_agent].server
        session = note_of(pad, SESSION_FILE)
        if http is not None:
            if not session:
                return {}
            return http.taken(pad.get(http.messages_path.format(session=session), http.user))
        transcript = note_of(pad, TRANSCRIPT_FILE)
        return self._threads.taken(transcript) if transcript else {}

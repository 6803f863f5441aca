"""Each member's agent status, from the best source its profile has.

The pane comes first (gone or dead: exited), then the placement (not yet ready: starting),
then what the agent says itself: Claude Code's hooks in the member's event file, OpenCode's
own server. An agent with no such source (Codex, a custom command) is `unknown` while its
pane runs; CAFleet does not guess from the screen.
"""

from __future__ import annotations

from datetime import datetime

from cafleet.application.ports import Clock, LaunchPad, LaunchPads
from cafleet.domain.agent_profiles import SESSION_FILE, AgentProfiles
from cafleet.domain.agent_status import AgentStatus, StatusReport
from cafleet.domain.placement import PaneState, Placement

SEEN_FILE = "status-seen"  # the last status read from the agent's server, and since when


class AgentStatusReader:
    def __init__(self, pads: LaunchPads, profiles: AgentProfiles, clock: Clock) -> None:
        self._pads = pads
        self._profiles = profiles
        self._clock = clock

    def report(self, placement: Placement, pane: PaneState | None) -> StatusReport:
        if pane is PaneState.GONE:
            return StatusReport(AgentStatus.EXITED)
        if placement.is_starting:
            return StatusReport(AgentStatus.STARTING, placement.created_at)
        pad = None if placement.launch_pad is None else self._pads.reopen(placement.launch_pad)
        if pad is None:
            return StatusReport.unknown()
        ended = pad.status().exit_code
        if ended is not None:
            return StatusReport(AgentStatus.EXITED)
        profile = self._profiles[placement.coding_agent]
        told = profile.status_from_events(pad.events())
        if told is not None:
            return told
        served = self._from_server(placement, pad)
        return served if served is not None else StatusReport.unknown()

    def _from_server(self, placement: Placement, pad: LaunchPad) -> StatusReport | None:
        http = self._profiles[placement.coding_agent].server
        session = (pad.read(SESSION_FILE) or "").strip()
        if http is None or not session:
            return None
        status = http.status(
            session,
            pad.get(http.status_path, http.user),
            pad.get(http.permission_path, http.user),
        )
        if status is None:
            return None
        return StatusReport(status, self._since(pad, status))

    def _since(self, pad: LaunchPad, status: AgentStatus) -> datetime:
        """When this status was first read (the server tells no times): kept in the pad."""
        word, _, stamp = (pad.read(SEEN_FILE) or "").partition(" ")
        if word == status.value:
            try:
                return datetime.fromisoformat(stamp.strip())
            except ValueError:
                pass
        now = self._clock.now()
        pad.remember(SEEN_FILE, f"{status.value} {now.isoformat()}")
        return now

"""Each member's agent status, from the best source its profile has.

The pane comes first (gone or dead: exited), then the placement (not yet ready: starting),
then what the agent says itself: Claude Code's hooks in the member's event file (none at
all: its hooks are off, `unknown` with that note), OpenCode's own server (for the session
the readiness check saw, or found later), Codex's transcript of the conversation (once
found from what the pad kept of the spawn).
Codex records no approval it asks for, so for it (`dialogs_tell_waiting`) a dialog at the
bottom of the screen during a turn says `waiting`. Where none of these tells, the state the
multiplexer detects in the pane does (herdr's, pushed to it by the agent's screen); an agent
with no source at all (a custom command on tmux) is `unknown` while its pane runs.
"""

from __future__ import annotations

from datetime import datetime

from cafleet.application.members.pads import known_session, known_transcript
from cafleet.application.ports.agents import CodexThreads, LaunchPad, LaunchPads
from cafleet.application.ports.panes import PaneDrivers
from cafleet.application.ports.system import Clock
from cafleet.domain.agents.registry import AgentProfiles
from cafleet.domain.agents.screen import TYPING_DIALOG_ROWS
from cafleet.domain.agents.status import AgentStatus, StatusReport, detected_status
from cafleet.domain.errors import CafleetError
from cafleet.domain.panes import PaneGone
from cafleet.domain.placement import PaneState, Placement

HOOKS_OFF = "hooks off"  # the note of a member whose hooks never reported anything
SEEN_FILE = "status-seen"  # the last status read from the agent's server, and since when
ASKING_FILE = "status-asking"  # since when a dialog has shown during the current turn
DIALOG_LINES = 20


class AgentStatusReader:
    def __init__(
        self,
        pads: LaunchPads,
        profiles: AgentProfiles,
        clock: Clock,
        threads: CodexThreads | None = None,
        drivers: PaneDrivers | None = None,
    ) -> None:
        self._pads = pads
        self._profiles = profiles
        self._clock = clock
        self._threads = threads
        self._drivers = drivers

    def report(
        self, placement: Placement, pane: PaneState | None, detected: str | None = None
    ) -> StatusReport:
        """`detected`: the multiplexer's state for the pane (herdr's), if it has one."""
        told = self._told(placement, pane)
        fallback = detected_status(detected) if told.status is AgentStatus.UNKNOWN else None
        return told if fallback is None else StatusReport(fallback)

    def _told(self, placement: Placement, pane: PaneState | None) -> StatusReport:
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
        events = pad.events()
        if profile.hooks_off(events):
            return StatusReport(AgentStatus.UNKNOWN, note=HOOKS_OFF)
        told = profile.status_from_events(events)
        if told is not None:
            return told
        served = self._from_server(placement, pad)
        if served is not None:
            return served
        logged = None if profile.http else self._from_transcript(pad)
        if logged is None:
            return StatusReport.unknown()
        if logged.status is AgentStatus.WORKING and profile.dialogs_tell_waiting:
            return self._asking(placement, pad) or logged
        return logged

    def _asking(self, placement: Placement, pad: LaunchPad) -> StatusReport | None:
        """`waiting` while the pane shows one of the agent's dialogs, since first seen."""
        if self._drivers is None or placement.pane_id is None:
            return None
        try:
            driver = self._drivers(placement.backend, placement.socket, placement.host)
            screen = driver.capture(placement.pane_id, DIALOG_LINES)
        except (PaneGone, CafleetError):
            return None
        profile = self._profiles[placement.coding_agent]
        if profile.dialog_on(screen, rows=TYPING_DIALOG_ROWS) is None:
            pad.remember(ASKING_FILE, "")
            return None
        return StatusReport(AgentStatus.WAITING, self._since(pad, AgentStatus.WAITING, ASKING_FILE))

    def _from_transcript(self, pad: LaunchPad) -> StatusReport | None:
        """Codex: the last turn event of the conversation it records (found once, here or
        by its channel, from what the pad kept of the spawn)."""
        threads = self._threads
        transcript = None if threads is None else known_transcript(pad, threads)
        return None if threads is None or transcript is None else threads.status(transcript)

    def _from_server(self, placement: Placement, pad: LaunchPad) -> StatusReport | None:
        http = self._profiles[placement.coding_agent].server
        session = None if http is None else known_session(pad, http)
        if http is None or session is None:
            return None
        status = http.status(
            session,
            pad.get(http.status_path, http.user),
            pad.get(http.permission_path, http.user),
        )
        if status is None:
            return None
        return StatusReport(status, self._since(pad, status))

    def _since(self, pad: LaunchPad, status: AgentStatus, note: str = SEEN_FILE) -> datetime:
        """When this status was first read (the source tells no times): kept in the pad."""
        word, _, stamp = (pad.read(note) or "").partition(" ")
        if word == status.value:
            try:
                return datetime.fromisoformat(stamp.strip())
            except ValueError:
                pass
        now = self._clock.now()
        pad.remember(note, f"{status.value} {now.isoformat()}")
        return now

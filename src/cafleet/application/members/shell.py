"""`member exec` through the member's own agent server, where its profile names a shell route.

OpenCode's server runs a shell command in the session its TUI shows (what the TUI's own shell
mode does) and refuses it with a distinct status while a turn runs. Typing `! command` instead
races a turn that is just starting: OpenCode drops a shell command typed during a turn, and
the busy row a screen check waits for appears only a moment after the Enter that began it.
"""

from __future__ import annotations

from cafleet.application.members.pads import known_session
from cafleet.application.panes.keystroke_checks import (
    SHELL_IDLE_POLL_SECONDS,
    SHELL_IDLE_WAIT_SECONDS,
)
from cafleet.application.ports.agents import LaunchPads
from cafleet.application.ports.system import Clock
from cafleet.domain.agents.registry import AgentProfiles
from cafleet.domain.delivery import DeliveryState, PushOutcome, SkipReason
from cafleet.domain.placement import PushTarget

# Only the command's acceptance is awaited: the server answers when it ends, and a command
# still running after this long keeps running (its session shows busy).
SHELL_ACCEPT_SECONDS = 2.0
SERVER_CHANNEL = "agent-server"  # the outcome's channel: the member's own server, not keys


class AgentServerShell:
    def __init__(self, pads: LaunchPads, profiles: AgentProfiles, clock: Clock) -> None:
        self._pads = pads
        self._profiles = profiles
        self._clock = clock

    def run(self, target: PushTarget, command: str) -> PushOutcome | None:
        """SENT once the server took the command; SKIPPED (agent-busy) when a turn ran for
        the whole wait; None where no server of this member's can take it, so the caller
        types it instead (no session known yet, the server silent, no such route)."""
        http = self._profiles[target.coding_agent].server  # None: its server is not opened
        pad = None if target.launch_pad is None else self._pads.reopen(target.launch_pad)
        if http is None or pad is None:
            return None
        session = known_session(pad, http)
        request = None if session is None else http.shell(session, command)
        if request is None:
            return None
        path, body = request
        waited = 0.0
        while True:
            status = pad.post(path, http.user, body, SHELL_ACCEPT_SECONDS)
            if status is None:
                # no answer in time: a command still running if the server lives, else the
                # server is gone and nothing was run
                alive = pad.get(http.status_path, http.user) is not None
                return self._outcome(target, DeliveryState.SENT) if alive else None
            if status != http.busy_status:
                break
            if waited >= SHELL_IDLE_WAIT_SECONDS:
                return self._outcome(target, DeliveryState.SKIPPED, SkipReason.AGENT_BUSY)
            self._clock.sleep(SHELL_IDLE_POLL_SECONDS)
            waited += SHELL_IDLE_POLL_SECONDS
        return self._outcome(target, DeliveryState.SENT) if 200 <= status < 300 else None

    @staticmethod
    def _outcome(target: PushTarget, state: DeliveryState, error: str | None = None) -> PushOutcome:
        return PushOutcome(state, target.backend.value, target.pane_id, error, SERVER_CHANNEL)

"""Where a pane-bound agent lives: multiplexer, server socket and pane."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import datetime
from enum import StrEnum

from cafleet.domain.panes import PaneInfo, ours

HOST_NAME_RULE = "1-63 letters, digits, '.', '_' or '-' (starting with a letter or digit)"
_HOST_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,62}")


def is_host_name(name: str) -> bool:
    """Whether `name` may name a host (CAFLEET_HOST, `member create --host`)."""
    return _HOST_NAME.fullmatch(name) is not None


class Multiplexer(StrEnum):
    TMUX = "tmux"
    HERDR = "herdr"


class CodingAgent(StrEnum):
    CLAUDE = "claude"
    CODEX = "codex"
    OPENCODE = "opencode"
    CUSTOM = "custom"


class PaneState(StrEnum):
    """A member's pane as its multiplexer reports it now."""

    RUNNING = "running"
    STARTING = "starting"  # the pane is there, the agent not yet seen ready
    GONE = "gone"  # closed (its agent exited) or dead


@dataclass(frozen=True)
class PaneLocation:
    """A pane as a multiplexer reports it for the calling process."""

    backend: Multiplexer
    session: str
    window_id: str
    pane_id: str
    socket: str | None = None
    identity: str | None = None  # see Placement.identity
    host: str | None = None  # see Placement.host


@dataclass(frozen=True)
class Placement:
    agent_id: int
    director_agent_id: int | None  # None on the Director's own row
    backend: Multiplexer
    session: str
    window_id: str
    pane_id: str | None  # None while the pane is pending
    coding_agent: CodingAgent
    created_at: datetime
    socket: str | None = None
    agent_commands: tuple[str, ...] = ()
    ready_at: datetime | None = None  # when the agent was seen able to take text
    ready_rule: str | None = None  # which signal said so (see domain/agents/profile.py)
    launch_pad: str | None = None  # the member's private directory (hooks, its server)
    # What the multiplexer reported of the pane when it was recorded (PaneDriver.claim); a
    # pane reporting anything else took the id later and is treated as gone. None on rows
    # recorded before migration 0005: those panes are typed into only while they run the
    # placement's agent (the agent check) and never closed unless they do (teardown.py).
    identity: str | None = None
    identity_digest: str | None = None  # of the member's secret (domain/identity.py)
    # The machine the pane lives on (CAFLEET_HOST, else its hostname): on a store that
    # several machines share, a pane is only reached from its own host. None on rows from
    # before migration 0007, taken to be on whichever host asks.
    host: str | None = None

    @property
    def is_pending(self) -> bool:
        return self.pane_id is None

    @property
    def is_starting(self) -> bool:
        """The pane exists but its agent has not yet been seen ready for text."""
        return self.pane_id is not None and self.ready_at is None

    def pane_state(self, info: PaneInfo | None) -> PaneState:
        """What the multiplexer's report (None: no such pane) says of this placement."""
        info = ours(info, self.identity)
        if info is None or info.dead:
            return PaneState.GONE
        return PaneState.STARTING if self.is_starting else PaneState.RUNNING

    def became_ready(self, rule: str, at: datetime) -> Placement:
        return replace(self, ready_at=at, ready_rule=rule)

    @property
    def is_member(self) -> bool:
        return self.director_agent_id is not None

    def location(self) -> PaneLocation:
        """Where the pane is, as a member placed beside it records it."""
        if self.pane_id is None:
            raise ValueError("a pending placement has no pane")
        return PaneLocation(
            self.backend,
            self.session,
            self.window_id,
            self.pane_id,
            self.socket,
            self.identity,
            self.host,
        )

    def with_pane(
        self, pane_id: str, launch_pad: str | None = None, identity: str | None = None
    ) -> Placement:
        return replace(self, pane_id=pane_id, launch_pad=launch_pad, identity=identity)


def director_placement(
    agent_id: int, pane: PaneLocation, coding_agent: CodingAgent, at: datetime
) -> Placement:
    return Placement(
        agent_id=agent_id,
        director_agent_id=None,
        backend=pane.backend,
        session=pane.session,
        window_id=pane.window_id,
        pane_id=pane.pane_id,
        coding_agent=coding_agent,
        created_at=at,
        socket=pane.socket,
        ready_at=at,  # the Director's own pane: whatever runs there is already up
        ready_rule="director",
        identity=pane.identity,
        host=pane.host,
    )


@dataclass(frozen=True)
class PushTarget:
    """Everything needed to reach a recipient's pane, read inside the send transaction."""

    agent_id: int
    backend: Multiplexer
    socket: str | None
    pane_id: str
    coding_agent: CodingAgent
    agent_commands: tuple[str, ...] = ()
    ready: bool = True  # False while the member's agent is still starting
    launch_pad: str | None = None  # the member's private directory, for native channels
    identity: str | None = None  # the pane's recorded identity (Placement.identity)
    host: str | None = None  # the machine of the pane (Placement.host)

    @staticmethod
    def of(placement: Placement) -> PushTarget:
        if placement.pane_id is None:
            raise ValueError("a pending placement has no pane to push to")
        return PushTarget(
            agent_id=placement.agent_id,
            backend=placement.backend,
            socket=placement.socket,
            pane_id=placement.pane_id,
            coding_agent=placement.coding_agent,
            agent_commands=placement.agent_commands,
            ready=not placement.is_starting,
            launch_pad=placement.launch_pad,
            identity=placement.identity,
            host=placement.host,
        )

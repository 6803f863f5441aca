"""Every coding agent's built-in profile, and the profiles with the user's overrides applied.

The agents' own modules do not import this one: it imports them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TypeVar

from cafleet.domain.agents import claude, codex, custom, opencode
from cafleet.domain.agents.profile import PANE_CHANNELS, AgentProfile, ReadyRule, SessionVariables
from cafleet.domain.delivery import Channel
from cafleet.domain.placement import CodingAgent

T = TypeVar("T")

PROFILES: Mapping[CodingAgent, AgentProfile] = {
    CodingAgent.CLAUDE: claude.PROFILE,
    CodingAgent.CODEX: codex.PROFILE,
    CodingAgent.OPENCODE: opencode.PROFILE,
    CodingAgent.CUSTOM: custom.PROFILE,
}


def agent_sessions(env: Mapping[str, str]) -> tuple[SessionVariables, ...]:
    """The sessions of the agents whose tool `env` is (one, or nested ones)."""
    return tuple(p.session for p in PROFILES.values() if p.session.runs(env))


def possible_channels(agent: CodingAgent) -> tuple[Channel, ...]:
    """The channels `agent` can take a message through: its own, the multiplexer's, then
    keys (whatever the user's overrides list)."""
    return (*PROFILES[agent].channels, *PANE_CHANNELS, Channel.KEYS)


@dataclass(frozen=True)
class ProfileOverrides:
    """The user's settings for one agent; None keeps the profile's value."""

    submit_delay: float | None = None
    foreground_names: tuple[str, ...] | None = None
    extra_args: tuple[str, ...] = ()
    ready_rules: tuple[ReadyRule, ...] | None = None
    # the agent's own and the multiplexer's, in any order; keys always comes last
    channels: tuple[Channel, ...] | None = None


@dataclass(frozen=True)
class AgentProfiles:
    """The profiles with the user's overrides applied."""

    profiles: Mapping[CodingAgent, AgentProfile] = field(default_factory=lambda: dict(PROFILES))

    @staticmethod
    def resolved(overrides: Mapping[CodingAgent, ProfileOverrides]) -> AgentProfiles:
        resolved = {}
        for agent, profile in PROFILES.items():
            change = overrides.get(agent, ProfileOverrides())
            resolved[agent] = replace(
                profile,
                submit_delay=_pick(change.submit_delay, profile.submit_delay),
                foreground_names=_pick(change.foreground_names, profile.foreground_names),
                extra_args=change.extra_args,
                ready_rules=_pick(change.ready_rules, profile.ready_rules),
                channels=_pick(_listed(change.channels, pane=False), profile.channels),
                pane_channels=_pick(_listed(change.channels, pane=True), profile.pane_channels),
            )
        return AgentProfiles(resolved)

    def __getitem__(self, agent: CodingAgent) -> AgentProfile:
        return self.profiles[agent]


def _listed(channels: tuple[Channel, ...] | None, *, pane: bool) -> tuple[Channel, ...] | None:
    """Of the channels a user listed, the multiplexer's (`pane`) or the agent's own."""
    if channels is None:
        return None
    return tuple(c for c in channels if (c in PANE_CHANNELS) is pane)


def _pick(value: T | None, default: T) -> T:
    return default if value is None else value

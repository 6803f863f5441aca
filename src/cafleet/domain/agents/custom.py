"""A custom agent: any terminal program, started from the user's command template."""

from __future__ import annotations

from cafleet.domain.agents.profile import AgentProfile, ReadyRule
from cafleet.domain.placement import CodingAgent

PROFILE = AgentProfile(
    CodingAgent.CUSTOM,
    foreground_names=(),  # computed at spawn from the command's program and shebang
    submit_delay=0.2,
    ready_rules=(ReadyRule.WAIT,),
    wait_fallback_seconds=0.5,
    bracketed_paste=False,  # unknown: a preview goes as one line
    notes="any terminal program; ready once it has stayed in front for a moment",
)

"""AgentStarts that knows each agent's start environment by one of its markers."""

from __future__ import annotations

from collections.abc import Collection, Mapping

from cafleet.application.ports.agents import AgentStarts


class FakeAgentStarts(AgentStarts):
    """`started` maps a marker to the environment the agent setting it started with (None:
    the ancestors cannot be read); `asked` records every question's markers."""

    def __init__(self, started: Mapping[str, Mapping[str, str] | None]) -> None:
        self.started = dict(started)
        self.asked: list[tuple[str, ...]] = []

    def environment(self, markers: Collection[str]) -> Mapping[str, str] | None:
        self.asked.append(tuple(markers))
        return next((self.started[m] for m in markers if m in self.started), None)

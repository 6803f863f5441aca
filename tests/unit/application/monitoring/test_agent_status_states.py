"""On tmux, where the multiplexer tells no state, the monitor uses what each agent says of
itself: waiting for a person wakes the watcher, mail left unread while idle wakes it, and a
working agent is never due a stall check."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any

import pytest

from cafleet.adapters.fake.launch_pads import FakeLaunchPad, FakeLaunchPads
from cafleet.application.members.status import AgentStatusReader
from cafleet.application.monitoring.service import MonitorService
from cafleet.domain.agents.registry import AgentProfiles
from cafleet.domain.agents.status import HookEvent
from cafleet.domain.placement import CodingAgent


@dataclass
class Watched:
    fleet: Any
    svc: MonitorService
    member_id: int
    pad: FakeLaunchPad

    def says(self, event: str) -> None:
        self.pad.reported.append(HookEvent(event, self.fleet.clock.now()))

    def tick(self, seconds: float = 5) -> tuple[str, ...]:
        self.fleet.clock.advance(seconds)
        report = self.svc.tick(self.fleet.fleet_id)
        return next((d.reasons for d in report.due if d.agent_id == self.member_id), ())


def watched(make_fleet: Any, stall_interval: int) -> Watched:
    """A tmux fleet whose worker is a Claude Code member with a launch pad, pinged at 0."""
    fleet = make_fleet()
    member_id = fleet.members["worker"]
    pads = FakeLaunchPads()
    pad = pads.prepare(fleet.fleet_id, member_id)
    with fleet.store(write=True) as uow:
        placement = uow.placements.get(member_id)
        uow.placements.save(
            replace(placement, coding_agent=CodingAgent.CLAUDE, launch_pad=pad.location)
        )
        uow.commit()
    fleet.panes[member_id].command = "claude"
    statuses = AgentStatusReader(pads, AgentProfiles(), fleet.clock)
    svc = fleet.service(stall_interval=stall_interval, statuses=statuses)
    world = Watched(fleet, svc, member_id, pad)
    world.says("prompt")
    svc.claim(fleet.fleet_id, 5)
    svc.tick(fleet.fleet_id)
    return world


@pytest.fixture
def member(make_fleet: Any) -> Watched:
    return watched(make_fleet, stall_interval=0)


def test_a_member_waiting_for_a_person_wakes_the_watcher_once(member: Watched) -> None:
    member.says("waiting:permission_prompt")

    assert member.tick() == ("status:blocked",)
    assert member.tick() == ()  # the same episode
    member.says("prompt")  # answered; it works again
    member.tick()
    member.says("waiting:permission_prompt")
    assert member.tick() == ("status:blocked",)


def test_mail_left_unread_while_idle_wakes_the_watcher(member: Watched) -> None:
    member.says("idle")
    assert member.tick() == ()  # idle with nothing to read is no news

    member.fleet.message(member.member_id, member.fleet.director_id)
    assert member.tick() == ("status:idle-unread",)
    assert member.tick() == ()


def test_a_working_member_is_never_due_a_stall_check(make_fleet: Any) -> None:
    member = watched(make_fleet, stall_interval=60)

    assert member.tick(seconds=600) == ()  # it said it works, all along
    member.says("idle")
    assert "stall-check" in member.tick(seconds=60)


def test_the_idle_reminder_is_not_waiting_for_a_person(member: Watched) -> None:
    member.says("idle")
    member.tick()
    member.says("waiting:idle_prompt")  # Claude Code's reminder after a minute idle

    assert member.tick(seconds=timedelta(minutes=1).total_seconds()) == ()

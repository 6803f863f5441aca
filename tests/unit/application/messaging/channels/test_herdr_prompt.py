"""herdr's prompt as a rung: after the agent's own channels, before keys, on herdr only; a
refusal because a dialog is up settles the delivery, so nothing is typed into the dialog."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

import pytest

from cafleet.adapters.fake.clock import FakeClock
from cafleet.adapters.fake.codex_threads import FakeCodexThreads
from cafleet.adapters.fake.launch_pads import FakeLaunchPad, FakeLaunchPads
from cafleet.adapters.fake.pane_driver import FakePane, FakePaneDrivers, ThreadLocks
from cafleet.application.messaging.channels import ChannelLadder, channel_ladder
from cafleet.application.messaging.herdr_channel import HerdrPromptChannel
from cafleet.application.panes.keystrokes import KeystrokeSender
from cafleet.application.panes.notifier import PaneNotifier
from cafleet.domain.agents.registry import AgentProfiles, ProfileOverrides
from cafleet.domain.delivery import Announcement, Channel, DeliveryState, describe_skip
from cafleet.domain.panes import Key, PromptAnswer
from cafleet.domain.placement import CodingAgent, Multiplexer, PushTarget
from cafleet.settings import Settings

START = datetime(2026, 1, 1, 8, 0, tzinfo=UTC)
PREVIEW = "[cafleet msg 12 from 1 2026-01-01T08:00:00.000000+00:00]\nhello"
SOCKET = "herdr.sock"
ENTER = ("key", Key.ENTER.value)


@dataclass
class Rig:
    drivers: FakePaneDrivers = field(default_factory=FakePaneDrivers)
    pads: FakeLaunchPads = field(default_factory=FakeLaunchPads)
    clock: FakeClock = field(default_factory=lambda: FakeClock(START))
    profiles: AgentProfiles = field(default_factory=lambda: AgentProfiles.resolved({}))

    def ladder(self) -> ChannelLadder:
        locks = ThreadLocks()
        keys = PaneNotifier(KeystrokeSender(self.drivers, locks, self.clock, self.profiles), 200)
        return channel_ladder(
            self.profiles, self.pads, FakeCodexThreads(), self.clock, keys, 200,
            HerdrPromptChannel(self.drivers, locks),
        )  # fmt: skip

    def pane(self, backend: Multiplexer = Multiplexer.HERDR, command: str = "claude") -> FakePane:
        return self.drivers(backend, SOCKET).add_pane(command, pane_id="w1:p2")

    def announcement(
        self,
        pane: FakePane,
        backend: Multiplexer = Multiplexer.HERDR,
        agent: CodingAgent = CodingAgent.CLAUDE,
        pad: FakeLaunchPad | None = None,
        ready: bool = True,
    ) -> Announcement:
        target = PushTarget(
            3, backend, SOCKET, pane.pane_id, agent, ready=ready,
            launch_pad=None if pad is None else pad.location,
        )  # fmt: skip
        return Announcement(12, 1, START, "hello", target)


@pytest.fixture
def rig() -> Rig:
    return Rig()


def steps(outcome: object) -> list[tuple[str | None, DeliveryState, str | None]]:
    return [(a.channel, a.state, a.error) for a in outcome.attempts]  # type: ignore[attr-defined]


def test_herdr_prompts_the_agent_it_detected_and_nothing_else_is_typed(rig: Rig) -> None:
    pane = rig.pane()
    pane.detected = "claude"

    outcome = rig.ladder().announce(rig.announcement(pane))

    assert steps(outcome) == [(Channel.HERDR_PROMPT, DeliveryState.SENT, None)]
    assert (outcome.transport, outcome.pane_id) == ("herdr", "w1:p2")
    assert pane.typed == [("paste", PREVIEW), ENTER]  # once, by herdr


def test_the_agents_own_channel_comes_first_then_herdr_then_keys(rig: Rig) -> None:
    pane = rig.pane()
    pane.detected = "claude"
    pad = rig.pads.prepare(1, 3)  # no hook waits: the agent is in a turn
    pad.reported.append("session")  # its hooks run

    outcome = rig.ladder().announce(rig.announcement(pane, pad=pad))

    assert steps(outcome) == [
        (Channel.CLAUDE_HOOK, DeliveryState.SKIPPED, "no-waiting-hook"),
        (Channel.HERDR_PROMPT, DeliveryState.SENT, None),
    ]
    assert pane.typed == [("paste", PREVIEW), ENTER]
    assert rig.profiles[CodingAgent.CLAUDE].ladder == (
        Channel.CLAUDE_HOOK, Channel.HERDR_PROMPT, Channel.KEYS
    )  # fmt: skip


def test_an_agent_at_a_dialog_is_refused_and_keys_never_type_into_it(rig: Rig) -> None:
    pane = rig.pane()
    pane.detected, pane.blocked = "claude", True

    outcome = rig.ladder().announce(rig.announcement(pane))

    assert steps(outcome) == [(Channel.HERDR_PROMPT, DeliveryState.SKIPPED, "agent-blocked")]
    assert pane.typed == []
    assert describe_skip(outcome.error) == "the agent waits at an approval or question dialog"


def test_a_pane_herdr_detected_no_agent_in_falls_through_to_keys(rig: Rig) -> None:
    pane = rig.pane()  # herdr did not recognise the program

    outcome = rig.ladder().announce(rig.announcement(pane))

    assert steps(outcome) == [
        (Channel.HERDR_PROMPT, DeliveryState.SKIPPED, "no-detected-agent"),
        (Channel.KEYS, DeliveryState.SENT, None),
    ]
    assert pane.typed == [("paste", PREVIEW), ENTER]  # typed once, by keys


def test_a_server_without_agent_prompt_falls_through_to_keys(rig: Rig) -> None:
    pane = rig.pane()
    driver = rig.drivers(Multiplexer.HERDR, SOCKET)
    driver.prompt_agent = lambda pane_id, text: PromptAnswer.NO_METHOD  # type: ignore[method-assign]

    outcome = rig.ladder().announce(rig.announcement(pane))

    assert [(a.channel, a.error) for a in outcome.attempts] == [
        (Channel.HERDR_PROMPT, "no-prompt-method"),
        (Channel.KEYS, None),
    ]
    assert pane.typed == [("paste", PREVIEW), ENTER]


def test_an_unreachable_server_is_a_failed_attempt_and_keys_report_their_own(rig: Rig) -> None:
    pane = rig.pane()
    pane.detected = "claude"
    rig.drivers(Multiplexer.HERDR, SOCKET).unreachable = "connection refused"

    outcome = rig.ladder().announce(rig.announcement(pane))

    assert [(a.channel, a.state) for a in outcome.attempts] == [
        (Channel.HERDR_PROMPT, DeliveryState.FAILED),
        (Channel.KEYS, DeliveryState.FAILED),  # the keystroke path's own failure
    ]
    assert "connection refused" in (outcome.fallen_from[0].error or "")
    assert pane.typed == []


def test_a_tmux_pane_has_no_prompt_so_the_rung_records_nothing(rig: Rig) -> None:
    pane = rig.pane(Multiplexer.TMUX)
    pane.detected = "claude"  # even so: tmux answers that it has no such request

    outcome = rig.ladder().announce(rig.announcement(pane, Multiplexer.TMUX))

    assert steps(outcome) == [(Channel.KEYS, DeliveryState.SENT, None)]
    assert outcome.transport == "tmux"


def test_a_member_still_starting_is_left_to_the_keystroke_path(rig: Rig) -> None:
    pane = rig.pane()
    pane.detected = "claude"

    outcome = rig.ladder().announce(rig.announcement(pane, ready=False))

    assert steps(outcome) == [(Channel.KEYS, DeliveryState.SKIPPED, "agent-starting")]
    assert pane.typed == []


def test_keys_alone_switches_herdrs_prompt_off_too(rig: Rig) -> None:
    rig.profiles = Settings.from_environ({"CAFLEET_CHANNELS_CLAUDE": "keys"}).profiles
    pane = rig.pane()
    pane.detected = "claude"

    outcome = rig.ladder().announce(rig.announcement(pane))

    assert steps(outcome) == [(Channel.KEYS, DeliveryState.SENT, None)]


def test_herdrs_prompt_named_alone_leaves_out_the_agents_own_channel(rig: Rig) -> None:
    rig.profiles = Settings.from_environ({"CAFLEET_CHANNELS_CLAUDE": "herdr-prompt,keys"}).profiles
    pane = rig.pane()
    pane.detected = "claude"

    outcome = rig.ladder().announce(rig.announcement(pane, pad=rig.pads.prepare(1, 3)))

    assert steps(outcome) == [(Channel.HERDR_PROMPT, DeliveryState.SENT, None)]
    assert rig.profiles[CodingAgent.CLAUDE].ladder == (Channel.HERDR_PROMPT, Channel.KEYS)


def test_herdrs_prompt_always_comes_after_the_agents_own_channels() -> None:
    listed = ProfileOverrides(channels=(Channel.HERDR_PROMPT, Channel.CODEX_QUEUE))

    profile = AgentProfiles.resolved({CodingAgent.CODEX: listed})[CodingAgent.CODEX]

    assert profile.ladder == (Channel.CODEX_QUEUE, Channel.HERDR_PROMPT, Channel.KEYS)
    assert profile.channels == (Channel.CODEX_QUEUE,)


def test_every_agent_has_herdrs_prompt_before_keys_by_default() -> None:
    profiles = Settings.from_environ({}).profiles

    for agent in CodingAgent:
        assert profiles[agent].ladder[-2:] == (Channel.HERDR_PROMPT, Channel.KEYS)


def test_a_pane_that_took_the_members_id_after_a_restart_is_never_prompted(rig: Rig) -> None:
    server = rig.drivers(Multiplexer.HERDR, SOCKET)
    member = rig.pane()
    recorded = server.claim(member.pane_id)
    server.restart()
    stranger = rig.pane()  # a new server's pane with the old id, running an agent herdr sees
    stranger.detected = "claude"
    announcement = rig.announcement(stranger)
    announcement = replace(announcement, target=replace(announcement.target, identity=recorded))

    outcome = rig.ladder().announce(announcement)

    assert steps(outcome) == [
        (Channel.HERDR_PROMPT, DeliveryState.SKIPPED, "pane-gone"),
        (Channel.KEYS, DeliveryState.SKIPPED, "pane-gone"),  # each rung names itself
    ]
    assert stranger.typed == []

"""The delivery ladder: native channels first, keystrokes last, every attempt recorded."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta

import pytest

from cafleet.adapters.fake.clock import FakeClock
from cafleet.adapters.fake.codex_threads import FakeCodexThreads
from cafleet.adapters.fake.launch_pads import EPOCH, FakeLaunchPad, FakeLaunchPads
from cafleet.application.messaging.channels import (
    CLAIM_SECONDS,
    ChannelLadder,
    ClaudeHookChannel,
    OpencodeHttpChannel,
    channel_ladder,
)
from cafleet.application.ports.agents import AgentThread
from cafleet.domain.agents.profile import SESSION_FILE, SPAWN_FILE, TRANSCRIPT_FILE, SpawnFacts
from cafleet.domain.agents.registry import AgentProfiles, ProfileOverrides
from cafleet.domain.delivery import Announcement, Channel, DeliveryState, PushOutcome
from cafleet.domain.placement import CodingAgent, Multiplexer, PushTarget

START = datetime(2026, 1, 1, 8, 0, tzinfo=UTC)
HEADER = "[cafleet msg 12 from 1 2026-01-01T08:00:00.000000+00:00]"


@dataclass
class TypingRecorder:
    """The keystroke rung: records what it would type and reports it sent."""

    typed: list[str] = field(default_factory=list)

    def offer(self, announcement: Announcement, text: str) -> PushOutcome:
        self.typed.append(text)
        return PushOutcome.sent("tmux", announcement.target.pane_id)


@dataclass
class Rig:
    pads: FakeLaunchPads = field(default_factory=FakeLaunchPads)
    clock: FakeClock = field(default_factory=lambda: FakeClock(START))
    keys: TypingRecorder = field(default_factory=TypingRecorder)
    profiles: AgentProfiles = field(default_factory=AgentProfiles)
    threads: FakeCodexThreads = field(default_factory=FakeCodexThreads)

    def ladder(self) -> ChannelLadder:
        return channel_ladder(self.profiles, self.pads, self.threads, self.clock, self.keys, 200)

    def pad(self, agent_id: int = 3) -> FakeLaunchPad:
        return self.pads.prepare(1, agent_id)

    def claude_pad(self) -> FakeLaunchPad:
        """A Claude Code member whose hooks run: its SessionStart hook reported at start."""
        pad = self.pad()
        pad.reported.append("session")
        return pad

    def announcement(
        self, coding_agent: CodingAgent, pad: FakeLaunchPad | None, text: str = "hello"
    ) -> Announcement:
        target = PushTarget(
            3, Multiplexer.TMUX, "sock", "%1", coding_agent,
            launch_pad=None if pad is None else pad.location,
        )  # fmt: skip
        return Announcement(12, 1, START, text, target)


@pytest.fixture
def rig() -> Rig:
    return Rig()


# --------------------------------------------------------------------------- claude-hook


def test_a_waiting_claude_hook_takes_the_message_and_nothing_is_typed(rig: Rig) -> None:
    pad = rig.claude_pad()
    pad.waiter = True

    outcome = rig.ladder().announce(rig.announcement(CodingAgent.CLAUDE, pad))

    assert (outcome.state, outcome.channel, outcome.fallen_from) == (
        DeliveryState.SENT, Channel.CLAUDE_HOOK, ()
    )  # fmt: skip
    assert outcome.confirmed_at == EPOCH  # when the hook took it
    assert pad.taken[12][0] == f"{HEADER}\nhello"
    assert rig.keys.typed == []


def test_without_a_waiting_hook_the_message_is_typed_and_both_attempts_are_kept(
    rig: Rig,
) -> None:
    pad = rig.claude_pad()  # the agent is in a turn that began without a hook waiting

    outcome = rig.ladder().announce(rig.announcement(CodingAgent.CLAUDE, pad))

    assert [(a.channel, a.state, a.error) for a in outcome.attempts] == [
        (Channel.CLAUDE_HOOK, DeliveryState.SKIPPED, "no-waiting-hook"),
        (Channel.KEYS, DeliveryState.SENT, None),
    ]
    assert pad.mail == {} and pad.taken == {}
    assert rig.keys.typed == [f"{HEADER}\nhello"]


def test_a_message_the_hook_does_not_take_in_time_is_withdrawn_then_typed(rig: Rig) -> None:
    pad = rig.claude_pad()
    pad.waiter, pad.takes_at = True, None  # the hook waits but never takes it

    outcome = rig.ladder().announce(rig.announcement(CodingAgent.CLAUDE, pad))

    assert [(a.channel, a.error) for a in outcome.attempts] == [
        (Channel.CLAUDE_HOOK, "not-taken"),
        (Channel.KEYS, None),
    ]
    assert pad.withdrawn == [12] and pad.mail == {}
    assert rig.clock.now() - START >= timedelta(seconds=CLAIM_SECONDS)
    assert len(rig.keys.typed) == 1  # announced once


def test_a_message_taken_while_being_withdrawn_counts_as_taken_once(rig: Rig) -> None:
    pad = rig.claude_pad()
    pad.waiter, pad.takes_at = True, None
    original = pad.withdraw_mail

    def hook_wins_the_race(task_id: int) -> bool:
        pad.taken[task_id] = (pad.mail.pop(task_id), EPOCH)
        return original(task_id)

    pad.withdraw_mail = hook_wins_the_race  # type: ignore[method-assign]

    outcome = rig.ladder().announce(rig.announcement(CodingAgent.CLAUDE, pad))

    assert (outcome.channel, outcome.state, outcome.fallen_from) == (
        Channel.CLAUDE_HOOK, DeliveryState.SENT, ()
    )  # fmt: skip
    assert rig.keys.typed == []


def test_a_member_without_a_launch_pad_is_typed_into_with_no_hook_attempt(rig: Rig) -> None:
    outcome = rig.ladder().announce(rig.announcement(CodingAgent.CLAUDE, None))

    assert [(a.channel, a.state) for a in outcome.attempts] == [(Channel.KEYS, DeliveryState.SENT)]


def test_the_hook_channel_switched_off_goes_straight_to_keys(rig: Rig) -> None:
    rig.profiles = AgentProfiles.resolved({CodingAgent.CLAUDE: ProfileOverrides(channels=())})
    pad = rig.claude_pad()
    pad.waiter = True

    outcome = rig.ladder().announce(rig.announcement(CodingAgent.CLAUDE, pad))

    assert [a.channel for a in outcome.attempts] == [Channel.KEYS]
    assert pad.taken == {}


# --------------------------------------------------------------------------- opencode-http


def opencode_pad(rig: Rig, status: int | None = 204) -> FakeLaunchPad:
    pad = rig.pad()
    pad.endpoint()
    pad.files[SESSION_FILE] = "ses_abc\n"
    if status is not None:
        pad.post_statuses["/session/ses_abc/prompt_async"] = status
    return pad


def test_an_opencode_member_gets_the_prompt_on_its_own_server_for_its_session(
    rig: Rig,
) -> None:
    pad = opencode_pad(rig)

    outcome = rig.ladder().announce(rig.announcement(CodingAgent.OPENCODE, pad))

    assert (outcome.state, outcome.channel, outcome.fallen_from) == (
        DeliveryState.SENT, Channel.OPENCODE_HTTP, ()
    )  # fmt: skip
    assert pad.posted == [
        (
            "/session/ses_abc/prompt_async",
            {"agent": "cafleet", "parts": [{"type": "text", "text": f"{HEADER}\nhello"}]},
        )
    ]
    assert rig.keys.typed == []


@pytest.mark.parametrize(
    ("status", "reason"),
    [(None, "server-silent"), (400, "refused:400"), (500, "refused:500")],
)
def test_an_opencode_server_that_fails_falls_back_to_keys(
    rig: Rig, status: int | None, reason: str
) -> None:
    pad = opencode_pad(rig, status)

    outcome = rig.ladder().announce(rig.announcement(CodingAgent.OPENCODE, pad))

    assert [(a.channel, a.state, a.error) for a in outcome.attempts] == [
        (Channel.OPENCODE_HTTP, DeliveryState.SKIPPED, reason),
        (Channel.KEYS, DeliveryState.SENT, None),
    ]
    assert len(rig.keys.typed) == 1


def test_a_prompt_that_landed_though_the_server_answered_late_is_not_typed_again(
    rig: Rig,
) -> None:
    pad = opencode_pad(rig, status=None)  # the POST got no answer in time
    listing = [{"info": {"role": "user", "time": {"created": 1}},
                "parts": [{"type": "text", "text": f"{HEADER}\nhello"}]}]  # fmt: skip
    pad.answers["/session/ses_abc/message?limit=40"] = json.dumps(listing)

    outcome = rig.ladder().announce(rig.announcement(CodingAgent.OPENCODE, pad))

    assert (outcome.state, outcome.channel) == (DeliveryState.SENT, Channel.OPENCODE_HTTP)
    assert rig.keys.typed == []


def test_an_opencode_member_whose_session_is_unknown_is_typed_into(rig: Rig) -> None:
    pad = opencode_pad(rig)
    del pad.files[SESSION_FILE]  # it became ready by the bounded wait, not its server

    outcome = rig.ladder().announce(rig.announcement(CodingAgent.OPENCODE, pad))

    assert [(a.channel, a.error) for a in outcome.attempts] == [
        (Channel.OPENCODE_HTTP, "no-session"),
        (Channel.KEYS, None),
    ]
    assert pad.posted == []


def test_a_custom_agent_is_typed_into(rig: Rig) -> None:
    pad = rig.pad()
    pad.waiter = True

    outcome = rig.ladder().announce(rig.announcement(CodingAgent.CUSTOM, pad))

    assert [a.channel for a in outcome.attempts] == [Channel.KEYS]


# --------------------------------------------------------------------------- codex-queue

PROMPT = "You are w. FLEET ID: 1. YOUR MEMBER ID: 3."
THREAD = AgentThread("01a2-thread", "/codex/sessions/2026/12/02/rollout-x.jsonl")


def codex_pad(rig: Rig) -> FakeLaunchPad:
    pad = rig.pad()
    facts = SpawnFacts(PROMPT, "/work", "/codex", "/bin/codex", START)
    pad.files[SPAWN_FILE] = facts.text()
    return pad


def test_a_codex_member_gets_the_message_queued_for_its_own_conversation(rig: Rig) -> None:
    pad = codex_pad(rig)
    rig.threads.add("/codex", "/work", PROMPT, THREAD)

    first = rig.ladder().announce(rig.announcement(CodingAgent.CODEX, pad))
    second = rig.ladder().announce(rig.announcement(CodingAgent.CODEX, pad, "again"))

    assert [(o.channel, o.state, o.fallen_from) for o in (first, second)] == [
        (Channel.CODEX_QUEUE, DeliveryState.SENT, ()),
    ] * 2
    assert rig.threads.queued == [
        ("/bin/codex", "/codex", "01a2-thread", f"{HEADER}\nhello"),
        ("/bin/codex", "/codex", "01a2-thread", f"{HEADER}\nagain"),
    ]
    assert rig.threads.searches == 1  # found once, then kept in the pad
    kept = (pad.files[SESSION_FILE], pad.files[TRANSCRIPT_FILE])
    assert kept == (THREAD.thread_id, THREAD.transcript)
    assert rig.keys.typed == []


def test_a_codex_conversation_not_found_or_a_refused_queue_falls_back_to_keys(rig: Rig) -> None:
    pad = codex_pad(rig)  # no conversation with this prompt yet
    unfound = rig.ladder().announce(rig.announcement(CodingAgent.CODEX, pad))
    rig.threads.add("/codex", "/work", PROMPT, THREAD)
    rig.threads.refuses = True
    refused = rig.ladder().announce(rig.announcement(CodingAgent.CODEX, pad))

    assert [(a.channel, a.error) for a in unfound.attempts] == [
        (Channel.CODEX_QUEUE, "no-session"), (Channel.KEYS, None)
    ]  # fmt: skip
    assert [(a.channel, a.error) for a in refused.attempts] == [
        (Channel.CODEX_QUEUE, "queue-refused"), (Channel.KEYS, None)
    ]  # fmt: skip
    assert len(rig.keys.typed) == 2


def test_a_codex_member_started_before_channels_is_typed_into(rig: Rig) -> None:
    pad = rig.pad()  # no spawn facts in its pad

    outcome = rig.ladder().announce(rig.announcement(CodingAgent.CODEX, pad))

    assert [a.channel for a in outcome.attempts] == [Channel.KEYS]


def test_the_channels_by_themselves_decline_a_member_without_a_pad(rig: Rig) -> None:
    hook = ClaudeHookChannel(rig.pads, rig.clock)
    http = OpencodeHttpChannel(rig.pads, rig.profiles)
    gone = rig.announcement(CodingAgent.OPENCODE, None)
    discarded = rig.pad()
    discarded.discarded = True

    assert hook.offer(gone, "x") is None
    assert http.offer(gone, "x") is None
    assert hook.offer(replace(gone, target=replace(gone.target, launch_pad=discarded.location)),
                      "x") is None  # fmt: skip

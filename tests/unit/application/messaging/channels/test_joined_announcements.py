"""Several messages, one announcement: while the agent has not taken in the announcement of
an earlier unread message, a later one is not announced again (its poll lists both)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from cafleet.adapters.fake.clock import FakeClock
from cafleet.adapters.fake.codex_threads import FakeCodexThreads
from cafleet.adapters.fake.launch_pads import FakeLaunchPad, FakeLaunchPads
from cafleet.application.messaging.channels import channel_ladder
from cafleet.domain.agents.profile import SESSION_FILE, TRANSCRIPT_FILE
from cafleet.domain.agents.registry import AgentProfiles, ProfileOverrides
from cafleet.domain.agents.status import HookEvent
from cafleet.domain.delivery import Announcement, DeliveryState, PushOutcome, describe_skip
from cafleet.domain.placement import CodingAgent, Multiplexer, PushTarget

from .keys import Typed

START = datetime(2026, 1, 1, 8, 0, tzinfo=UTC)
KEYS_ONLY = AgentProfiles.resolved({agent: ProfileOverrides(channels=()) for agent in CodingAgent})


class Rig:
    def __init__(self) -> None:
        self.pads, self.threads, self.keys = FakeLaunchPads(), FakeCodexThreads(), Typed()
        self.ladder = channel_ladder(
            KEYS_ONLY, self.pads, self.threads, FakeClock(START), self.keys, 200
        )

    def announce(
        self, agent: CodingAgent, pad: FakeLaunchPad | None, task: int, untaken: tuple[int, ...]
    ) -> PushOutcome:
        target = PushTarget(
            3, Multiplexer.TMUX, "sock", "%1", agent,
            launch_pad=None if pad is None else pad.location,
        )  # fmt: skip
        return self.ladder.announce(Announcement(task, 1, START, "hi", target, untaken))


@pytest.fixture
def rig() -> Rig:
    return Rig()


def test_a_message_joins_an_announcement_claude_has_not_taken_in(rig: Rig) -> None:
    pad = rig.pads.prepare(1, 3)
    pad.reported.append(HookEvent("prompt:10", START))  # 10 was taken, 11 not yet

    joined = rig.announce(CodingAgent.CLAUDE, pad, 12, untaken=(10, 11))

    assert joined == PushOutcome.skipped("joined:11", "tmux", "%1")
    assert rig.keys.texts == []
    assert "announced with message 11" in describe_skip(joined.error)


def test_once_the_agent_took_every_earlier_announcement_the_message_is_announced(
    rig: Rig,
) -> None:
    pad = rig.pads.prepare(1, 3)
    pad.reported += [HookEvent("prompt:10", START), HookEvent("handed:11", START)]

    outcome = rig.announce(CodingAgent.CLAUDE, pad, 12, untaken=(10, 11))

    assert outcome.state is DeliveryState.SENT
    assert len(rig.keys.texts) == 1 and "[cafleet msg 12 from 1" in rig.keys.texts[0]


def test_codex_and_opencode_records_are_read_to_tell(rig: Rig) -> None:
    codex, opencode = rig.pads.prepare(1, 3), rig.pads.prepare(1, 4)
    codex.files[TRANSCRIPT_FILE] = "/codex/t.jsonl"
    rig.threads.took["/codex/t.jsonl"] = {10: START}
    opencode.files[SESSION_FILE] = "ses_1"
    opencode.endpoint()
    http = AgentProfiles()[CodingAgent.OPENCODE].server
    assert http is not None
    listing = [{"info": {"role": "user", "time": {"created": 1}},
                "parts": [{"type": "text", "text": "[cafleet msg 10 from 1 T]\nhi"}]}]  # fmt: skip
    opencode.answers[http.messages_path.format(session="ses_1")] = json.dumps(listing)

    assert rig.announce(CodingAgent.CODEX, codex, 12, (10,)).state is DeliveryState.SENT
    assert rig.announce(CodingAgent.OPENCODE, opencode, 12, (10,)).error == "joined:10"


@pytest.mark.parametrize("agent", [CodingAgent.CUSTOM, CodingAgent.CLAUDE])
def test_an_agent_without_a_record_of_what_it_took_is_told_of_every_message(
    rig: Rig, agent: CodingAgent
) -> None:
    pad = rig.pads.prepare(1, 3) if agent is CodingAgent.CUSTOM else None  # Claude: no pad

    outcome = rig.announce(agent, pad, 12, untaken=(10, 11))

    assert outcome.state is DeliveryState.SENT
    assert len(rig.keys.texts) == 1

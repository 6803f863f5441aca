"""A member's own record of what it took in, when it is not known at start.

An OpenCode member that became ready by any rule but `http` has no session kept: it is found
later on its own server, once, at the first need (a delivery, a status read, a receipt read).
A Claude Code member whose hooks never ran keeps no record at all. A message joins an
earlier announcement only while the record can be read; otherwise it is announced.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from cafleet.adapters.fake.clock import FakeClock
from cafleet.adapters.fake.codex_threads import FakeCodexThreads
from cafleet.adapters.fake.launch_pads import FakeLaunchPad, FakeLaunchPads
from cafleet.application.members.status import AgentStatusReader
from cafleet.application.messaging.channels import channel_ladder
from cafleet.application.messaging.receipts import ReceiptReader
from cafleet.domain.agents.profile import SESSION_FILE, SPAWN_FILE, SpawnFacts
from cafleet.domain.agents.registry import AgentProfiles
from cafleet.domain.agents.status import AgentStatus, HookEvent, StatusReport
from cafleet.domain.delivery import Announcement, Channel, DeliveryState, PushOutcome
from cafleet.domain.placement import CodingAgent, Multiplexer, PaneState, Placement, PushTarget

from .keys import Typed

START = datetime(2026, 1, 1, 8, 0, tzinfo=UTC)
PROMPT = "You are w. FLEET ID: 1. YOUR MEMBER ID: 3."
WORK = "/work"
SESSIONS = "/session?roots=true"
PROFILES = AgentProfiles()


def ms(seconds: float) -> int:
    return int((START + timedelta(seconds=seconds)).timestamp() * 1000)


def session(sid: str, created: float, directory: str = WORK) -> dict[str, object]:
    return {"id": sid, "directory": directory, "agent": "cafleet", "time": {"created": ms(created)}}


def said(role: str, at: float, text: str = "") -> dict[str, object]:
    return {"info": {"role": role, "time": {"created": ms(at)}},
            "parts": [{"type": "text", "text": text}]}  # fmt: skip


def preview(task: int) -> str:
    return f"[cafleet msg {task} from 1 2026-01-01T08:00:00.000000+00:00]\nhi"


class Rig:
    def __init__(self) -> None:
        self.pads, self.threads, self.keys = FakeLaunchPads(), FakeCodexThreads(), Typed()
        self.clock = FakeClock(START)
        self.ladder = channel_ladder(PROFILES, self.pads, self.threads, self.clock, self.keys, 200)

    def opencode(self) -> FakeLaunchPad:
        """A member ready by the bounded wait: its pad kept its spawn, not its session. Its
        server lists its own session, one from before its spawn, and another member's."""
        pad = self.pads.prepare(1, 3)
        pad.endpoint()
        pad.files[SPAWN_FILE] = SpawnFacts(PROMPT, WORK, "", "/bin/opencode", START).text()
        pad.answers[SESSIONS] = json.dumps([
            session("ses_later", 40), session("ses_mine", 6), session("ses_before", -600),
            session("ses_elsewhere", 8, "/other"),
        ])  # fmt: skip
        histories = {
            "ses_later": [said("user", 40, "You are v. FLEET ID: 1. YOUR MEMBER ID: 4.")],
            "ses_mine": [said("user", 6, PROMPT), said("assistant", 7, "FAKE-DONE")],
            "ses_before": [said("user", -600, PROMPT)],
            "ses_elsewhere": [said("user", 8, PROMPT)],
        }
        for sid, messages in histories.items():
            pad.answers[f"/session/{sid}/message"] = json.dumps(messages)
        pad.post_statuses["/session/ses_mine/prompt_async"] = 204
        pad.answers["/session/status"] = "{}"
        pad.answers["/permission"] = "[]"
        return pad

    def announce(
        self, agent: CodingAgent, pad: FakeLaunchPad, task: int = 12, untaken: tuple[int, ...] = ()
    ) -> PushOutcome:
        target = PushTarget(3, Multiplexer.TMUX, "sock", "%1", agent, launch_pad=pad.location)
        return self.ladder.announce(Announcement(task, 1, START, "hi", target, untaken))

    def placement(self, agent: CodingAgent, pad: FakeLaunchPad) -> Placement:
        return Placement(
            3, 1, Multiplexer.TMUX, "main", "@0", "%1", agent, START,
            ready_at=START, launch_pad=pad.location,
        )  # fmt: skip


@pytest.fixture
def rig() -> Rig:
    return Rig()


# --------------------------------------------------------------- an OpenCode session found later


def test_an_opencode_member_without_a_kept_session_learns_it_at_its_first_delivery(
    rig: Rig,
) -> None:
    pad = rig.opencode()

    outcome = rig.announce(CodingAgent.OPENCODE, pad)

    assert [(a.channel, a.state) for a in outcome.attempts] == [
        (Channel.OPENCODE_HTTP, DeliveryState.SENT)
    ]
    assert [path for path, _ in pad.posted] == ["/session/ses_mine/prompt_async"]
    assert pad.files[SESSION_FILE] == "ses_mine"  # recorded once
    assert rig.keys.texts == []


def test_a_learned_session_is_kept_and_never_looked_for_again(rig: Rig) -> None:
    pad = rig.opencode()
    rig.announce(CodingAgent.OPENCODE, pad)
    del pad.answers[SESSIONS]  # a second search would find nothing

    again = rig.announce(CodingAgent.OPENCODE, pad, task=13)

    assert (again.channel, again.state) == (Channel.OPENCODE_HTTP, DeliveryState.SENT)


@pytest.mark.parametrize(
    "change",
    ["twin", "not-yet", "no-spawn", "silent"],
)
def test_an_opencode_session_not_told_apart_is_not_kept_and_the_message_is_typed(
    rig: Rig, change: str
) -> None:
    pad = rig.opencode()
    if change == "twin":  # another member started here since, with the same prompt
        pad.answers["/session/ses_later/message"] = json.dumps([said("user", 40, PROMPT)])
    elif change == "not-yet":  # the spawn prompt is not taken yet: no session of its own
        pad.answers["/session/ses_mine/message"] = "[]"
    elif change == "no-spawn":  # started before CAFleet kept what finds it
        del pad.files[SPAWN_FILE]
    else:
        pad.answers = {}

    outcome = rig.announce(CodingAgent.OPENCODE, pad)

    assert [(a.channel, a.error) for a in outcome.attempts] == [
        (Channel.OPENCODE_HTTP, "no-session"), (Channel.KEYS, None)
    ]  # fmt: skip
    assert SESSION_FILE not in pad.files


def test_the_status_of_an_opencode_member_ready_by_the_wait_rule_is_read_from_its_server(
    rig: Rig,
) -> None:
    pad = rig.opencode()
    reader = AgentStatusReader(rig.pads, PROFILES, rig.clock, rig.threads)
    placement = rig.placement(CodingAgent.OPENCODE, pad)

    idle = reader.report(placement, PaneState.RUNNING)
    pad.answers["/permission"] = '[{"id": "per_1", "permission": "bash"}]'
    asking = reader.report(placement, PaneState.RUNNING)

    assert (idle.status, asking.status) == (AgentStatus.IDLE, AgentStatus.WAITING)
    assert pad.files[SESSION_FILE] == "ses_mine"
    assert rig.threads.searches == 0  # an OpenCode pad's spawn is not a Codex conversation's


def test_the_receipts_of_an_opencode_member_ready_by_the_wait_rule_are_read(rig: Rig) -> None:
    pad = rig.opencode()
    listing = [said("user", 6, PROMPT), said("user", 20, preview(10)), said("assistant", 21)]
    pad.answers["/session/ses_mine/message?limit=40"] = json.dumps(listing)

    taken = ReceiptReader(rig.pads, PROFILES, rig.threads).taken(CodingAgent.OPENCODE, pad.location)

    assert taken == {10: START + timedelta(seconds=21)}
    assert pad.files[SESSION_FILE] == "ses_mine"


# -------------------------------------------- joining only an announcement whose receipt can come


def test_a_message_to_a_member_whose_session_is_not_known_is_announced_not_joined(
    rig: Rig,
) -> None:
    pad = rig.opencode()
    pad.answers["/session/ses_mine/message"] = "[]"  # its session cannot be found

    outcome = rig.announce(CodingAgent.OPENCODE, pad, task=12, untaken=(10,))

    assert outcome.state is DeliveryState.SENT
    assert len(rig.keys.texts) == 1 and "[cafleet msg 12 from 1" in rig.keys.texts[0]


def test_a_message_to_a_member_whose_server_is_silent_is_announced_not_joined(
    rig: Rig,
) -> None:
    pad = rig.opencode()
    pad.files[SESSION_FILE] = "ses_mine"
    pad.answers = {}  # the server does not answer its listing now

    outcome = rig.announce(CodingAgent.OPENCODE, pad, task=12, untaken=(10,))

    assert outcome.state is DeliveryState.SENT


def test_a_message_after_one_the_agent_took_in_is_announced_and_one_before_is_joined(
    rig: Rig,
) -> None:
    """The learned session's listing is what tells: 10 was taken in (an answer began after
    it), 11 is still queued behind the running step."""
    pad = rig.opencode()
    listing = [said("user", 6, PROMPT), said("user", 20, preview(10)), said("assistant", 21),
               said("user", 25, preview(11))]  # fmt: skip
    pad.answers["/session/ses_mine/message?limit=40"] = json.dumps(listing)

    after_taken = rig.announce(CodingAgent.OPENCODE, pad, task=12, untaken=(10,))
    after_queued = rig.announce(CodingAgent.OPENCODE, pad, task=13, untaken=(10, 11))

    assert (after_taken.channel, after_taken.state) == (Channel.OPENCODE_HTTP, DeliveryState.SENT)
    assert after_queued.error == "joined:11"


def test_a_codex_member_whose_conversation_is_not_found_is_told_of_every_message(
    rig: Rig,
) -> None:
    pad = rig.pads.prepare(1, 3)
    pad.files[SPAWN_FILE] = SpawnFacts(PROMPT, WORK, "/codex", "/bin/codex", START).text()

    outcome = rig.announce(CodingAgent.CODEX, pad, task=12, untaken=(10,))

    assert outcome.state is DeliveryState.SENT  # typed: no conversation to queue for
    assert len(rig.keys.texts) == 1


# --------------------------------------------------------------- Claude Code with its hooks off


def test_a_claude_member_whose_hooks_never_ran_gets_each_message_typed(rig: Rig) -> None:
    pad = rig.pads.prepare(1, 3)  # not even its SessionStart hook reported

    outcome = rig.announce(CodingAgent.CLAUDE, pad, task=12, untaken=(10, 11))

    assert [(a.channel, a.state) for a in outcome.attempts] == [
        (Channel.KEYS, DeliveryState.SENT)
    ]  # no hook waits, none will: not even tried
    assert len(rig.keys.texts) == 1


def test_a_claude_member_whose_hooks_run_still_joins_what_it_has_not_taken_in(rig: Rig) -> None:
    pad = rig.pads.prepare(1, 3)
    pad.reported += [HookEvent("session", START), HookEvent("prompt:10", START)]

    assert rig.announce(CodingAgent.CLAUDE, pad, 12, untaken=(10, 11)).error == "joined:11"


def test_a_claude_member_whose_hooks_are_off_is_unknown_and_says_why(rig: Rig) -> None:
    pad = rig.pads.prepare(1, 3)
    reader = AgentStatusReader(rig.pads, PROFILES, rig.clock)

    hookless = reader.report(rig.placement(CodingAgent.CLAUDE, pad), PaneState.RUNNING)
    pad.reported.append(HookEvent("session", START))
    started = reader.report(rig.placement(CodingAgent.CLAUDE, pad), PaneState.RUNNING)

    assert hookless == StatusReport(AgentStatus.UNKNOWN, note="hooks off")
    assert started == StatusReport.unknown()  # its hooks run; none told a status yet
    assert ReceiptReader(rig.pads, PROFILES, rig.threads).taken(
        CodingAgent.CLAUDE, pad.location
    ) == {}  # fmt: skip

"""Each member's agent status, from its pane, its placement, its hooks or its server."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from cafleet.adapters.fake.clock import FakeClock
from cafleet.adapters.fake.codex_threads import FakeCodexThreads
from cafleet.adapters.fake.launch_pads import FakeLaunchPad, FakeLaunchPads
from cafleet.adapters.fake.pane_driver import FakePaneDrivers
from cafleet.application.members.status import AgentStatusReader
from cafleet.application.ports.agents import AgentThread, LauncherStatus
from cafleet.domain.agents.profile import SESSION_FILE, SPAWN_FILE, SpawnFacts
from cafleet.domain.agents.registry import AgentProfiles
from cafleet.domain.agents.status import AgentStatus, HookEvent, StatusReport
from cafleet.domain.placement import CodingAgent, Multiplexer, PaneState, Placement

START = datetime(2026, 1, 1, 8, 0, tzinfo=UTC)


def at(seconds: float) -> datetime:
    return START + timedelta(seconds=seconds)


class Rig:
    def __init__(self) -> None:
        self.pads = FakeLaunchPads()
        self.clock = FakeClock(START)
        self.reader = AgentStatusReader(self.pads, AgentProfiles(), self.clock)

    def member(self, agent: CodingAgent, *, ready: bool = True) -> tuple[Placement, FakeLaunchPad]:
        pad = self.pads.prepare(1, 3)
        placement = Placement(
            3, 1, Multiplexer.TMUX, "main", "@0", "%1", agent, START,
            ready_at=START if ready else None, launch_pad=pad.location,
        )  # fmt: skip
        return placement, pad

    def report(self, placement: Placement, pane: PaneState | None = PaneState.RUNNING):
        return self.reader.report(placement, pane)


@pytest.fixture
def rig() -> Rig:
    return Rig()


@pytest.mark.parametrize(
    ("events", "expected"),
    [
        ([("session", 1), ("prompt", 2)], StatusReport(AgentStatus.WORKING, at(2))),
        ([("prompt", 2), ("idle", 5)], StatusReport(AgentStatus.IDLE, at(5))),
        ([("idle", 5), ("handed:12,13", 7)], StatusReport(AgentStatus.WORKING, at(7))),
        ([("prompt", 2), ("waiting:permission_prompt", 9)],
         StatusReport(AgentStatus.WAITING, at(9))),
        ([("idle", 5), ("waiting:idle_prompt", 65)], StatusReport(AgentStatus.IDLE, at(65))),
        ([("waiting:permission_prompt", 9), ("prompt", 12)],
         StatusReport(AgentStatus.WORKING, at(12))),  # the person answered; it works on
    ],
)  # fmt: skip
def test_claude_status_is_its_latest_telling_hook_event(
    rig: Rig, events: list[tuple[str, float]], expected: StatusReport
) -> None:
    placement, pad = rig.member(CodingAgent.CLAUDE)
    pad.reported = [HookEvent(name, at(t)) for name, t in events]

    assert rig.report(placement) == expected


def test_a_claude_member_whose_hooks_said_nothing_yet_is_unknown(rig: Rig) -> None:
    placement, pad = rig.member(CodingAgent.CLAUDE)
    pad.reported = [HookEvent("session", at(1))]

    assert rig.report(placement) == StatusReport.unknown()


def opencode(rig: Rig, busy: str, asking: str = "[]") -> tuple[Placement, FakeLaunchPad]:
    placement, pad = rig.member(CodingAgent.OPENCODE)
    pad.endpoint()
    pad.files[SESSION_FILE] = "ses_a"
    pad.answers = {"/session/status": busy, "/permission": asking}
    return placement, pad


@pytest.mark.parametrize(
    ("busy", "asking", "status"),
    [
        ("{}", "[]", AgentStatus.IDLE),
        ('{"ses_a": {"type": "busy"}}', "[]", AgentStatus.WORKING),
        ('{"ses_other": {"type": "busy"}}', "[]", AgentStatus.IDLE),
        ('{"ses_a": {"type": "busy"}}', '[{"id": "per_1", "permission": "bash"}]',
         AgentStatus.WAITING),
    ],
)  # fmt: skip
def test_opencode_status_comes_from_its_own_server(
    rig: Rig, busy: str, asking: str, status: AgentStatus
) -> None:
    placement, _ = opencode(rig, busy, asking)

    assert rig.report(placement).status is status


def test_an_opencode_status_keeps_the_time_it_was_first_seen(rig: Rig) -> None:
    placement, pad = opencode(rig, '{"ses_a": {"type": "busy"}}')
    first = rig.report(placement)
    rig.clock.advance(30)
    again = rig.report(placement)
    pad.answers["/session/status"] = "{}"
    rig.clock.advance(5)
    changed = rig.report(placement)

    assert first == again == StatusReport(AgentStatus.WORKING, START)
    assert changed == StatusReport(AgentStatus.IDLE, at(35))


def test_a_silent_opencode_server_gives_unknown(rig: Rig) -> None:
    placement, pad = opencode(rig, "{}")
    pad.answers = {}

    assert rig.report(placement) == StatusReport.unknown()


@pytest.mark.parametrize("agent", [CodingAgent.CODEX, CodingAgent.CUSTOM])
def test_agents_whose_pad_tells_nothing_are_unknown(rig: Rig, agent: CodingAgent) -> None:
    placement, _ = rig.member(agent)

    assert rig.report(placement) == StatusReport.unknown()


def test_the_pane_and_the_launcher_come_before_what_the_agent_said(rig: Rig) -> None:
    placement, pad = rig.member(CodingAgent.CLAUDE)
    pad.reported = [HookEvent("prompt", at(2))]
    starting, _ = rig.member(CodingAgent.CLAUDE, ready=False)

    assert rig.report(placement, PaneState.GONE) == StatusReport(AgentStatus.EXITED)
    assert rig.report(starting) == StatusReport(AgentStatus.STARTING, START)
    pad.launcher_status = LauncherStatus(exit_code=0)
    assert rig.report(placement) == StatusReport(AgentStatus.EXITED)


def test_a_member_without_a_pad_is_unknown(rig: Rig) -> None:
    placement, pad = rig.member(CodingAgent.CLAUDE)
    pad.reported = [HookEvent("session", at(1))]
    gone = Placement(3, 1, Multiplexer.TMUX, "main", "@0", "%1", CodingAgent.CLAUDE, START,
                     ready_at=START)  # fmt: skip

    assert rig.report(gone) == StatusReport.unknown()
    assert rig.report(placement, None) == StatusReport.unknown()  # multiplexer silent


def test_codex_status_comes_from_the_transcript_of_its_conversation(rig: Rig) -> None:
    threads = FakeCodexThreads()
    reader = AgentStatusReader(rig.pads, AgentProfiles(), rig.clock, threads)
    placement, pad = rig.member(CodingAgent.CODEX)
    pad.files[SPAWN_FILE] = SpawnFacts("Go.", "/work", "/codex", "/bin/codex", START).text()

    assert reader.report(placement, PaneState.RUNNING) == StatusReport.unknown()  # not found yet
    threads.add("/codex", "/work", "Go.", AgentThread("t-1", "/codex/rollout-t-1.jsonl"))
    threads.statuses["/codex/rollout-t-1.jsonl"] = StatusReport(AgentStatus.WORKING, at(3))

    assert reader.report(placement, PaneState.RUNNING) == StatusReport(AgentStatus.WORKING, at(3))
    assert pad.files[SESSION_FILE] == "t-1"


CODEX_APPROVAL = [
    "  Would you like to run the following command?",
    "  $ touch /project/asked.txt",
    "› 1. Yes, proceed (y)",
    "  3. No, and tell Codex what to do differently (esc)",
    "  Press enter to confirm or esc to cancel",
]


def test_a_codex_turn_showing_an_approval_dialog_is_waiting_since_first_seen(rig: Rig) -> None:
    threads, drivers = FakeCodexThreads(), FakePaneDrivers()
    pane = drivers(Multiplexer.TMUX, None).add_pane("codex", pane_id="%1")
    reader = AgentStatusReader(rig.pads, AgentProfiles(), rig.clock, threads, drivers)
    placement, pad = rig.member(CodingAgent.CODEX)
    pad.files[SPAWN_FILE] = SpawnFacts("Go.", "/work", "/codex", "/bin/codex", START).text()
    threads.add("/codex", "/work", "Go.", AgentThread("t-1", "/codex/rollout-t-1.jsonl"))
    threads.statuses["/codex/rollout-t-1.jsonl"] = StatusReport(AgentStatus.WORKING, at(3))
    pane.screen = ["• Working (3s • esc to interrupt)", "› "]

    assert reader.report(placement, PaneState.RUNNING) == StatusReport(AgentStatus.WORKING, at(3))
    rig.clock.advance(10)
    pane.screen = CODEX_APPROVAL
    asked = reader.report(placement, PaneState.RUNNING)
    rig.clock.advance(5)

    assert asked == StatusReport(AgentStatus.WAITING, at(10))
    assert reader.report(placement, PaneState.RUNNING) == asked  # the same wait, same time
    pane.screen = ["• Working (20s • esc to interrupt)", "› "]  # approved: the turn goes on
    assert reader.report(placement, PaneState.RUNNING) == StatusReport(AgentStatus.WORKING, at(3))
    threads.statuses["/codex/rollout-t-1.jsonl"] = StatusReport(AgentStatus.IDLE, at(30))
    pane.screen = CODEX_APPROVAL  # an idle turn's screen is not read at all
    assert reader.report(placement, PaneState.RUNNING) == StatusReport(AgentStatus.IDLE, at(30))


# --------------------------------------------------------------------------- herdr's detection


@pytest.mark.parametrize(
    ("detected", "status"),
    [("working", AgentStatus.WORKING), ("blocked", AgentStatus.WAITING),
     ("idle", AgentStatus.IDLE), ("done", AgentStatus.IDLE), ("unknown", AgentStatus.UNKNOWN),
     (None, AgentStatus.UNKNOWN)],
)  # fmt: skip
def test_an_agent_that_says_nothing_is_what_the_multiplexer_detects(
    rig: Rig, detected: str | None, status: AgentStatus
) -> None:
    placement, _ = rig.member(CodingAgent.CUSTOM)

    assert rig.reader.report(placement, PaneState.RUNNING, detected) == StatusReport(status)


def test_the_agent_s_own_word_wins_over_the_multiplexer_s(rig: Rig) -> None:
    placement, pad = rig.member(CodingAgent.CLAUDE)
    pad.reported = [HookEvent("prompt", at(2))]

    told = rig.reader.report(placement, PaneState.RUNNING, "idle")

    assert told == StatusReport(AgentStatus.WORKING, at(2))


def test_a_starting_or_gone_member_is_not_what_the_multiplexer_detects(rig: Rig) -> None:
    starting, _ = rig.member(CodingAgent.CUSTOM, ready=False)

    assert rig.reader.report(starting, PaneState.RUNNING, "working").status is AgentStatus.STARTING
    assert rig.reader.report(starting, PaneState.GONE, "working").status is AgentStatus.EXITED

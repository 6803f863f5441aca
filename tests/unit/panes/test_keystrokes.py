"""KeystrokeSender: the one way anything is typed into a pane (§7.3–7.4)."""

from __future__ import annotations

import pytest

from cafleet.application.keystrokes import Keystrokes, lock_key
from cafleet.application.ports import PushTarget
from cafleet.domain.delivery import DeliveryState, PushOutcome
from cafleet.domain.errors import Unavailable
from cafleet.domain.panes import PaneGone
from cafleet.domain.placement import CodingAgent, Multiplexer

from .builders import (
    ENTER,
    ESC,
    ESC_PAUSE,
    SOCKET,
    SUBMIT_DELAYS,
    PaneRig,
    RecordingLocks,
    TimedOutLocks,
    paste,
    target,
    text,
)

PREVIEW = "[cafleet msg 12 from 3 2026-01-01T08:00:00.000000+00:00]\nhello worker"


class Timeline:
    """Each sleep, with how many keystroke steps the pane had received when it happened."""

    def __init__(self, rig: PaneRig, pane_id: str) -> None:
        self.entries: list[tuple[str, float | tuple[str, str]]] = []
        self._seen = 0
        pane = rig.driver.panes[pane_id]
        original_sleep = rig.clock.sleep

        def sleep(seconds: float) -> None:
            self.entries.extend(("typed", step) for step in pane.typed[self._seen :])
            self._seen = len(pane.typed)
            self.entries.append(("sleep", seconds))
            original_sleep(seconds)

        self._pane = pane
        rig.clock.sleep = sleep  # type: ignore[method-assign]

    def read(self) -> list[tuple[str, float | tuple[str, str]]]:
        return self.entries + [("typed", step) for step in self._pane.typed[self._seen :]]


# --------------------------------------------------------------------------- sequences


def test_preview_is_esc_pause_paste_delay_enter(rig: PaneRig) -> None:
    pane = rig.driver.add_pane("claude")
    timeline = Timeline(rig, pane.pane_id)

    outcome = rig.keystrokes().deliver(target(pane.pane_id), Keystrokes.preview(PREVIEW))

    assert outcome == PushOutcome.sent("tmux", pane.pane_id)
    assert timeline.read() == [
        ("typed", ESC),
        ("sleep", ESC_PAUSE),
        ("typed", paste(PREVIEW)),
        ("sleep", SUBMIT_DELAYS["claude"]),
        ("typed", ENTER),
    ]
    assert pane.submitted() == [PREVIEW]


def test_ping_is_esc_pause_literal_poll_line_delay_enter(rig: PaneRig) -> None:
    pane = rig.driver.add_pane("claude")
    timeline = Timeline(rig, pane.pane_id)
    line = "cafleet message poll --fleet-id 1 --agent-id 3"

    rig.keystrokes().deliver(target(pane.pane_id), Keystrokes.poll_trigger(1, 3))

    assert timeline.read() == [
        ("typed", ESC),
        ("sleep", ESC_PAUSE),
        ("typed", text(line)),
        ("sleep", SUBMIT_DELAYS["claude"]),
        ("typed", ENTER),
    ]


@pytest.mark.parametrize(
    ("keys", "typed"),
    [
        pytest.param(Keystrokes.exit_command(), "/exit", id="exit"),
        pytest.param(Keystrokes.shell_command("git status"), "! git status", id="exec"),
        pytest.param(Keystrokes.wake("[monitor] wake: 1 agent due"), "[monitor] wake: 1 agent due",
                     id="wake"),
    ],
)  # fmt: skip
def test_payloads_without_esc_are_typed_then_delay_then_enter(
    rig: PaneRig, keys: Keystrokes, typed: str
) -> None:
    pane = rig.driver.add_pane("claude")
    timeline = Timeline(rig, pane.pane_id)

    outcome = rig.keystrokes().deliver(target(pane.pane_id), keys)

    assert outcome.state is DeliveryState.SENT
    assert timeline.read() == [
        ("typed", text(typed)),
        ("sleep", SUBMIT_DELAYS["claude"]),
        ("typed", ENTER),
    ]


@pytest.mark.parametrize(
    ("coding_agent", "command"),
    [
        (CodingAgent.CLAUDE, "claude"),
        (CodingAgent.CODEX, "codex"),
        (CodingAgent.OPENCODE, "opencode"),
        (CodingAgent.CUSTOM, "demo-agent"),
    ],
)
def test_submit_delay_follows_the_recipients_coding_agent(
    rig: PaneRig, coding_agent: CodingAgent, command: str
) -> None:
    pane = rig.driver.add_pane(command)

    rig.keystrokes().deliver(
        target(pane.pane_id, coding_agent=coding_agent), Keystrokes.preview(PREVIEW)
    )

    assert rig.clock.slept == [ESC_PAUSE, SUBMIT_DELAYS[coding_agent.value]]


def test_keystroke_payload_shapes() -> None:
    assert Keystrokes.preview("a\nb") == Keystrokes("a\nb", esc_first=True, bracketed=True)
    assert Keystrokes.poll_trigger(4, 9) == Keystrokes(
        "cafleet message poll --fleet-id 4 --agent-id 9", esc_first=True
    )
    assert Keystrokes.shell_command("ls") == Keystrokes("! ls")
    assert Keystrokes.exit_command() == Keystrokes("/exit")
    assert Keystrokes.wake("w") == Keystrokes("w")


# --------------------------------------------------------------------------- send lock


def test_the_pane_lock_is_held_from_the_check_through_enter(rig: PaneRig) -> None:
    pane = rig.driver.add_pane("claude")
    locks = RecordingLocks(rig.driver)

    rig.keystrokes(locks).deliver(target(pane.pane_id), Keystrokes.preview(PREVIEW))

    assert locks.holds == [(lock_key(target(pane.pane_id)), 30)]
    assert locks.typed_at_release == [3]


def test_lock_key_differs_by_backend_socket_and_pane() -> None:
    base = target("%1")
    keys = {
        lock_key(base),
        lock_key(target("%2")),
        lock_key(target("%1", socket="other.sock")),
        lock_key(target("%1", socket=None)),
        lock_key(PushTarget(3, Multiplexer.HERDR, SOCKET, "%1", CodingAgent.CLAUDE)),
    }

    assert len(keys) == 5
    assert lock_key(base) == lock_key(target("%1", agent_id=99))


def test_lock_timeout_fails_without_typing(rig: PaneRig) -> None:
    pane = rig.driver.add_pane("claude")
    locks = TimedOutLocks()

    outcome = rig.keystrokes(locks).deliver(target(pane.pane_id), Keystrokes.preview(PREVIEW))

    assert outcome == PushOutcome.failed("send lock timeout after 30s", "tmux", pane.pane_id)
    assert locks.timeouts == [30]
    assert pane.typed == []
    assert rig.clock.slept == []


# --------------------------------------------------------------------------- agent check


@pytest.mark.parametrize(
    ("coding_agent", "agent_commands", "foreground", "reason"),
    [
        pytest.param(CodingAgent.CLAUDE, (), "bash", "not-agent:bash", id="shell"),
        pytest.param(CodingAgent.CLAUDE, (), "-zsh", "not-agent:zsh", id="login-shell"),
        pytest.param(CodingAgent.CLAUDE, (), "/bin/sh", "not-agent:sh", id="shell-path"),
        pytest.param(CodingAgent.CLAUDE, (), "vim", "not-agent:vim", id="not-in-claude-list"),
        pytest.param(CodingAgent.CODEX, (), "claude", "not-agent:claude", id="wrong-agent"),
        pytest.param(CodingAgent.OPENCODE, (), "python3", "not-agent:python3", id="opencode"),
        pytest.param(CodingAgent.CUSTOM, ("demo-agent", "python3"), "perl", "not-agent:perl",
                     id="custom-not-in-its-list"),
        pytest.param(CodingAgent.CUSTOM, (), "fish", "not-agent:fish", id="custom-shell"),
    ],
)  # fmt: skip
def test_a_pane_not_running_the_agent_is_skipped_untouched(
    rig: PaneRig,
    coding_agent: CodingAgent,
    agent_commands: tuple[str, ...],
    foreground: str,
    reason: str,
) -> None:
    pane = rig.driver.add_pane(foreground)
    to = target(pane.pane_id, coding_agent=coding_agent, agent_commands=agent_commands)

    outcome = rig.keystrokes().deliver(to, Keystrokes.preview(PREVIEW))

    assert outcome == PushOutcome.skipped(reason, "tmux", pane.pane_id)
    assert pane.typed == []
    assert rig.clock.slept == []


@pytest.mark.parametrize(
    ("coding_agent", "agent_commands", "foreground"),
    [
        pytest.param(CodingAgent.CLAUDE, (), "claude", id="claude"),
        pytest.param(CodingAgent.CLAUDE, (), "node", id="claude-as-node"),
        pytest.param(CodingAgent.CODEX, (), "codex", id="codex"),
        pytest.param(CodingAgent.OPENCODE, (), "bun", id="opencode-as-bun"),
        pytest.param(CodingAgent.CUSTOM, ("demo-agent", "python3"), "python3",
                     id="custom-interpreter"),
        pytest.param(CodingAgent.CUSTOM, (), "anything-but-a-shell", id="custom-without-list"),
    ],
)  # fmt: skip
def test_a_pane_running_an_accepted_command_is_typed_into(
    rig: PaneRig, coding_agent: CodingAgent, agent_commands: tuple[str, ...], foreground: str
) -> None:
    pane = rig.driver.add_pane(foreground)
    to = target(pane.pane_id, coding_agent=coding_agent, agent_commands=agent_commands)

    outcome = rig.keystrokes().deliver(to, Keystrokes.exit_command())

    assert outcome == PushOutcome.sent("tmux", pane.pane_id)
    assert pane.submitted() == ["/exit"]


def test_accepted_commands_come_from_the_settings(rig: PaneRig) -> None:
    rig.agent_commands = {"claude": ("claude-dev",)}
    accepted = rig.driver.add_pane("claude-dev")
    refused = rig.driver.add_pane("claude")
    sender = rig.keystrokes()

    assert sender.deliver(target(accepted.pane_id), Keystrokes.exit_command()).state is (
        DeliveryState.SENT
    )
    assert sender.deliver(target(refused.pane_id), Keystrokes.exit_command()) == (
        PushOutcome.skipped("not-agent:claude", "tmux", refused.pane_id)
    )


def test_a_missing_pane_is_skipped_as_gone(rig: PaneRig) -> None:
    outcome = rig.keystrokes().deliver(target("%77"), Keystrokes.preview(PREVIEW))

    assert outcome == PushOutcome.skipped("pane-gone", "tmux", "%77")
    assert rig.clock.slept == []


def test_a_dead_pane_is_skipped_as_gone(rig: PaneRig) -> None:
    pane = rig.driver.add_pane("claude")
    pane.dead = True

    outcome = rig.keystrokes().deliver(target(pane.pane_id), Keystrokes.preview(PREVIEW))

    assert outcome == PushOutcome.skipped("pane-gone", "tmux", pane.pane_id)
    assert pane.typed == []


def test_the_pane_is_looked_up_on_the_server_the_target_names(rig: PaneRig) -> None:
    decoy = rig.drivers(Multiplexer.TMUX, None).add_pane("claude", pane_id="%1")
    pane = rig.driver.add_pane("claude", pane_id="%1")

    rig.keystrokes().deliver(target("%1"), Keystrokes.exit_command())

    assert pane.submitted() == ["/exit"]
    assert decoy.typed == []


# --------------------------------------------------------------------------- failures


def test_an_unreachable_server_fails_with_its_reason(rig: PaneRig) -> None:
    pane = rig.driver.add_pane("claude")
    rig.driver.unreachable = "connection refused"

    outcome = rig.keystrokes().deliver(target(pane.pane_id), Keystrokes.preview(PREVIEW))

    assert outcome == PushOutcome.failed(
        "cannot reach the tmux server: connection refused", "tmux", pane.pane_id
    )
    assert pane.typed == []


@pytest.mark.parametrize(
    ("keys", "failing_step"),
    [
        pytest.param(Keystrokes.preview(PREVIEW), "paste_text", id="paste"),
        pytest.param(Keystrokes.exit_command(), "type_text", id="type"),
        pytest.param(Keystrokes.poll_trigger(1, 3), "type_text", id="ping-type"),
    ],
)
def test_a_failed_text_step_fails_and_presses_no_enter(
    rig: PaneRig, keys: Keystrokes, failing_step: str
) -> None:
    pane = rig.driver.add_pane("claude")
    rig.driver.failures[failing_step] = Unavailable("tmux send-keys timed out after 5s")

    outcome = rig.keystrokes().deliver(target(pane.pane_id), keys)

    assert outcome == PushOutcome.failed("tmux send-keys timed out after 5s", "tmux", pane.pane_id)
    assert ENTER not in pane.typed
    assert pane.submitted() == []


def test_a_failed_esc_stops_before_any_text(rig: PaneRig) -> None:
    pane = rig.driver.add_pane("claude")
    rig.driver.failures["send_keys"] = Unavailable("tmux send-keys failed: server exited")

    outcome = rig.keystrokes().deliver(target(pane.pane_id), Keystrokes.preview(PREVIEW))

    assert outcome == PushOutcome.failed(
        "tmux send-keys failed: server exited", "tmux", pane.pane_id
    )
    assert pane.typed == []


def test_a_pane_vanishing_mid_sequence_is_skipped_as_gone(rig: PaneRig) -> None:
    pane = rig.driver.add_pane("claude")
    rig.driver.failures["paste_text"] = PaneGone(pane.pane_id)

    outcome = rig.keystrokes().deliver(target(pane.pane_id), Keystrokes.preview(PREVIEW))

    assert outcome == PushOutcome.skipped("pane-gone", "tmux", pane.pane_id)
    assert ENTER not in pane.typed


def test_a_herdr_target_reports_herdr_as_transport(rig: PaneRig) -> None:
    pane = rig.drivers(Multiplexer.HERDR, "herdr.sock").add_pane("claude")
    to = PushTarget(3, Multiplexer.HERDR, "herdr.sock", pane.pane_id, CodingAgent.CLAUDE)

    outcome = rig.keystrokes().deliver(to, Keystrokes.exit_command())

    assert outcome == PushOutcome.sent("herdr", pane.pane_id)

"""KeystrokeSender: the one way anything is typed into a pane."""

from __future__ import annotations

import pytest

from cafleet.application.panes.keystrokes import Keystrokes, lock_key
from cafleet.domain.delivery import Channel, DeliveryState, PushOutcome, Residue
from cafleet.domain.errors import Unavailable
from cafleet.domain.panes import PaneGone
from cafleet.domain.placement import CodingAgent, Multiplexer, PushTarget
from cafleet.domain.preview import one_line
from support.pane_rig import (
    ENTER,
    ESC,
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


def skipped(
    reason: str, transport: str, pane_id: str, residue: Residue = Residue.NOTHING
) -> PushOutcome:
    """A keystroke outcome: its channel is always `keys`, with what it left in the composer."""
    return PushOutcome(
        DeliveryState.SKIPPED, transport, pane_id, reason, Channel.KEYS, residue=residue
    )


def failed(
    error: str, transport: str, pane_id: str, residue: Residue = Residue.NOTHING
) -> PushOutcome:
    return PushOutcome(
        DeliveryState.FAILED, transport, pane_id, error, Channel.KEYS, residue=residue
    )


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


def test_preview_is_paste_delay_enter_without_esc(rig: PaneRig) -> None:
    pane = rig.driver.add_pane("claude")
    timeline = Timeline(rig, pane.pane_id)

    outcome = rig.keystrokes().deliver(target(pane.pane_id), Keystrokes.preview(PREVIEW))

    assert outcome == PushOutcome.sent("tmux", pane.pane_id)
    assert timeline.read() == [
        ("typed", paste(PREVIEW)),
        ("sleep", SUBMIT_DELAYS["claude"]),
        ("typed", ENTER),
    ]
    assert pane.submitted() == [PREVIEW]


def test_ping_is_literal_poll_line_delay_enter_without_esc(rig: PaneRig) -> None:
    pane = rig.driver.add_pane("claude")
    timeline = Timeline(rig, pane.pane_id)
    line = "cafleet message poll --fleet-id 1 --agent-id 3"

    rig.keystrokes().deliver(target(pane.pane_id), Keystrokes.poll_trigger(1, 3))

    assert timeline.read() == [
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
def test_plain_payloads_are_typed_then_delay_then_enter(
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
    "keys",
    [
        pytest.param(Keystrokes.preview(PREVIEW), id="preview"),
        pytest.param(Keystrokes.poll_trigger(1, 3), id="ping"),
        pytest.param(Keystrokes.exit_command(), id="exit"),
        pytest.param(Keystrokes.shell_command("ls"), id="exec"),
        pytest.param(Keystrokes.wake("wake"), id="wake"),
    ],
)
@pytest.mark.parametrize(
    ("coding_agent", "command"),
    [
        (CodingAgent.CLAUDE, "claude"),
        (CodingAgent.CODEX, "codex"),
        (CodingAgent.OPENCODE, "opencode"),
        (CodingAgent.CUSTOM, "demo-agent"),
    ],
)
def test_no_payload_ever_sends_esc(
    rig: PaneRig, keys: Keystrokes, coding_agent: CodingAgent, command: str
) -> None:
    pane = rig.driver.add_pane(command)

    outcome = rig.keystrokes().deliver(target(pane.pane_id, coding_agent=coding_agent), keys)

    assert outcome.state is DeliveryState.SENT
    assert ESC not in pane.typed
    assert [step for step in pane.typed if step[0] == "key"] == [ENTER]


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

    assert rig.clock.slept == [SUBMIT_DELAYS[coding_agent.value]]


@pytest.mark.parametrize(
    ("coding_agent", "command", "delay"),
    [
        (CodingAgent.CLAUDE, "claude", 0.05),
        (CodingAgent.CODEX, "codex", 0.05),
        (CodingAgent.OPENCODE, "opencode", 0.1),
        (CodingAgent.CUSTOM, "demo-agent", 0.2),
    ],
)
def test_the_default_submit_delays_come_from_the_profiles(
    rig: PaneRig, coding_agent: CodingAgent, command: str, delay: float
) -> None:
    rig.submit_delays = {}
    pane = rig.driver.add_pane(command)

    rig.keystrokes().deliver(target(pane.pane_id, coding_agent=coding_agent), Keystrokes.wake("w"))

    assert rig.clock.slept == [delay]


def test_keystroke_payload_shapes() -> None:
    assert Keystrokes.preview("a\nb") == Keystrokes("a\nb", bracketed=True)
    assert Keystrokes.poll_trigger(4, 9) == Keystrokes(
        "cafleet message poll --fleet-id 4 --agent-id 9"
    )
    assert Keystrokes.shell_command("ls") == Keystrokes("! ls", shell=True)
    assert Keystrokes.exit_command() == Keystrokes("/exit")
    assert Keystrokes.wake("w") == Keystrokes("w")
    assert not hasattr(Keystrokes("x"), "esc_first")


# --------------------------------------------------------------------------- send lock


def test_the_pane_lock_is_held_from_the_check_through_enter(rig: PaneRig) -> None:
    pane = rig.driver.add_pane("claude")
    locks = RecordingLocks(rig.driver)

    rig.keystrokes(locks).deliver(target(pane.pane_id), Keystrokes.preview(PREVIEW))

    assert locks.holds == [(lock_key(target(pane.pane_id)), 30)]
    assert locks.typed_at_release == [2]  # the paste and Enter, both under the lock


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

    assert outcome == failed("send lock timeout after 30s", "tmux", pane.pane_id)
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
        pytest.param(CodingAgent.CLAUDE, (), "node", "not-agent:node", id="claude-is-not-node"),
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

    assert outcome == skipped(reason, "tmux", pane.pane_id)
    assert pane.typed == []
    assert rig.clock.slept == []


# A runtime in front says nothing of what it runs: its argv must run the agent's program.
@pytest.mark.parametrize(
    ("coding_agent", "agent_commands", "argv"),
    [
        pytest.param(CodingAgent.CODEX, (), ("node",), id="codex-node-repl"),
        pytest.param(CodingAgent.CODEX, (), ("node", "-i"), id="codex-node-interactive"),
        pytest.param(CodingAgent.CODEX, (), ("node", "-e", "codex"), id="codex-node-eval"),
        pytest.param(CodingAgent.CODEX, (), ("node", "/srv/other.js"), id="codex-other-script"),
        pytest.param(CodingAgent.OPENCODE, (), ("node",), id="opencode-node-repl"),
        pytest.param(CodingAgent.OPENCODE, (), ("bun", "repl"), id="opencode-bun-repl"),
        pytest.param(CodingAgent.CUSTOM, ("agent.py", "python3"), ("python3",),
                     id="custom-python-repl"),
        pytest.param(CodingAgent.CUSTOM, ("agent.py", "python3"), ("python3", "-c", "x"),
                     id="custom-python-inline"),
        pytest.param(CodingAgent.CUSTOM, (), ("python3", "/opt/agent.py"),
                     id="custom-without-list"),
    ],
)  # fmt: skip
def test_a_bare_runtime_in_front_is_not_the_agent(
    rig: PaneRig, coding_agent: CodingAgent, agent_commands: tuple[str, ...], argv: tuple[str, ...]
) -> None:
    runtime = argv[0]
    pane = rig.driver.add_pane(runtime, argv=argv)
    to = target(pane.pane_id, coding_agent=coding_agent, agent_commands=agent_commands)

    outcome = rig.keystrokes().deliver(to, Keystrokes.preview(PREVIEW))

    assert outcome == skipped(f"not-agent:{runtime}", "tmux", pane.pane_id)
    assert pane.typed == []
    assert rig.clock.slept == []


@pytest.mark.parametrize(
    ("coding_agent", "agent_commands", "argv"),
    [
        pytest.param(CodingAgent.CLAUDE, (), ("claude",), id="claude"),
        pytest.param(CodingAgent.CODEX, (), ("codex",), id="codex"),
        # what the pinned codex shows under tmux: node running the npm bin link
        pytest.param(CodingAgent.CODEX, (), ("node", "/n/.bin/codex", "--", "hi"),
                     id="codex-as-node"),
        pytest.param(CodingAgent.CODEX, (), ("node", "--no-warnings", "/n/codex/bin/codex.js"),
                     id="codex-package-script"),
        pytest.param(CodingAgent.OPENCODE, (), ("opencode",), id="opencode"),
        pytest.param(CodingAgent.OPENCODE, (), ("node", "/usr/bin/opencode"),
                     id="opencode-as-node"),
        pytest.param(CodingAgent.OPENCODE, (), ("bun", "run", "/x/opencode"), id="opencode-as-bun"),
        pytest.param(CodingAgent.CUSTOM, ("demo-agent", "python3"),
                     ("/usr/bin/python3", "-u", "/home/me/bin/demo-agent", "hi"),
                     id="custom-interpreter"),
        pytest.param(CodingAgent.CUSTOM, ("python", "cafleet.demo.agent"),
                     ("python", "-m", "cafleet.demo.agent", "hi"), id="custom-module"),
        pytest.param(CodingAgent.CUSTOM, (), ("anything-but-a-shell",), id="custom-without-list"),
    ],
)  # fmt: skip
def test_a_pane_running_an_accepted_command_is_typed_into(
    rig: PaneRig, coding_agent: CodingAgent, agent_commands: tuple[str, ...], argv: tuple[str, ...]
) -> None:
    foreground = argv[0].rsplit("/", 1)[-1]
    pane = rig.driver.add_pane(foreground, argv=argv)
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
        skipped("not-agent:claude", "tmux", refused.pane_id)
    )


def test_a_missing_pane_is_skipped_as_gone(rig: PaneRig) -> None:
    outcome = rig.keystrokes().deliver(target("%77"), Keystrokes.preview(PREVIEW))

    assert outcome == skipped("pane-gone", "tmux", "%77")
    assert rig.clock.slept == []


def test_a_dead_pane_is_skipped_as_gone(rig: PaneRig) -> None:
    pane = rig.driver.add_pane("claude")
    pane.dead = True

    outcome = rig.keystrokes().deliver(target(pane.pane_id), Keystrokes.preview(PREVIEW))

    assert outcome == skipped("pane-gone", "tmux", pane.pane_id)
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

    assert outcome == failed(
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

    assert outcome == failed(
        "tmux send-keys timed out after 5s", "tmux", pane.pane_id, Residue.MAYBE_TEXT
    )
    assert ENTER not in pane.typed
    assert pane.submitted() == []


def test_a_failed_enter_fails_the_delivery_after_the_text(rig: PaneRig) -> None:
    pane = rig.driver.add_pane("claude")
    rig.driver.failures["send_keys"] = Unavailable("tmux send-keys failed: server exited")

    outcome = rig.keystrokes().deliver(target(pane.pane_id), Keystrokes.preview(PREVIEW))

    assert outcome == failed(
        "tmux send-keys failed: server exited", "tmux", pane.pane_id, Residue.MAYBE_SUBMITTED
    )
    assert pane.typed == [paste(PREVIEW)]
    assert pane.submitted() == []


def test_a_failed_screen_read_stops_before_any_text(rig: PaneRig) -> None:
    pane = rig.driver.add_pane("claude")
    rig.driver.failures["capture"] = Unavailable("tmux capture-pane timed out after 5s")

    outcome = rig.keystrokes().deliver(target(pane.pane_id), Keystrokes.preview(PREVIEW))

    assert outcome == failed("tmux capture-pane timed out after 5s", "tmux", pane.pane_id)
    assert pane.typed == []
    assert rig.clock.slept == []


def test_a_pane_vanishing_mid_sequence_is_skipped_as_gone(rig: PaneRig) -> None:
    pane = rig.driver.add_pane("claude")
    rig.driver.failures["paste_text"] = PaneGone(pane.pane_id)

    outcome = rig.keystrokes().deliver(target(pane.pane_id), Keystrokes.preview(PREVIEW))

    assert outcome == skipped("pane-gone", "tmux", pane.pane_id, Residue.MAYBE_TEXT)
    assert ENTER not in pane.typed


def test_a_herdr_target_reports_herdr_as_transport(rig: PaneRig) -> None:
    pane = rig.drivers(Multiplexer.HERDR, "herdr.sock").add_pane("claude")
    to = PushTarget(3, Multiplexer.HERDR, "herdr.sock", pane.pane_id, CodingAgent.CLAUDE)

    outcome = rig.keystrokes().deliver(to, Keystrokes.exit_command())

    assert outcome == PushOutcome.sent("herdr", pane.pane_id)


# --------------------------------------------------------------------------- dialogs


@pytest.mark.parametrize(
    ("coding_agent", "command", "screen", "sign"),
    [
        pytest.param(CodingAgent.CLAUDE, "claude",
                     ["Is this a project you created or one you trust?", " > 1. Yes, I trust",
                      "   this folder", "   2. No, exit"],
                     "trust this folder", id="claude-trust-wrapped"),
        pytest.param(CodingAgent.CLAUDE, "claude",
                     ["Bash command", "  rm -rf build", "Do you want to PROCEED?"],
                     "do you want to proceed", id="claude-permission-any-case"),
        pytest.param(CodingAgent.CLAUDE, "claude",
                     ["Detected a custom API key", "Use this API key?"],
                     "use this api key", id="claude-api-key"),
        pytest.param(CodingAgent.CODEX, "codex", ["Welcome to Codex", "Sign in with ChatGPT"],
                     "sign in with chatgpt", id="codex-login"),
    ],
)  # fmt: skip
def test_a_dialog_on_screen_is_skipped_before_any_text(
    rig: PaneRig, coding_agent: CodingAgent, command: str, screen: list[str], sign: str
) -> None:
    pane = rig.driver.add_pane(command)
    pane.screen = screen

    outcome = rig.keystrokes().deliver(
        target(pane.pane_id, coding_agent=coding_agent), Keystrokes.preview(PREVIEW)
    )

    assert outcome == skipped(f"dialog:{sign}", "tmux", pane.pane_id)
    assert pane.typed == []
    assert rig.clock.slept == []


def test_an_ordinary_screen_is_no_dialog(rig: PaneRig) -> None:
    pane = rig.driver.add_pane("claude")
    pane.screen = ["> fix the tests", "  Reading 3 files (esc to interrupt)", "> "]

    outcome = rig.keystrokes().deliver(target(pane.pane_id), Keystrokes.preview(PREVIEW))

    assert outcome == PushOutcome.sent("tmux", pane.pane_id)
    assert pane.submitted() == [PREVIEW]


def test_an_agent_without_dialog_signs_is_typed_into_without_reading_its_screen(
    rig: PaneRig,
) -> None:
    pane = rig.driver.add_pane("demo-agent")
    pane.screen = ["Do you trust this folder?"]  # means nothing to a custom agent
    rig.driver.failures["capture"] = Unavailable("the screen must not be read")

    outcome = rig.keystrokes().deliver(
        target(pane.pane_id, coding_agent=CodingAgent.CUSTOM), Keystrokes.preview(PREVIEW)
    )

    assert outcome == PushOutcome.sent("tmux", pane.pane_id)
    assert pane.submitted() == [one_line(PREVIEW)]


# --------------------------------------------------------------------------- bracketed paste


@pytest.mark.parametrize(
    "coding_agent", [CodingAgent.CLAUDE, CodingAgent.CODEX, CodingAgent.OPENCODE]
)
def test_an_agent_with_bracketed_paste_gets_the_two_line_preview(
    rig: PaneRig, coding_agent: CodingAgent
) -> None:
    pane = rig.driver.add_pane(coding_agent.value)

    outcome = rig.keystrokes().deliver(
        target(pane.pane_id, coding_agent=coding_agent), Keystrokes.preview(PREVIEW)
    )

    assert outcome == PushOutcome.sent("tmux", pane.pane_id)
    assert pane.typed == [paste(PREVIEW), ENTER]


def test_an_agent_without_bracketed_paste_gets_the_preview_as_one_submission(
    rig: PaneRig,
) -> None:
    pane = rig.driver.add_pane("lineagent")

    outcome = rig.keystrokes().deliver(
        target(pane.pane_id, coding_agent=CodingAgent.CUSTOM, agent_commands=("lineagent",)),
        Keystrokes.preview(PREVIEW),
    )

    assert outcome == PushOutcome.sent("tmux", pane.pane_id)
    header, body = PREVIEW.split("\n")
    assert pane.typed == [paste(f"{header} {body}"), ENTER]
    assert pane.submitted() == [f"{header} {body}"]


def test_an_opencode_permission_dialog_is_never_typed_into(rig: PaneRig) -> None:
    pane = rig.driver.add_pane("opencode")
    pane.screen = [
        "  ┃  △ Permission required",
        "  ┃  $ touch /project/asked.txt",
        "  ┃   Allow once   Allow always   Reject          ⇆ select  enter confirm",
        "  ┃",
    ]

    outcome = rig.keystrokes().deliver(
        target(pane.pane_id, coding_agent=CodingAgent.OPENCODE), Keystrokes.preview(PREVIEW)
    )

    assert outcome == skipped("dialog:allow always", "tmux", pane.pane_id)
    assert pane.typed == []


# --------------------------------------------------------------------------- before Enter


def test_the_check_runs_again_between_the_text_and_enter(rig: PaneRig) -> None:
    pane = rig.driver.add_pane("claude")
    looked: list[int] = []
    original = rig.driver.pane

    def pane_lookup(pane_id: str):  # type: ignore[no-untyped-def]
        looked.append(len(pane.typed))
        return original(pane_id)

    rig.driver.pane = pane_lookup  # type: ignore[method-assign]

    outcome = rig.keystrokes().deliver(target(pane.pane_id), Keystrokes.preview(PREVIEW))

    assert outcome.state is DeliveryState.SENT
    assert looked == [0, 1]  # before the paste, and after it but before Enter


def test_an_agent_leaving_between_paste_and_enter_gets_no_enter(rig: PaneRig) -> None:
    pane = rig.driver.add_pane("claude")

    def agent_quits() -> None:
        pane.command = "bash"

    rig.clock.after(SUBMIT_DELAYS["claude"], agent_quits)

    outcome = rig.keystrokes().deliver(target(pane.pane_id), Keystrokes.preview(PREVIEW))

    assert outcome == skipped("not-agent:bash (before Enter)", "tmux", pane.pane_id, Residue.TEXT)
    assert pane.typed == [paste(PREVIEW)]
    assert ENTER not in pane.typed
    assert rig.clock.slept == [SUBMIT_DELAYS["claude"]]


def test_a_runtime_agent_leaving_a_bare_runtime_behind_gets_no_enter(rig: PaneRig) -> None:
    pane = rig.driver.add_pane("node", argv=("node", "/n/.bin/codex", "--", "hi"))

    def codex_quits_to_a_node_repl() -> None:
        pane.argv = ("node",)

    rig.clock.after(SUBMIT_DELAYS["codex"], codex_quits_to_a_node_repl)

    outcome = rig.keystrokes().deliver(
        target(pane.pane_id, coding_agent=CodingAgent.CODEX), Keystrokes.preview(PREVIEW)
    )

    assert outcome == skipped("not-agent:node (before Enter)", "tmux", pane.pane_id, Residue.TEXT)
    assert pane.typed == [paste(PREVIEW)]


def test_a_dialog_opening_between_text_and_enter_gets_no_enter(rig: PaneRig) -> None:
    pane = rig.driver.add_pane("claude")

    def dialog_opens() -> None:
        pane.screen = ["Bash command", "Do you want to proceed?", "> 1. Yes", "  2. No"]

    rig.clock.after(SUBMIT_DELAYS["claude"], dialog_opens)

    outcome = rig.keystrokes().deliver(target(pane.pane_id), Keystrokes.poll_trigger(1, 3))

    assert outcome == skipped(
        "dialog:do you want to proceed (before Enter)", "tmux", pane.pane_id, Residue.TEXT
    )
    assert pane.typed == [text("cafleet message poll --fleet-id 1 --agent-id 3")]


def test_a_pane_closing_between_text_and_enter_gets_no_enter(rig: PaneRig) -> None:
    pane = rig.driver.add_pane("codex")
    rig.clock.after(SUBMIT_DELAYS["codex"], lambda: rig.driver.panes.pop(pane.pane_id))

    outcome = rig.keystrokes().deliver(
        target(pane.pane_id, coding_agent=CodingAgent.CODEX), Keystrokes.exit_command()
    )

    assert outcome == skipped("pane-gone (before Enter)", "tmux", pane.pane_id, Residue.TEXT)
    assert pane.typed == [text("/exit")]


def test_a_target_whose_agent_is_still_starting_is_not_typed_into(rig: PaneRig) -> None:
    pane = rig.driver.add_pane("claude")
    starting = PushTarget(
        3, Multiplexer.TMUX, SOCKET, pane.pane_id, CodingAgent.CLAUDE, ready=False
    )

    outcome = rig.keystrokes().deliver(starting, Keystrokes.preview(PREVIEW))

    assert outcome == skipped("agent-starting", "tmux", pane.pane_id)
    assert pane.typed == []
    assert rig.clock.slept == []


# --------------------------------------------------------------------------- shell commands

OPENCODE_BUSY = ["  ┃  RUN: sleep 15", "  ┃  Fake model", "   ⬝⬝■■■■■■  esc interrupt   ctrl+p"]
OPENCODE_IDLE = ["  ┃  FAKE-DONE", "  ┃  Fake model", "   /work                 ctrl+p"]


def opencode_target(pane_id: str) -> PushTarget:
    return target(pane_id, coding_agent=CodingAgent.OPENCODE)


def test_a_shell_command_waits_for_an_opencode_turn_to_end(rig: PaneRig) -> None:
    pane = rig.driver.add_pane("opencode")
    pane.screen = OPENCODE_BUSY

    def turn_ends() -> None:
        pane.screen = OPENCODE_IDLE

    rig.clock.after(7, turn_ends)

    outcome = rig.keystrokes().deliver(
        opencode_target(pane.pane_id), Keystrokes.shell_command("make test")
    )

    assert outcome == PushOutcome.sent("tmux", pane.pane_id)
    assert pane.submitted() == ["! make test"]
    assert sum(rig.clock.slept) == pytest.approx(7 + SUBMIT_DELAYS["opencode"])


def test_a_turn_that_begins_while_a_shell_command_is_typed_holds_enter_until_it_ends(
    rig: PaneRig,
) -> None:
    pane = rig.driver.add_pane("opencode")
    pane.screen = OPENCODE_IDLE  # idle when checked, then a queued prompt starts a turn

    def turn_starts() -> None:
        pane.screen = OPENCODE_BUSY
        rig.clock.after(9, turn_ends)

    def turn_ends() -> None:
        pane.screen = OPENCODE_IDLE

    rig.clock.after(SUBMIT_DELAYS["opencode"] / 2, turn_starts)

    outcome = rig.keystrokes().deliver(
        opencode_target(pane.pane_id), Keystrokes.shell_command("make test")
    )

    assert outcome == PushOutcome.sent("tmux", pane.pane_id)
    assert pane.submitted() == ["! make test"]
    assert sum(rig.clock.slept) == pytest.approx(SUBMIT_DELAYS["opencode"] + 9)  # Enter at once


def test_a_shell_command_to_an_opencode_turn_that_never_ends_is_skipped_untyped(
    rig: PaneRig,
) -> None:
    pane = rig.driver.add_pane("opencode")
    pane.screen = OPENCODE_BUSY

    outcome = rig.keystrokes().deliver(
        opencode_target(pane.pane_id), Keystrokes.shell_command("make test")
    )

    assert outcome == skipped("agent-busy", "tmux", pane.pane_id)
    assert pane.typed == []
    assert sum(rig.clock.slept) == pytest.approx(120)


def test_a_preview_to_a_busy_opencode_is_typed_at_once(rig: PaneRig) -> None:
    pane = rig.driver.add_pane("opencode")
    pane.screen = OPENCODE_BUSY  # opencode queues a prompt typed during a turn

    outcome = rig.keystrokes().deliver(opencode_target(pane.pane_id), Keystrokes.preview(PREVIEW))

    assert outcome == PushOutcome.sent("tmux", pane.pane_id)
    assert rig.clock.slept == [SUBMIT_DELAYS["opencode"]]


@pytest.mark.parametrize(
    ("coding_agent", "command", "busy_row"),
    [
        (CodingAgent.CLAUDE, "claude", "✻ Brewing… (3s · esc to interrupt)"),
        (CodingAgent.CODEX, "codex", "• Working (3s • esc to interrupt)"),
    ],
)
def test_a_shell_command_to_a_busy_claude_or_codex_is_typed_at_once(
    rig: PaneRig, coding_agent: CodingAgent, command: str, busy_row: str
) -> None:
    pane = rig.driver.add_pane(command)  # claude queues it, codex runs it beside the turn
    pane.screen = ["> RUN: sleep 15", busy_row, "> "]

    outcome = rig.keystrokes().deliver(
        target(pane.pane_id, coding_agent=coding_agent), Keystrokes.shell_command("make test")
    )

    assert outcome == PushOutcome.sent("tmux", pane.pane_id)
    assert pane.submitted() == ["! make test"]

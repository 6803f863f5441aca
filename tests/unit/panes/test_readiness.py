"""StartWatcher alone: how a starting agent's pane, screen, launcher status and hook events
turn into a ready rule or a failure with the pane's last lines."""

from __future__ import annotations

from datetime import timedelta

from cafleet.adapters.fake.launch_pads import FakeLaunchPad
from cafleet.application.ports import LauncherStatus
from cafleet.application.readiness import StartWatch, StartWatcher
from cafleet.domain.agent_profiles import PROFILES, ReadyRule
from cafleet.domain.errors import Unavailable
from cafleet.domain.placement import CodingAgent

from .builders import START, PaneRig

PROMPT = "Review the open pull requests and report back."


def watch(
    rig: PaneRig,
    pad: FakeLaunchPad,
    pane_id: str,
    agent: CodingAgent = CodingAgent.CODEX,
    *,
    prompt: str = PROMPT,
    timeout: float = 10.0,
    accepted: tuple[str, ...] | None = None,
):  # type: ignore[no-untyped-def]
    profile = PROFILES[agent]
    names = profile.foreground_names if accepted is None else accepted
    return StartWatcher(rig.clock).watch(
        rig.driver, pad, StartWatch(profile, pane_id, names, prompt, timeout)
    )


def test_the_last_lines_fall_back_to_the_last_screen_seen(rig: PaneRig) -> None:
    pane = rig.driver.add_pane("codex")
    pane.screen = ["booting", "Error: config.toml is invalid"]
    pad = FakeLaunchPad(1, 2)

    def agent_dies() -> None:
        pad.launcher_status = LauncherStatus(exit_code=2)
        rig.driver.failures["capture"] = Unavailable("tmux capture-pane failed")

    rig.clock.after(0.2, agent_dies)

    verdict = watch(rig, pad, pane.pane_id)

    assert verdict.rule is None
    assert verdict.problem == "the agent exited with status 2 before taking its first prompt"
    assert verdict.last_lines == "booting\nError: config.toml is invalid"


def test_a_dead_pane_is_a_closed_pane(rig: PaneRig) -> None:
    pane = rig.driver.add_pane("codex")
    pane.dead = True

    verdict = watch(rig, FakeLaunchPad(1, 2), pane.pane_id)

    assert (verdict.rule, verdict.problem) == (
        None,
        "the pane closed before the agent took its first prompt",
    )


def test_an_unreachable_server_is_a_closed_pane(rig: PaneRig) -> None:
    pane = rig.driver.add_pane("codex")
    rig.driver.unreachable = "server exited"

    verdict = watch(rig, FakeLaunchPad(1, 2), pane.pane_id)

    assert verdict.problem == "the pane closed before the agent took its first prompt"


def test_an_undetectable_foreground_times_out_as_unknown(rig: PaneRig) -> None:
    pane = rig.driver.add_pane("")

    verdict = watch(rig, FakeLaunchPad(1, 2), pane.pane_id, timeout=2.0)

    assert verdict.problem == "the pane does not run codex (foreground: unknown) after 2s"
    assert rig.clock.now() == START + timedelta(seconds=2)


def test_a_prompt_without_letters_can_only_be_ready_by_the_wait(rig: PaneRig) -> None:
    pane = rig.driver.add_pane("codex")
    pane.screen = ["> ...", "> ..."]

    verdict = watch(rig, FakeLaunchPad(1, 2), pane.pane_id, prompt="...", timeout=60.0)

    assert verdict.rule is ReadyRule.WAIT
    assert rig.clock.now() == START + timedelta(seconds=20)


def test_leaving_the_front_restarts_the_wait(rig: PaneRig) -> None:
    pane = rig.driver.add_pane("codex")
    rig.clock.after(10.0, lambda: setattr(pane, "command", "bash"))
    rig.clock.after(10.4, lambda: setattr(pane, "command", "codex"))

    verdict = watch(rig, FakeLaunchPad(1, 2), pane.pane_id, timeout=60.0)

    assert verdict.rule is ReadyRule.WAIT
    assert rig.clock.now() == START + timedelta(seconds=30.4)


def test_a_hook_event_counts_only_for_a_profile_with_the_hook_rule(rig: PaneRig) -> None:
    pane = rig.driver.add_pane("codex")
    pad = FakeLaunchPad(1, 2, reported=["prompt"])

    verdict = watch(rig, pad, pane.pane_id, timeout=60.0)

    assert verdict.rule is ReadyRule.WAIT  # codex has no hooks: a stray event means nothing


def test_the_watcher_reads_and_never_types(rig: PaneRig) -> None:
    pane = rig.driver.add_pane("claude")
    pane.screen = ["Do you want to proceed?"]

    verdict = watch(rig, FakeLaunchPad(1, 2), pane.pane_id, CodingAgent.CLAUDE)

    assert verdict.rule is None
    assert verdict.problem.startswith("a dialog is on screen ('do you want to proceed')")
    assert pane.typed == []


def test_opencode_s_server_counts_only_on_the_endpoint_the_pad_reserved(rig: PaneRig) -> None:
    pane = rig.driver.add_pane("opencode")
    stray = FakeLaunchPad(1, 2, answers={"/session/status": '{"ses_1": {"type": "busy"}}'})

    verdict = watch(rig, stray, pane.pane_id, CodingAgent.OPENCODE, timeout=60.0)

    assert verdict.rule is ReadyRule.WAIT
    assert rig.clock.now() == START + timedelta(seconds=45)


def test_opencode_is_ready_by_http_from_the_first_busy_answer(rig: PaneRig) -> None:
    pane = rig.driver.add_pane("bun", argv=("bun", "run", "/x/opencode"))
    pad = FakeLaunchPad(1, 2)
    pad.endpoint()
    pad.answers["/session/status"] = "{}"
    rig.clock.after(1.4, lambda: pad.answers.update({"/session/status": '{"s": {}}'}))

    verdict = watch(rig, pad, pane.pane_id, CodingAgent.OPENCODE)

    assert verdict.rule is ReadyRule.HTTP
    assert rig.clock.now() == START + timedelta(seconds=1.4)

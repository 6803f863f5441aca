"""StartWatcher alone: how a starting agent's pane, screen, launcher status and hook events
turn into a ready rule or a failure with the pane's last lines."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

from cafleet.adapters.fake.launch_pads import FakeLaunchPad
from cafleet.adapters.fake.pane_driver import FakePaneDriver
from cafleet.application.members.readiness import POLL_SECONDS, StartWatch, StartWatcher
from cafleet.application.ports.agents import LauncherStatus
from cafleet.application.ports.panes import ScreenWaits
from cafleet.domain.agents.profile import ReadyRule
from cafleet.domain.agents.registry import PROFILES
from cafleet.domain.agents.screen import letters_and_digits, prompt_mark
from cafleet.domain.errors import Unavailable
from cafleet.domain.placement import CodingAgent, Multiplexer
from support.pane_rig import START, PaneRig, TimelineClock

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


# --- a multiplexer that watches screens itself (herdr) ---------------------------------------


class WatchingDriver(FakePaneDriver, ScreenWaits):
    """Waits as herdr's `pane.wait_for_output` does, on the fake clock: looks at the screen
    every 0.1 s until a line shows one of the texts or the timeout passes."""

    def __init__(self, clock: TimelineClock) -> None:
        super().__init__(Multiplexer.HERDR)
        self.clock = clock
        self.waits: list[tuple[str, ...]] = []
        self.refusal: Unavailable | None = None

    def wait_for_text(self, pane_id: str, texts: Sequence[str], lines: int, timeout: float) -> bool:
        self.waits.append(tuple(texts))
        if self.refusal is not None:
            raise self.refusal
        wanted = [letters_and_digits(t) for t in texts]
        waited = 0.0
        while waited < timeout:
            rows = self.capture(pane_id, lines).splitlines()
            if any(w in letters_and_digits(row) for row in rows for w in wanted):
                return True
            self.clock.sleep(0.1)
            waited += 0.1
        return False


def watch_on(driver: WatchingDriver, pane_id: str, agent: CodingAgent = CodingAgent.CODEX):  # type: ignore[no-untyped-def]
    profile = PROFILES[agent]
    return StartWatcher(driver.clock).watch(
        driver,
        FakeLaunchPad(1, 2),
        StartWatch(profile, pane_id, profile.foreground_names, PROMPT, 30.0),
    )


def test_where_the_multiplexer_watches_screens_the_watcher_waits_there_not_in_polls(
    rig: PaneRig,
) -> None:
    driver = WatchingDriver(rig.clock)
    pane = driver.add_pane("codex")
    pane.screen = ["booting"]
    rig.clock.after(1.3, lambda: setattr(pane, "screen", ["› Review the open pull requests"]))

    verdict = watch_on(driver, pane.pane_id)

    assert verdict.rule is ReadyRule.SCREEN
    assert POLL_SECONDS not in rig.clock.slept  # every pause was the multiplexer's wait
    assert driver.waits[0] == (prompt_mark(PROMPT), *PROFILES[CodingAgent.CODEX].dialog_signs)
    assert rig.clock.now() - START == timedelta(seconds=1.3)  # seen the moment it showed


def test_a_dialog_on_screen_is_not_waited_for_again(rig: PaneRig) -> None:
    driver = WatchingDriver(rig.clock)
    pane = driver.add_pane("codex")
    pane.screen = ["Do you trust this folder?"]

    verdict = watch_on(driver, pane.pane_id)

    assert verdict.problem.startswith("a dialog is on screen ('trust this folder')")
    assert driver.waits == []  # the wait would answer at once: polls count the grace
    assert POLL_SECONDS in rig.clock.slept


def test_a_text_already_on_screen_is_not_awaited(rig: PaneRig) -> None:
    driver = WatchingDriver(rig.clock)
    pane = driver.add_pane("codex")
    # the spawn prompt itself quotes a dialog's words; they scroll above the bottom rows
    pane.screen = ["asked: do you trust this folder?", *["..."] * 20]
    rig.clock.after(0.6, lambda: pane.screen.append("› Review the open pull requests"))

    verdict = watch_on(driver, pane.pane_id)

    assert verdict.rule is ReadyRule.SCREEN
    assert driver.waits and all("trust this folder" not in w for w in driver.waits)


def test_a_refused_wait_falls_back_to_a_poll(rig: PaneRig) -> None:
    driver = WatchingDriver(rig.clock)
    driver.refusal = Unavailable("herdr pane.wait_for_output failed: internal_error: boom")
    pane = driver.add_pane("codex")
    rig.clock.after(0.5, lambda: setattr(pane, "screen", ["Review the open pull requests"]))

    verdict = watch_on(driver, pane.pane_id)

    assert verdict.rule is ReadyRule.SCREEN
    assert rig.clock.slept and set(rig.clock.slept) == {POLL_SECONDS}

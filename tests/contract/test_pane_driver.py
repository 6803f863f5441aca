"""The PaneDriver contract: every case runs against the fake, real tmux and herdr (the herdr
driver against the fake herdr server).

Observations go through the backend harness (backends.py): what a recording agent received
as submissions and Esc keys, what a launched program saw, what a pane shows. The driver
under test is only ever called through the PaneDriver port.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from cafleet.domain.errors import Unavailable
from cafleet.domain.panes import Key, PaneGone, PaneInfo, PromptAnswer

from .backends import AGENT_ARGV, Backend, wait_for

PROGRAM = os.path.basename(sys.executable)


# --------------------------------------------------------------------------- spawn


def test_spawn_beside_a_pane_returns_a_new_pane_that_is_listed(backend: Backend) -> None:
    before = backend.driver.list_panes()

    pane_id = backend.spawn_agent()

    assert pane_id not in before
    assert pane_id != backend.anchor
    assert set(backend.driver.list_panes()) == {*before, pane_id}


def test_two_spawns_return_distinct_pane_ids(backend: Backend) -> None:
    first = backend.spawn_agent()
    second = backend.spawn_agent()

    assert first != second
    assert {first, second} <= set(backend.driver.list_panes())


def test_spawn_passes_argv_env_and_cwd_to_the_program(backend: Backend, tmp_path: Path) -> None:
    workdir = tmp_path / "project dir"
    workdir.mkdir()
    argv = backend.recorder_argv("two words", "line one\nline two", "-x", "{braces}", "ünï")
    env = {"CAFLEET_CONTRACT_A": "a b=c ü", "CAFLEET_CONTRACT_B": "-dash"}

    pane_id = backend.driver.spawn(backend.anchor, argv, env, str(workdir))
    launched = backend.launched(pane_id, argv)

    assert launched["argv"] == argv
    assert Path(launched["cwd"]).resolve() == workdir.resolve()
    assert {k: launched["env"].get(k) for k in env} == env


def test_spawn_passes_a_last_argument_ending_with_semicolon_intact(
    backend: Backend, tmp_path: Path
) -> None:
    argv = backend.recorder_argv("run the tests; then report;")

    pane_id = backend.driver.spawn(backend.anchor, argv, {}, str(tmp_path))

    assert backend.launched(pane_id, argv)["argv"] == argv


def test_spawn_passes_a_middle_argument_ending_with_semicolon_intact(
    backend: Backend, tmp_path: Path
) -> None:
    argv = backend.recorder_argv("first;", "last")

    pane_id = backend.driver.spawn(backend.anchor, argv, {}, str(tmp_path))

    assert backend.launched(pane_id, argv)["argv"] == argv


def test_spawn_passes_an_env_value_ending_with_semicolon_intact(
    backend: Backend, tmp_path: Path
) -> None:
    argv = backend.recorder_argv()
    env = {"CAFLEET_CONTRACT_LIST": "a;b;"}

    pane_id = backend.driver.spawn(backend.anchor, argv, env, str(tmp_path))

    assert backend.launched(pane_id, argv)["env"].get("CAFLEET_CONTRACT_LIST") == "a;b;"


def test_spawn_refuses_a_one_element_argv(backend: Backend, tmp_path: Path) -> None:
    before = backend.driver.list_panes()

    with pytest.raises(ValueError):
        backend.driver.spawn(backend.anchor, [sys.executable], {}, str(tmp_path))

    assert backend.driver.list_panes() == before


def test_spawn_beside_a_missing_pane_raises_pane_gone(backend: Backend, tmp_path: Path) -> None:
    with pytest.raises(PaneGone) as raised:
        backend.driver.spawn("%9999", backend.recorder_argv(), {}, str(tmp_path))

    assert raised.value.pane_id == "%9999"


# --------------------------------------------------------------------------- typing


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("plain words", id="plain"),
        pytest.param("--rounds 3 -x", id="leading-dash"),
        pytest.param("echo done;", id="trailing-semicolon"),
        pytest.param("a;b; c \\;", id="semicolons-and-backslash"),
        pytest.param("héllo wörld ✓ 日本語", id="unicode"),
        pytest.param("Enter Escape C-c", id="key-names-stay-literal"),
        pytest.param("x" * 9000, id="over-8KiB"),
        pytest.param("x" * 8191 + ";" + "y" * 100 + ";", id="semicolon-at-chunk-edges"),
    ],
)
def test_type_text_arrives_intact(backend: Backend, text: str) -> None:
    pane_id = backend.spawn_agent()

    backend.driver.type_text(pane_id, text)
    backend.driver.send_keys(pane_id, Key.ENTER)

    assert backend.submissions(pane_id, 1) == [text]


def test_type_text_of_multibyte_text_over_8_kib_arrives_intact(backend: Backend) -> None:
    text = "✓" * 6000  # 18 000 bytes of UTF-8
    pane_id = backend.spawn_agent()

    backend.driver.type_text(pane_id, text)
    backend.driver.send_keys(pane_id, Key.ENTER)

    assert backend.submissions(pane_id, 1) == [text]


def test_type_text_does_not_press_enter(backend: Backend) -> None:
    pane_id = backend.spawn_agent()

    backend.driver.type_text(pane_id, "first")
    backend.driver.type_text(pane_id, " second")
    backend.driver.send_keys(pane_id, Key.ENTER)

    assert backend.submissions(pane_id, 1) == ["first second"]


def test_paste_of_two_lines_then_enter_is_one_submission(backend: Backend) -> None:
    pane_id = backend.spawn_agent()

    backend.driver.paste_text(pane_id, "[cafleet-like header]\nsecond line")
    backend.driver.send_keys(pane_id, Key.ENTER)
    backend.driver.type_text(pane_id, "sentinel")
    backend.driver.send_keys(pane_id, Key.ENTER)

    assert backend.submissions(pane_id, 2) == ["[cafleet-like header]\nsecond line", "sentinel"]


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("-starts with a dash\nends with;", id="dash-and-semicolon"),
        pytest.param("ünïcödé ✓\n日本語", id="unicode"),
        pytest.param("line\n" * 300 + "end", id="many-lines"),
    ],
)
def test_paste_keeps_the_text_intact(backend: Backend, text: str) -> None:
    pane_id = backend.spawn_agent()

    backend.driver.paste_text(pane_id, text)
    backend.driver.send_keys(pane_id, Key.ENTER)

    assert backend.submissions(pane_id, 1) == [text]


def test_escape_key_is_observed(backend: Backend) -> None:
    pane_id = backend.spawn_agent()

    backend.driver.send_keys(pane_id, Key.ESCAPE)

    assert backend.escapes(pane_id, 1) == 1


def test_escape_then_text_then_enter_submits_only_the_text(backend: Backend) -> None:
    pane_id = backend.spawn_agent()

    backend.driver.send_keys(pane_id, Key.ESCAPE)
    assert backend.escapes(pane_id, 1) == 1
    backend.driver.type_text(pane_id, "after escape")
    backend.driver.send_keys(pane_id, Key.ENTER)

    assert backend.submissions(pane_id, 1) == ["after escape"]


def test_several_keys_in_one_call_arrive_in_order(backend: Backend) -> None:
    pane_id = backend.spawn_agent()
    backend.driver.type_text(pane_id, "queued")

    backend.driver.send_keys(pane_id, Key.ENTER, Key.ESCAPE)

    assert backend.submissions(pane_id, 1) == ["queued"]
    assert backend.escapes(pane_id, 1) == 1


# --------------------------------------------------------------------------- capture


def test_capture_returns_the_last_lines_without_trailing_blank_rows(backend: Backend) -> None:
    pane_id = backend.spawn_printer([f"row {n}" for n in range(1, 31)])

    assert backend.driver.capture(pane_id, 5) == "row 26\nrow 27\nrow 28\nrow 29\nrow 30"


def test_capture_of_a_short_screen_trims_the_blank_bottom(backend: Backend) -> None:
    pane_id = backend.spawn_printer(["alpha", "beta"])

    assert backend.driver.capture(pane_id, 20) == "alpha\nbeta"


def test_capture_keeps_blank_rows_between_text(backend: Backend) -> None:
    pane_id = backend.spawn_printer(["top", "", "bottom"])

    assert backend.driver.capture(pane_id, 10) == "top\n\nbottom"


def test_capture_reaches_into_history_beyond_the_visible_screen(backend: Backend) -> None:
    lines = [f"history {n}" for n in range(1, 121)]
    pane_id = backend.spawn_printer(lines)

    captured = backend.driver.capture(pane_id, 100)

    assert captured.split("\n") == lines[-100:]


def test_capture_without_ansi_has_no_escape_sequences(backend: Backend) -> None:
    pane_id = backend.spawn_printer(["\x1b[31mred\x1b[0m text"])

    assert backend.driver.capture(pane_id, 5) == "red text"


def test_capture_with_ansi_keeps_the_colour(backend: Backend) -> None:
    pane_id = backend.spawn_printer(["\x1b[31mred\x1b[0m text"])

    captured = backend.driver.capture(pane_id, 5, ansi=True)

    assert "\x1b[" in captured
    assert "red" in captured


# --------------------------------------------------------------------------- pane, list, kill


def test_pane_reports_the_foreground_command(backend: Backend) -> None:
    pane_id = backend.spawn_agent()

    def showing_program() -> PaneInfo | None:
        info = backend.driver.pane(pane_id)
        return info if info is not None and info.command == PROGRAM else None

    info = wait_for(showing_program, f"{pane_id} to show {PROGRAM} in front")

    assert info.pane_id == pane_id
    assert info.dead is False


def test_pane_reports_the_argv_of_the_process_in_front(backend: Backend) -> None:
    # the agent check reads it when a runtime (here python) is in front
    pane_id = backend.spawn_agent()

    def showing_argv() -> PaneInfo | None:
        info = backend.driver.pane(pane_id)
        return info if info is not None and info.argv == AGENT_ARGV else None

    wait_for(showing_argv, f"{pane_id} to report the argv {AGENT_ARGV}")


def test_pane_is_none_for_a_killed_pane(backend: Backend) -> None:
    pane_id = backend.spawn_agent()

    backend.driver.kill(pane_id)

    assert backend.driver.pane(pane_id) is None


def test_pane_is_none_for_an_unknown_pane(backend: Backend) -> None:
    assert backend.driver.pane("%9999") is None


def test_kill_returns_true_then_false_when_already_gone(backend: Backend) -> None:
    pane_id = backend.spawn_agent()

    assert backend.driver.kill(pane_id) is True
    assert backend.driver.kill(pane_id) is False
    assert pane_id not in backend.driver.list_panes()


def test_kill_leaves_the_other_panes_alone(backend: Backend) -> None:
    doomed = backend.spawn_agent()
    kept = backend.spawn_agent()

    backend.driver.kill(doomed)

    assert set(backend.driver.list_panes()) == {backend.anchor, kept}


@pytest.mark.backend_skip("herdr", reason="herdr closes a pane whose process ended")
def test_dead_pane_is_reported_dead_and_can_be_killed(backend: Backend) -> None:
    pane_id = backend.spawn_dead()

    info = backend.driver.pane(pane_id)
    assert info is not None
    assert info.dead is True
    assert backend.driver.list_panes()[pane_id].dead is True
    assert backend.driver.kill(pane_id) is True
    assert backend.driver.pane(pane_id) is None


def test_list_panes_covers_every_pane_in_one_call(backend: Backend) -> None:
    first = backend.spawn_agent()
    second = backend.spawn_agent()
    calls_before = backend.calls()

    panes = backend.driver.list_panes()

    assert backend.calls() - calls_before == 1
    assert set(panes) == {backend.anchor, first, second}
    assert all(info.pane_id == pane_id for pane_id, info in panes.items())
    assert not any(info.dead for info in panes.values())


@pytest.mark.backend_skip(
    "herdr", reason="pane.list carries no foreground command; pane() asks process_info"
)
def test_list_panes_reports_foreground_commands(backend: Backend) -> None:
    pane_id = backend.spawn_agent()

    wait_for(
        lambda: backend.driver.list_panes()[pane_id].command == PROGRAM,
        f"{pane_id} to be listed with {PROGRAM} in front",
    )


# --------------------------------------------------------------------------- missing panes


@pytest.mark.parametrize(
    "operation",
    [
        pytest.param(lambda d, p: d.type_text(p, "hello"), id="type_text"),
        pytest.param(lambda d, p: d.paste_text(p, "hello\nworld"), id="paste_text"),
        pytest.param(lambda d, p: d.send_keys(p, Key.ESCAPE), id="send_keys-escape"),
        pytest.param(lambda d, p: d.send_keys(p, Key.ENTER), id="send_keys-enter"),
        pytest.param(lambda d, p: d.capture(p, 10), id="capture"),
    ],
)
def test_operations_on_a_killed_pane_raise_pane_gone(backend: Backend, operation: object) -> None:
    pane_id = backend.spawn_agent()
    backend.driver.kill(pane_id)

    with pytest.raises(PaneGone) as raised:
        operation(backend.driver, pane_id)  # type: ignore[operator]

    assert raised.value.pane_id == pane_id


def test_operations_on_a_never_existing_pane_raise_pane_gone(backend: Backend) -> None:
    with pytest.raises(PaneGone):
        backend.driver.type_text("%9999", "hello")
    with pytest.raises(PaneGone):
        backend.driver.capture("%9999", 5)


# --------------------------------------------------------------------------- unreachable server


@pytest.mark.parametrize(
    "operation",
    [
        pytest.param(lambda d, p: d.list_panes(), id="list_panes"),
        pytest.param(lambda d, p: d.pane(p), id="pane"),
        pytest.param(lambda d, p: d.kill(p), id="kill"),
        pytest.param(lambda d, p: d.type_text(p, "hello"), id="type_text"),
        pytest.param(lambda d, p: d.capture(p, 10), id="capture"),
    ],
)
def test_an_unreachable_server_is_unavailable_not_gone(backend: Backend, operation: object) -> None:
    pane_id = backend.spawn_agent()
    backend.stop_server()

    with pytest.raises(Unavailable) as raised:
        operation(backend.driver, pane_id)  # type: ignore[operator]

    assert not isinstance(raised.value, PaneGone)
    assert raised.value.message.startswith(f"cannot reach the {backend.driver.backend} server")


# --------------------------------------------------------------------------- prompt_agent

TWO_LINES = "[cafleet-like header]\nsecond line"


def submitted_with_a_sentinel(backend: Backend, pane_id: str, before: int) -> list[str]:
    """What the agent received once a sentinel line is typed after `before` submissions."""
    backend.driver.type_text(pane_id, "sentinel")
    backend.driver.send_keys(pane_id, Key.ENTER)
    return backend.submissions(pane_id, before + 1)


def test_prompt_agent_types_and_submits_once_where_the_multiplexer_has_a_prompt(
    backend: Backend,
) -> None:
    pane_id = backend.spawn_agent()
    backend.detect(pane_id, "idle")

    answer = backend.driver.prompt_agent(pane_id, TWO_LINES)

    if backend.prompts:
        assert answer is PromptAnswer.TAKEN
        assert submitted_with_a_sentinel(backend, pane_id, 1) == [TWO_LINES, "sentinel"]
    else:  # tmux, and the tmux-like fake: no such request, nothing typed
        assert answer is PromptAnswer.NO_PROMPT
        assert submitted_with_a_sentinel(backend, pane_id, 0) == ["sentinel"]


@pytest.mark.backend_skip("fake", reason="the tmux-like fake has no prompt of its own")
@pytest.mark.backend_skip("tmux", reason="tmux has no prompt of its own")
def test_prompt_agent_refuses_an_agent_at_a_dialog_and_types_nothing(backend: Backend) -> None:
    pane_id = backend.spawn_agent()
    backend.detect(pane_id, "blocked")

    assert backend.driver.prompt_agent(pane_id, "not for the dialog") is PromptAnswer.BLOCKED
    assert submitted_with_a_sentinel(backend, pane_id, 0) == ["sentinel"]


@pytest.mark.backend_skip("fake", reason="the tmux-like fake has no prompt of its own")
@pytest.mark.backend_skip("tmux", reason="tmux has no prompt of its own")
def test_prompt_agent_finds_no_agent_in_an_undetected_or_killed_pane(backend: Backend) -> None:
    undetected = backend.spawn_agent()
    killed = backend.spawn_agent()
    backend.detect(killed, "idle")
    backend.driver.kill(killed)

    assert backend.driver.prompt_agent(undetected, "hello") is PromptAnswer.NO_AGENT
    assert backend.driver.prompt_agent(killed, "hello") is PromptAnswer.NO_AGENT
    assert submitted_with_a_sentinel(backend, undetected, 0) == ["sentinel"]


# --------------------------------------------------------------------------- identity


def test_claim_returns_the_identity_the_pane_reports_from_then_on(backend: Backend) -> None:
    pane_id = backend.spawn_agent()

    identity = backend.driver.claim(pane_id)

    assert identity
    assert backend.driver.claim(pane_id) == identity  # claiming again keeps the mark
    info = backend.driver.pane(pane_id)
    assert info is not None and info.identity == identity
    listed = backend.driver.list_panes()[pane_id].identity
    assert listed in (identity, None)  # a listing may not tell (herdr), never tells wrong


def test_two_panes_never_share_an_identity(backend: Backend) -> None:
    first, second = backend.spawn_agent(), backend.spawn_agent()

    assert backend.driver.claim(first) != backend.driver.claim(second)
    assert backend.driver.claim(backend.anchor) not in (
        backend.driver.claim(first),
        backend.driver.claim(second),
    )


def test_a_pane_of_a_restarted_server_with_the_old_id_has_another_identity(
    backend: Backend,
) -> None:
    old_anchor = backend.anchor
    member = backend.spawn_agent()
    claimed = {old_anchor: backend.driver.claim(old_anchor), member: backend.driver.claim(member)}

    backend.restart_server()
    reused = {backend.anchor, backend.spawn_agent()}

    assert reused == {old_anchor, member}  # the new server hands out the same ids
    for pane_id, identity in claimed.items():
        info = backend.driver.pane(pane_id)
        assert info is not None and info.identity not in (None, identity)
        listed = backend.driver.list_panes()[pane_id].identity
        assert listed != identity


def test_claim_of_a_missing_pane_raises_pane_gone(backend: Backend) -> None:
    pane_id = backend.spawn_agent()
    backend.driver.kill(pane_id)

    with pytest.raises(PaneGone):
        backend.driver.claim(pane_id)


# --------------------------------------------------------------------------- titles


def test_a_label_is_reported_as_the_panes_title_and_a_later_one_replaces_it(
    backend: Backend,
) -> None:
    from cafleet.application.ports.panes import PaneLabels

    pane_id = backend.spawn_agent()
    driver = backend.driver
    assert isinstance(driver, PaneLabels)
    assert driver.list_panes()[pane_id].title is None

    driver.label(pane_id, "coder #3 · idle · 1 unread")
    driver.label(pane_id, "coder #3 · working · 0 unread; #{pane_id} $HOME")

    expected = "coder #3 · working · 0 unread; #{pane_id} $HOME"  # never expanded
    assert driver.list_panes()[pane_id].title == expected
    listed = driver.pane(pane_id)
    assert listed is not None and listed.title == expected
    assert driver.list_panes()[backend.anchor].title is None  # other panes keep theirs


def test_labelling_a_gone_pane_is_pane_gone(backend: Backend) -> None:
    from cafleet.application.ports.panes import PaneLabels

    pane_id = backend.spawn_agent()
    assert backend.driver.kill(pane_id)
    driver = backend.driver
    assert isinstance(driver, PaneLabels)

    with pytest.raises(PaneGone):
        driver.label(pane_id, "late")

"""Text output shows the controls of stored text escaped; --json keeps the exact text.

A body or a name may carry OSC 52 (sets the reader's clipboard), OSC 0 (the window title), a
CR (overwrites the line, faking one), CSI (clears, recolours, moves) and bidi overrides.
Click strips CSI from non-terminal output but nothing else, so each check looks for every
raw control, not only ESC [.
"""

from __future__ import annotations

import json

import pytest

from cafleet.domain.placement import Multiplexer

EVIL = "hello\x1b]52;c;cHduZWQ=\x07\x1b]0;new-title\x07\rFAKE\x1b[2J\u202eevil\x9b\nline two"
SHOWN = (
    "hello\\x1b]52;c;cHduZWQ=\\x07\\x1b]0;new-title\\x07\\rFAKE\\x1b[2J\\u202eevil\\x9b\nline two"
)
EVIL_NAME = "bad\x1b]0;t\x07\rname\u202e"
SHOWN_NAME = "bad\\x1b]0;t\\x07\\rname\\u202e"
SOCKET = "tmux-test.sock"


def assert_inert(text: str) -> None:
    """No control, DEL, C1 or bidi override (all unprintable) is left between newlines."""
    assert all(line.isprintable() for line in text.split("\n")), repr(text)


@pytest.fixture
def made(run):
    return run.world.fleet("alpha")


@pytest.fixture
def worker(run, made) -> int:
    agent_id = run.world.member(made, EVIL_NAME, pane_id="%1", description=f"does {EVIL}")
    run.pane_drivers(Multiplexer.TMUX, SOCKET).add_pane("claude", pane_id="%1")
    return agent_id


def fleet_args(made) -> list[str]:
    return ["--fleet-id", str(made.fleet.fleet_id)]


def sent(run, made, worker: int) -> int:
    """The evil body from the worker to the Director; its task id."""
    director = str(made.director.agent_id)
    result = run(
        "message", "send", *fleet_args(made), "--agent-id", str(worker), "--to", director,
        "--text", EVIL, "--quiet",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return int(result.stdout)


def reader(made, verb: str, *rest: str) -> list[str]:
    return ["message", verb, *fleet_args(made), "--agent-id", str(made.director.agent_id), *rest]


@pytest.mark.parametrize("full", [False, True], ids=["compact", "full"])
def test_message_show_prints_the_body_escaped_and_json_keeps_it_exact(
    run, made, worker: int, full: bool
) -> None:
    task = sent(run, made, worker)
    extra = ["--full"] if full else []

    text = run(*reader(made, "show", "--task-id", str(task), *extra))
    as_json = run("--json", *reader(made, "show", "--task-id", str(task), *extra))

    assert text.exit_code == 0, text.output
    assert_inert(text.stdout)
    assert SHOWN.splitlines()[0] in text.stdout
    assert text.stdout.splitlines()[-1].strip() == "line two"  # a body still prints as lines
    assert json.loads(as_json.stdout)["task"]["text"] == EVIL


def test_message_poll_prints_bodies_escaped_and_json_keeps_them_exact(
    run, made, worker: int
) -> None:
    sent(run, made, worker)

    text = run(*reader(made, "poll"))
    as_json = run("--json", *reader(made, "poll"))

    assert_inert(text.stdout)
    assert text.stdout.endswith(f"]\n{SHOWN}\n")
    assert [m["text"] for m in json.loads(as_json.stdout)] == [EVIL]


def test_message_send_echoes_the_body_escaped(run, made, worker: int) -> None:
    director = str(made.director.agent_id)
    result = run(
        "message", "send", *fleet_args(made), "--agent-id", str(worker), "--to", director,
        "--text", EVIL,
    )  # fmt: skip

    assert_inert(result.stdout)
    assert f"\n{SHOWN}\n" in result.stdout


def test_member_list_escapes_a_name_and_keeps_the_table_aligned(run, made, worker: int) -> None:
    # names are not validated for controls: `member create --name` takes any text
    text = run("member", "list", *fleet_args(made))
    as_json = run("--json", "member", "list", *fleet_args(made))

    assert_inert(text.stdout)
    header, rule, row = text.stdout.splitlines()[1:]
    assert row.split()[1] == SHOWN_NAME
    assert rule.split()[1] == "-" * len(SHOWN_NAME)
    assert header.index("status") == row.index("active")
    assert [m["name"] for m in json.loads(as_json.stdout)] == [EVIL_NAME]


def test_member_list_activity_and_all_escape_names(run, made, worker: int) -> None:
    for extra in ("--activity", "--all"):
        result = run("member", "list", *fleet_args(made), extra)

        assert result.exit_code == 0, result.output
        assert_inert(result.stdout)
        assert SHOWN_NAME in result.stdout


@pytest.mark.parametrize("full", [False, True], ids=["compact", "full"])
def test_member_show_escapes_name_and_description(run, made, worker: int, full: bool) -> None:
    extra = ["--full"] if full else []
    args = ["member", "show", *fleet_args(made), "--member-id", str(worker), *extra]

    text = run(*args)
    as_json = run("--json", *args)

    assert_inert(text.stdout)
    assert SHOWN_NAME in text.stdout
    assert (json.loads(as_json.stdout)["name"], json.loads(as_json.stdout)["description"]) == (
        EVIL_NAME,
        f"does {EVIL}",
    )


def test_fleet_list_and_show_escape_the_fleet_name(run) -> None:
    made = run.world.fleet(EVIL_NAME)

    listed = run("fleet", "list")
    shown = run("fleet", "show", *fleet_args(made))

    assert_inert(listed.stdout + shown.stdout)
    assert SHOWN_NAME in listed.stdout
    assert SHOWN_NAME in shown.stdout
    assert json.loads(run("fleet", "show", *fleet_args(made), "--json").stdout)["name"] == (
        EVIL_NAME
    )


def test_member_capture_escapes_what_is_left_of_the_screen_unless_ansi(
    run, made, worker: int
) -> None:
    pane = run.pane_drivers(Multiplexer.TMUX, SOCKET).panes["%1"]
    pane.screen = ["ok\rFAKE\x9b31m \x1b[1mbold\x1b[0m"]
    args = ["member", "capture", *fleet_args(made), "--member-id", str(worker)]

    plain = run(*args)
    ansi = run(*args, "--ansi")

    # the capture keeps what follows a row's last CR and drops CSI/OSC; a C1 CSI remains
    assert plain.stdout == "FAKE\\x9b31m bold\n"
    assert "\x9b" in ansi.stdout  # --ansi asks for the screen as it is


def test_an_error_quoting_user_input_prints_no_raw_controls(run, made) -> None:
    result = run(
        "member", "create", *fleet_args(made), "--agent-id", str(made.director.agent_id),
        "--name", "m", "--description", "d", "--coding-agent", "opencode",
        "--model", "x\x1b]0;t\x07\ry", "--text", "go",
    )  # fmt: skip

    assert result.exit_code != 0
    assert_inert(result.stderr)
    assert "x\\x1b]0;t\\x07\\ry" in result.stderr

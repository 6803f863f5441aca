"""The demo agent without a terminal: the input decoder, and the agent fed with key events."""

from __future__ import annotations

import io
import json
import re
import subprocess
from collections.abc import Sequence
from pathlib import Path

import pytest

from cafleet.demo.agent import DemoAgent, EventLog, main
from cafleet.demo.options import Options
from cafleet.demo.terminal import (
    Backspace,
    ClearLine,
    CtrlC,
    Esc,
    Event,
    InputDecoder,
    Paste,
    Screen,
    Submit,
    Text,
)

START = b"\x1b[200~"
END = b"\x1b[201~"


def decode(*chunks: bytes, flush: bool = True) -> list[Event]:
    decoder = InputDecoder()
    events: list[Event] = []
    for chunk in chunks:
        events += decoder.feed(chunk)
    if flush:
        events += decoder.flush()
    return events


# --------------------------------------------------------------------------- decoder


def test_typed_text_then_enter() -> None:
    assert decode(b"hello world\r") == [Text("hello world"), Submit()]


def test_lf_and_crlf_outside_a_paste_are_one_enter_each() -> None:
    assert decode(b"a\nb\r\nc\r\r") == [
        Text("a"),
        Submit(),
        Text("b"),
        Submit(),
        Text("c"),
        Submit(),
        Submit(),
    ]


def test_bracketed_paste_keeps_line_breaks() -> None:
    assert decode(START + b"one\ntwo\rthree\r\nfour" + END + b"\r") == [
        Paste("one\ntwo\nthree\nfour"),
        Submit(),
    ]


def test_paste_split_across_reads_at_every_byte() -> None:
    data = b"x" + START + b"[cafleet msg 1 from 2 ts]\nping 1" + END + b"\r"
    events = decode(*(data[i : i + 1] for i in range(len(data))))
    assert events == [Text("x"), Paste("[cafleet msg 1 from 2 ts]\nping 1"), Submit()]


def test_escape_characters_inside_a_paste_that_are_not_the_end_marker() -> None:
    events = decode(START + b"a\x1b\x1b[20x\x1b[201b" + END)
    assert events == [Paste("a[20x[201b")]


def test_lone_escape_needs_a_flush() -> None:
    decoder = InputDecoder()
    assert decoder.feed(b"\x1b") == []
    held = decoder.pending_escape
    flushed = decoder.flush()
    assert (held, flushed, decoder.pending_escape) == (True, [Esc()], False)
    assert decoder.flush() == []


def test_escape_right_before_a_paste_is_an_esc_and_the_paste_survives() -> None:
    assert decode(b"\x1b" + START + b"hi\nthere" + END) == [Esc(), Paste("hi\nthere")]
    assert decode(b"\x1b", START + b"hi" + END) == [Esc(), Paste("hi")]


def test_escape_then_a_plain_key_is_esc_then_that_key() -> None:
    assert decode(b"\x1bx\r") == [Esc(), Text("x"), Submit()]
    assert decode(b"\x1b\r") == [Esc(), Submit()]


def test_other_escape_sequences_are_ignored() -> None:
    # arrows (CSI and SS3), a stray paste end, a function key
    assert decode(b"a\x1b[A\x1bOB\x1b[201~\x1b[15~b") == [Text("ab")]


def test_a_broken_csi_gives_back_its_control_byte() -> None:
    assert decode(b"\x1b[12\r") == [Submit()]


def test_control_keys() -> None:
    assert decode(b"ab\x7fc\x08\x15d\x03") == [
        Text("ab"),
        Backspace(),
        Text("c"),
        Backspace(),
        ClearLine(),
        Text("d"),
        CtrlC(),
    ]


def test_other_control_bytes_are_dropped_outside_and_inside_a_paste() -> None:
    assert decode(b"a\x00\x07b\tc") == [Text("ab\tc")]
    assert decode(START + b"a\x00\x07b\tc\x7f" + END) == [Paste("ab\tc")]


def test_utf8_split_inside_characters() -> None:
    data = "héllo — ✓".encode()
    events = decode(data[:2], data[2:9], data[9:])
    assert events == [Text("h"), Text("éllo "), Text("— ✓")]


def test_empty_paste_is_no_event() -> None:
    assert decode(START + END) == []


# --------------------------------------------------------------------------- the agent


class FakeCli:
    """Stands in for `python -m cafleet`: answers poll from a list, records ack and send."""

    def __init__(self, pending: list[dict[str, object]]) -> None:
        self.pending = pending
        self.calls: list[list[str]] = []

    def __call__(self, argv: Sequence[str]) -> subprocess.CompletedProcess[str]:
        args = list(argv)
        self.calls.append(args)
        if args[:2] == ["sh", "-c"]:
            return subprocess.CompletedProcess(args, 0, f"ran {args[2]}\n", "")
        if "poll" in args:
            return subprocess.CompletedProcess(args, 0, json.dumps(self.pending), "")
        return subprocess.CompletedProcess(args, 0, "ok\n", "")


def make_agent(
    tmp_path: Path, cli: FakeCli, **options: object
) -> tuple[DemoAgent, io.StringIO, Path]:
    out = io.StringIO()
    log = tmp_path / "demo.jsonl"
    opts = Options(fleet_id="1", agent_id="3", **options)  # type: ignore[arg-type]
    agent = DemoAgent(opts, Screen(out, columns=lambda: 200), EventLog(str(log)), cli, ["cafleet"])
    return agent, out, log


def events_of(log: Path) -> list[dict[str, object]]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines()]


def printed(out: io.StringIO) -> list[str]:
    """The lines written above the composer (composer drafts and redraws left out)."""
    lines: list[str] = []
    for segment in re.split(r"\r(?:\x1b\[\d+A)?\x1b\[J", out.getvalue()):
        if "\n" in segment:
            lines += segment.rsplit("\n", 1)[0].split("\n")
    return lines


def test_ping_pong_replies_and_acks_oldest_first(tmp_path: Path) -> None:
    cli = FakeCli(
        [
            {"task_id": 9, "from_agent_id": 4, "text": "pong 3"},
            {"task_id": 8, "from_agent_id": 4, "text": "pong 2"},
            {"task_id": 7, "from_agent_id": 2, "text": "ping 1"},
            {"task_id": 6, "from_agent_id": 5, "text": "hello"},
        ]
    )
    agent, out, log = make_agent(tmp_path, cli, rounds=3)
    agent.start()
    agent.handle(Paste("[cafleet msg 7 from 2 2026-01-01T00:00:00+00:00]\nping 1"), 0.0)
    assert agent.handle(Submit(), 1.0) is None

    ids = ["--fleet-id", "1", "--agent-id", "3"]
    assert cli.calls == [
        ["cafleet", "--json", "message", "poll", *ids, "--full"],
        ["cafleet", "message", "ack", *ids, "--task-id", "6"],
        ["cafleet", "message", "ack", *ids, "--task-id", "7"],
        ["cafleet", "message", "send", *ids, "--to", "2", "--text", "pong 1"],
        ["cafleet", "message", "ack", *ids, "--task-id", "8"],
        ["cafleet", "message", "send", *ids, "--to", "4", "--text", "ping 3"],
        ["cafleet", "message", "ack", *ids, "--task-id", "9"],
    ]
    replies = [e for e in events_of(log) if e["event"] == "reply"]
    assert replies == [
        {"event": "reply", "to": 2, "text": "pong 1"},
        {"event": "reply", "to": 4, "text": "ping 3"},
    ]
    assert printed(out) == [
        "cafleet demo agent 3 ready",
        "SUBMIT:[cafleet msg 7 from 2 2026-01-01T00:00:00+00:00]\\nping 1",
        "ACK 6 from 5: hello",
        "ACK 7 from 2: ping 1",
        "REPLY to 2: pong 1",
        "ACK 8 from 4: pong 2",
        "REPLY to 4: ping 3",
        "ACK 9 from 4: pong 3",
    ]


def test_typed_poll_line_polls_and_other_text_does_nothing(tmp_path: Path) -> None:
    cli = FakeCli([])
    agent, _, _ = make_agent(tmp_path, cli)
    for text in ("just chatting", "cafleet message poll --fleet-id 1 --agent-id 3"):
        agent.handle(Text(text), 0.0)
        agent.handle(Submit(), 1.0)
    assert [c[3] for c in cli.calls] == ["poll"]


def test_wake_prints_wake_only(tmp_path: Path) -> None:
    cli = FakeCli([])
    agent, out, _ = make_agent(tmp_path, cli)
    agent.handle(Text("[monitor] wake: 1 agent due — director 1 (Director) [interval]."), 0.0)
    agent.handle(Submit(), 1.0)
    assert cli.calls == []
    assert printed(out)[-1] == "WAKE"


def test_shell_command_and_exit(tmp_path: Path) -> None:
    cli = FakeCli([])
    agent, out, _ = make_agent(tmp_path, cli)
    agent.handle(Text("! echo hi"), 0.0)
    assert agent.handle(Submit(), 1.0) is None
    assert cli.calls == [["sh", "-c", "echo hi"]]
    assert printed(out) == ["SUBMIT:! echo hi", "ran echo hi"]
    agent.handle(Text("/exit"), 2.0)
    assert agent.handle(Submit(), 3.0) == 0
    assert agent.handle(CtrlC(), 4.0) == 130


def test_editing_and_empty_enter(tmp_path: Path) -> None:
    agent, _, log = make_agent(tmp_path, FakeCli([]))
    agent.handle(Submit(), 0.0)
    for event in (Text("junk"), ClearLine(), Text("okay"), Backspace(), Text("!"), Submit()):
        agent.handle(event, 1.0)
    assert [e for e in events_of(log) if e["event"] == "submit"] == [
        {"event": "submit", "text": "oka!"}
    ]


def test_slow_composer_drops_an_early_enter(tmp_path: Path) -> None:
    agent, _, log = make_agent(tmp_path, FakeCli([]), slow_composer_ms=120)
    agent.handle(Text("hello"), 10.0)
    agent.handle(Submit(), 10.05)
    assert agent.composer == "hello"
    agent.handle(Submit(), 10.2)
    assert agent.composer == ""
    assert [e["event"] for e in events_of(log)] == ["enter-dropped", "submit"]


def test_permission_menu(tmp_path: Path) -> None:
    agent, out, log = make_agent(tmp_path, FakeCli([]), permission_menu=True)
    agent.start()
    assert agent.menu_up
    agent.handle(Text("first"), 0.0)
    agent.handle(Submit(), 1.0)  # no Esc: approves the menu, submits nothing
    agent.handle(Esc(), 2.0)  # no menu: only logged
    agent.handle(Submit(), 3.0)  # submits "first"; the menu comes back
    agent.handle(Esc(), 4.0)
    agent.handle(Text("second"), 5.0)
    agent.handle(Submit(), 6.0)
    assert [e["event"] for e in events_of(log)] == [
        "ready",
        "menu",
        "menu-approved",
        "esc",
        "submit",
        "menu",
        "esc",
        "menu-dismissed",
        "submit",
        "menu",
    ]
    assert "Do you want to proceed? 1. Yes 2. No" in out.getvalue()


def test_composer_redraw_moves_up_over_wrapped_rows(tmp_path: Path) -> None:
    out = io.StringIO()
    screen = Screen(out, columns=lambda: 10)
    screen.composer("x" * 15)  # "> " + 15 = 17 characters: two rows
    screen.line("out")
    assert out.getvalue() == "> xxxxxxxxxxxxxxx\r\x1b[1A\x1b[Jout\n> xxxxxxxxxxxxxxx"


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({}, "CAFLEET_FLEET_ID is not set"),
        ({"CAFLEET_FLEET_ID": "1"}, "CAFLEET_AGENT_ID is not set"),
        ({"CAFLEET_FLEET_ID": "1", "CAFLEET_AGENT_ID": "x"}, "CAFLEET_AGENT_ID is not a positive"),
    ],
)
def test_missing_identity_exits_2(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    env: dict[str, str],
    message: str,
) -> None:
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    assert main([]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert message in captured.err
    assert len(captured.err.splitlines()) == 1


def test_hold_shows_a_preview_and_leaves_the_message_for_the_user(tmp_path: Path) -> None:
    cli = FakeCli([{"task_id": 7, "from_agent_id": 1, "text": "ping 1"}])
    agent, out, log = make_agent(tmp_path, cli, hold=True)
    agent.handle(Paste("[cafleet msg 7 from 1 2026-01-01T00:00:00+00:00]\nping 1"), 0.0)
    agent.handle(Submit(), 1.0)

    assert cli.calls == []  # no poll, no ack, no answer
    assert printed(out)[-1] == "HOLD 7 from 1: poll and ack it as agent 3"
    assert [e for e in events_of(log) if e["event"] == "hold"] == [
        {"event": "hold", "task_id": 7, "from": 1}
    ]


def test_hold_still_polls_when_told_to(tmp_path: Path) -> None:
    cli = FakeCli([])
    agent, _, _ = make_agent(tmp_path, cli, hold=True)
    agent.handle(Text("cafleet message poll --fleet-id 1 --agent-id 3"), 0.0)
    agent.handle(Submit(), 1.0)

    assert [c[3] for c in cli.calls] == ["poll"]


def test_a_permission_dialog_takes_the_composers_place_until_it_is_answered(
    tmp_path: Path,
) -> None:
    agent, out, log = make_agent(tmp_path, FakeCli([]), dialog_on="make test")
    agent.start()
    agent.handle(Text("run make test"), 0.0)
    agent.handle(Submit(), 1.0)
    agent.handle(Text("half-typed"), 1.5)  # nothing reaches the composer meanwhile
    agent.handle(Paste("[cafleet msg 4 from 1 x]\nhello"), 2.0)
    assert agent.dialog_up and agent.composer == ""
    assert out.getvalue().rstrip().endswith("Esc to cancel · Tab to amend")
    agent.handle(Text("1"), 3.0)

    assert not agent.dialog_up
    assert [e["event"] for e in events_of(log)] == [
        "ready",
        "submit",
        "dialog",
        "into-dialog",
        "into-dialog",
        "dialog-approved",
    ]
    assert out.getvalue().endswith("(approved)\n> ")  # the composer is back

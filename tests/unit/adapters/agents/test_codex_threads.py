"""CodexRollouts over rollout files laid out as Codex 0.171 writes them, and a stand-in
`codex` that records how `codex queue` was called."""

from __future__ import annotations

import json
import os
import stat
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

from cafleet.adapters.agents.codex import CodexRollouts
from cafleet.domain.agents.status import AgentStatus, StatusReport

SINCE = datetime(2026, 12, 2, 0, 0, tzinfo=UTC)
PROMPT = "You are w. FLEET ID: 1. YOUR MEMBER ID: 3. Wait for messages."


def rollout(home: Path, name: str, thread: str, cwd: str, first: str, *events: dict) -> Path:
    path = home / "sessions" / "2026" / "12" / "02" / f"rollout-{name}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [
        {"type": "session_meta", "payload": {"id": thread, "cwd": cwd, "originator": "codex-tui"}},
        {"type": "response_item", "payload": {"type": "message", "role": "developer",
                                              "content": [{"type": "input_text", "text": "x"}]}},
        {"type": "response_item", "payload": {"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": "<environment_context>\n</environment_context>"}]}},
        {"type": "response_item", "payload": {"type": "message", "role": "user",
                                              "content": [{"type": "input_text", "text": first}]}},
        *events,
    ]  # fmt: skip
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    return path


def turn(kind: str, at: str) -> dict:
    return {"timestamp": at, "type": "event_msg", "payload": {"type": kind}}


def test_the_conversation_is_the_one_started_here_with_the_spawn_prompt(tmp_path: Path) -> None:
    ours = rollout(tmp_path, "a", "thread-a", "/work", PROMPT)
    rollout(tmp_path, "b", "thread-b", "/work", PROMPT.replace("3", "4"))  # another member
    rollout(tmp_path, "c", "thread-c", "/elsewhere", PROMPT)

    found = CodexRollouts().find(str(tmp_path), "/work", PROMPT, SINCE)

    assert found is not None
    assert (found.thread_id, found.transcript) == ("thread-a", str(ours))


def test_two_matching_conversations_or_an_old_one_are_not_guessed_between(tmp_path: Path) -> None:
    rollout(tmp_path, "a", "thread-a", "/work", PROMPT)
    rollout(tmp_path, "b", "thread-b", "/work", PROMPT)
    old = rollout(tmp_path, "c", "thread-c", "/old", PROMPT)
    earlier = (SINCE - timedelta(hours=1)).timestamp()
    os.utime(old, (earlier, earlier))

    assert CodexRollouts().find(str(tmp_path), "/work", PROMPT, SINCE) is None
    assert CodexRollouts().find(str(tmp_path), "/old", PROMPT, SINCE) is None
    assert CodexRollouts().find(str(tmp_path / "missing"), "/work", PROMPT, SINCE) is None


def test_the_status_is_the_last_turn_event(tmp_path: Path) -> None:
    busy = rollout(tmp_path, "a", "t", "/w", PROMPT, turn("task_started", "2026-12-02T00:01:00Z"))
    done = rollout(tmp_path, "b", "t", "/w", PROMPT, turn("task_started", "2026-12-02T00:01:00Z"),
                   turn("task_complete", "2026-12-02T00:01:05Z"))  # fmt: skip
    nothing = rollout(tmp_path, "c", "t", "/w", PROMPT)
    threads = CodexRollouts()

    assert threads.status(str(busy)) == StatusReport(
        AgentStatus.WORKING, datetime(2026, 12, 2, 0, 1, tzinfo=UTC)
    )
    assert threads.status(str(done)) == StatusReport(
        AgentStatus.IDLE, datetime(2026, 12, 2, 0, 1, 5, tzinfo=UTC)
    )
    assert threads.status(str(nothing)) is None
    assert threads.status(str(tmp_path / "gone.jsonl")) is None


def stand_in_codex(tmp_path: Path, answer: str, code: int) -> tuple[Path, Path]:
    record = tmp_path / "queued.json"
    script = tmp_path / "codex"
    script.write_text(
        f"#!{sys.executable}\nimport json, os, sys\n"
        f"json.dump({{'argv': sys.argv[1:], 'home': os.environ.get('CODEX_HOME')}},"
        f" open({str(record)!r}, 'w'))\nprint({answer!r})\nsys.exit({code})\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script, record


def test_queue_runs_codex_queue_on_the_members_codex_home(tmp_path: Path) -> None:
    codex, record = stand_in_codex(tmp_path, "Queued message m1 for thread t.", 0)

    assert CodexRollouts().queue(str(codex), "/homes/codex", "thread-a", "[cafleet msg 1]\nhi")

    assert json.loads(record.read_text()) == {
        "argv": ["queue", "--thread", "thread-a", "--message", "[cafleet msg 1]\nhi"],
        "home": "/homes/codex",
    }


def test_a_failing_or_missing_codex_is_a_refused_queue(tmp_path: Path) -> None:
    failing, _ = stand_in_codex(tmp_path, "Error: no such thread", 1)

    assert not CodexRollouts().queue(str(failing), "/h", "t", "x")
    assert not CodexRollouts().queue(str(tmp_path / "no-codex"), "/h", "t", "x")


def user_turn(text: str, at: str) -> dict:
    content = [{"type": "input_text", "text": text}]
    payload = {"type": "message", "role": "user", "content": content}
    return {"timestamp": at, "type": "response_item", "payload": payload}


def test_taken_lists_the_previews_each_user_turn_carried_with_its_time(tmp_path: Path) -> None:
    path = rollout(
        tmp_path, "a", "t-1", "/work", PROMPT,
        user_turn("[cafleet msg 7 from 1 2026-12-02T00:00:01.000000+00:00]\nping 1",
                  "2026-12-02T00:00:02.500Z"),
        turn("task_started", "2026-12-02T00:00:02.600Z"),
        user_turn("[cafleet msg 8 from 1 2026-12-02T00:00:03.000000+00:00]\nping 2\n"
                  "[cafleet msg 9 from 2 2026-12-02T00:00:03.100000+00:00]\nping 3",
                  "2026-12-02T00:00:04Z"),
        {"timestamp": "2026-12-02T00:00:05Z", "type": "response_item", "payload": {
            "type": "function_call_output", "output": "[cafleet msg 10 from 1 2026-...]"}},
    )  # fmt: skip

    taken = CodexRollouts().taken(str(path))

    assert taken == {
        7: datetime(2026, 12, 2, 0, 0, 2, 500000, tzinfo=UTC),
        8: datetime(2026, 12, 2, 0, 0, 4, tzinfo=UTC),
        9: datetime(2026, 12, 2, 0, 0, 4, tzinfo=UTC),
    }  # a tool's output quoting a header is not a user turn
    assert CodexRollouts().taken(str(tmp_path / "missing.jsonl")) == {}

"""Message renderings (text and JSON) and the shared text helpers."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from cafleet.domain.message import Message, MessageState, MessageType
from cafleet.domain.preview import truncated
from cafleet.entrypoints.cli.rendering import (
    MessageRenderer,
    count_line,
    dumps,
    humanize,
    labelled,
    table,
)

CREATED = datetime(2026, 1, 1, 8, 0, tzinfo=UTC)
CHANGED = CREATED + timedelta(minutes=3, microseconds=410760)
TS_CREATED = "2026-01-01T08:00:00.000000+00:00"
TS_CHANGED = "2026-01-01T08:03:00.410760+00:00"


def message(
    text: str = "hello worker",
    *,
    task_id: int = 5,
    type: MessageType = MessageType.UNICAST,
    state: MessageState = MessageState.INPUT_REQUIRED,
    origin: int | None = None,
    to: int | None = 3,
    changed: datetime = CREATED,
) -> Message:
    return Message(
        task_id=task_id,
        context_id=to if to is not None else 1,
        from_agent_id=1,
        to_agent_id=to,
        type=type,
        created_at=CREATED,
        state=state,
        status_timestamp=changed,
        origin_task_id=origin,
        text=text,
    )


SUMMARY = message(
    "Broadcast sent to 2 recipients",
    task_id=7,
    type=MessageType.BROADCAST_SUMMARY,
    state=MessageState.COMPLETED,
    origin=7,
    to=None,
)

compact = MessageRenderer(200, full=False)
full = MessageRenderer(200, full=True)


# -- compact text -----------------------------------------------------------------------------


def test_compact_text_is_a_header_and_the_body() -> None:
    assert compact.text(message()) == f"[5 | from:1 | {TS_CREATED}]\nhello worker"


def test_compact_text_shows_the_status_timestamp_not_the_creation_time() -> None:
    acked = message(state=MessageState.COMPLETED, changed=CHANGED)

    assert compact.text(acked) == f"[5 | from:1 | state:completed | {TS_CHANGED}]\nhello worker"


def test_compact_text_of_a_summary_has_kind_origin_state_in_that_order() -> None:
    assert compact.text(SUMMARY) == (
        f"[7 | from:1 | kind:broadcast_summary | origin:7 | state:completed | {TS_CREATED}]\n"
        "Broadcast sent to 2 recipients"
    )


def test_compact_text_of_a_broadcast_delivery_shows_its_origin_only() -> None:
    assert (
        compact.text(message(origin=7)) == f"[5 | from:1 | origin:7 | {TS_CREATED}]\nhello worker"
    )


def test_compact_text_of_a_canceled_message_shows_the_state() -> None:
    canceled = message(state=MessageState.CANCELED)

    assert compact.text(canceled).startswith(f"[5 | from:1 | state:canceled | {TS_CREATED}]\n")


def test_compact_text_omits_the_body_line_of_an_empty_text() -> None:
    assert compact.text(message("")) == f"[5 | from:1 | {TS_CREATED}]"


def test_compact_text_keeps_a_multiline_body_verbatim() -> None:
    assert compact.text(message("a\r\nb\n")) == f"[5 | from:1 | {TS_CREATED}]\na\r\nb\n"


# -- full text --------------------------------------------------------------------------------


def test_full_text_lists_every_field_with_labels_padded_to_seven() -> None:
    assert full.text(message(state=MessageState.CANCELED)) == (
        "  id:    5\n"
        "  state: canceled\n"
        "  from:  1\n"
        "  to:    3\n"
        "  type:  unicast\n"
        "  text:  hello worker"
    )


def test_full_text_of_a_summary_omits_to() -> None:
    assert full.text(SUMMARY) == (
        "  id:    7\n"
        "  state: completed\n"
        "  from:  1\n"
        "  type:  broadcast_summary\n"
        "  text:  Broadcast sent to 2 recipients"
    )


def test_full_text_omits_an_empty_text() -> None:
    assert full.text(message("")).splitlines()[-1] == "  type:  unicast"


def test_full_text_shows_the_body_verbatim_including_trailing_whitespace() -> None:
    assert full.text(message("ends with newline\n")).endswith("  text:  ends with newline\n")


# -- truncation -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "limit", "shown"),
    [
        ("abcdef", 5, "abcde…"),
        ("abcde", 5, "abcde"),
        ("ééééé", 3, "ééé…"),
        ("😀😀😀", 2, "😀😀…"),
        ("x", 1, "x"),
    ],
)
def test_truncate_counts_codepoints(text: str, limit: int, shown: str) -> None:
    assert truncated(text, limit) == shown


def test_compact_renderings_truncate_at_the_limit() -> None:
    short = MessageRenderer(5, full=False)
    long_message = message("abcdefghij")

    assert short.text(long_message).splitlines()[1] == "abcde…"
    assert short.json(long_message)["text"] == "abcde…"


def test_full_renderings_never_truncate() -> None:
    short = MessageRenderer(5, full=True)
    long_message = message("abcdefghij")

    assert short.text(long_message).endswith("  text:  abcdefghij")
    assert short.json(long_message)["text"] == "abcdefghij"


def test_a_text_of_exactly_the_limit_is_not_truncated() -> None:
    assert MessageRenderer(12, full=False).json(message())["text"] == "hello worker"


# -- JSON -------------------------------------------------------------------------------------


def test_compact_json_of_a_pending_unicast_has_upstream_s_four_keys_and_its_thread() -> None:
    assert compact.json(message()) == {
        "id": 5,
        "from": 1,
        "ts": TS_CREATED,
        "text": "hello worker",
        "in_reply_to": None,
        "thread_id": 5,  # a message that answers nothing starts its own thread
    }


def test_a_reply_names_what_it_answers_and_its_thread_in_every_rendering() -> None:
    reply = replace(message(task_id=9), in_reply_to=5, thread_id=2)

    assert compact.json(reply)["in_reply_to"] == 5
    assert compact.json(reply)["thread_id"] == 2
    assert (full.json(reply)["in_reply_to"], full.json(reply)["thread_id"]) == (5, 2)
    assert compact.text(reply) == f"[9 | from:1 | re:5 | {TS_CREATED}]\nhello worker"
    assert "  re:    5 (thread 2)\n" in full.text(reply)


def test_compact_json_of_a_summary_adds_kind_origin_and_state() -> None:
    assert compact.json(SUMMARY) == {
        "id": 7,
        "from": 1,
        "ts": TS_CREATED,
        "text": "Broadcast sent to 2 recipients",
        "in_reply_to": None,
        "thread_id": 7,
        "kind": "broadcast_summary",
        "origin": 7,
        "state": "completed",
    }


def test_compact_json_of_an_acked_delivery() -> None:
    acked = message(origin=7, state=MessageState.COMPLETED, changed=CHANGED)

    assert compact.json(acked) == {
        "id": 5,
        "from": 1,
        "ts": TS_CHANGED,
        "text": "hello worker",
        "in_reply_to": None,
        "thread_id": 5,
        "origin": 7,
        "state": "completed",
    }


def test_full_json_has_every_column_in_order() -> None:
    body = full.json(message(state=MessageState.COMPLETED, changed=CHANGED, origin=7))

    assert dumps(body) == (
        '{"task_id":5,"context_id":3,"from_agent_id":1,"to_agent_id":3,"type":"unicast",'
        f'"created_at":"{TS_CREATED}","status_state":"completed",'
        f'"status_timestamp":"{TS_CHANGED}","origin_task_id":7,"text":"hello worker",'
        '"sender_verified":false,"in_reply_to":null,"thread_id":5}'
    )


def test_full_json_of_a_summary_has_a_null_recipient() -> None:
    body = full.json(SUMMARY)

    assert body["to_agent_id"] is None
    assert body["origin_task_id"] == 7
    assert body["type"] == "broadcast_summary"


def test_dumps_is_compact_and_writes_raw_utf8() -> None:
    assert dumps({"a": [1, 2], "t": "héllo ✓ 日本"}) == '{"a":[1,2],"t":"héllo ✓ 日本"}'


def test_dumps_escapes_what_a_terminal_would_obey_and_parses_back_exactly() -> None:
    text = "a\x1bb\x7fc\x9bd\u202ee\u2028f\u2066g"
    line = dumps({"text": text})
    assert line == '{"text":"a\\u001bb\\u007fc\\u009bd\\u202ee\\u2028f\\u2066g"}'
    assert json.loads(line) == {"text": text}


# -- helpers ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [
        (0, "0s"),
        (59.9, "59s"),
        (60, "1m"),
        (3599, "59m"),
        (3600, "1h"),
        (86399, "23h"),
        (90000, "25h"),
        (-5, "0s"),
    ],
)
def test_humanize_floors(seconds: float, shown: str) -> None:
    assert humanize(timedelta(seconds=seconds)) == shown


@pytest.mark.parametrize(
    ("n", "noun", "line"),
    [
        (0, "member", "0 members."),
        (1, "member", "1 member:"),
        (2, "member", "2 members:"),
        (0, "agent", "0 agents."),
        (1, "agent", "1 agent:"),
        (12, "agent", "12 agents:"),
    ],
)
def test_count_line(n: int, noun: str, line: str) -> None:
    assert count_line(n, noun) == line


def test_table_sizes_columns_to_content_with_two_spaces_and_a_dashed_rule() -> None:
    text = table(["ID", "NAME", "X"], [(1, "opencode-runner", "-"), (12345, "a", "long value")])

    assert text == (
        "ID     NAME             X\n"
        "-----  ---------------  ----------\n"
        "1      opencode-runner  -\n"
        "12345  a                long value"
    )


def test_table_indents_every_line() -> None:
    assert table(["A"], [("x",)], indent="  ") == "  A\n  -\n  x"


def test_labelled_aligns_values_in_one_column() -> None:
    assert labelled([("id", 1), ("created_at", "t")], 12) == "id:         1\ncreated_at: t"

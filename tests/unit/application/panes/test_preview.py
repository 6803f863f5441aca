"""The preview payload: header line, then the truncated and sanitized body."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from cafleet.domain.preview import preview, sanitized, truncated

CREATED = datetime(2026, 11, 29, 8, 17, 14, 410760, tzinfo=UTC)


def test_preview_is_a_header_line_then_the_body() -> None:
    assert preview(12, 3, CREATED, "hello worker", 200) == (
        "[cafleet msg 12 from 3 2026-11-29T08:17:14.410760+00:00]\nhello worker"
    )


def test_header_timestamp_always_has_microseconds() -> None:
    created = datetime(2026, 1, 1, 8, 0, tzinfo=UTC)

    assert preview(1, 2, created, "x", 200).split("\n")[0] == (
        "[cafleet msg 1 from 2 2026-01-01T08:00:00.000000+00:00]"
    )


def test_preview_has_exactly_two_lines_whatever_the_text() -> None:
    body = preview(5, 1, CREATED, "a\nb\r\nc\rd\te", 200).split("\n")

    assert body == ["[cafleet msg 5 from 1 2026-11-29T08:17:14.410760+00:00]", "a⏎b⏎c⏎d⏎e"]


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        pytest.param("hello worker", "hello worker", id="plain"),
        pytest.param("line1\nline2", "line1⏎line2", id="lf"),
        pytest.param("line1\r\nline2", "line1⏎line2", id="crlf-is-one"),
        pytest.param("line1\rline2", "line1⏎line2", id="cr"),
        pytest.param("a\tb", "a⏎b", id="tab"),
        pytest.param("a\n\nb", "a⏎⏎b", id="blank-line"),
        pytest.param("a\r\n\r\nb", "a⏎⏎b", id="two-crlf"),
        pytest.param("run $(date) | tee `x`", "run $﹙date) │ tee ˋxˋ", id="spec-example"),
        pytest.param("cost $5 (approx)", "cost $5 (approx)", id="dollar-alone-kept"),
        pytest.param("a||b", "a││b", id="pipes"),
        pytest.param("\x1b[31mred", "\ufffd[31mred", id="esc"),
        pytest.param("nul\x00bell\x07", "nul\ufffdbell\ufffd", id="c0"),
        pytest.param("del\x7f", "del\ufffd", id="del"),
        pytest.param("c1\x80\x9b\x9f", "c1\ufffd\ufffd\ufffd", id="c1"),
        pytest.param("\xa0nbsp é ✓ 🚀", "\xa0nbsp é ✓ 🚀", id="printable-unicode-kept"),
    ],
)
def test_body_sanitizing(raw: str, shown: str) -> None:
    assert sanitized(raw) == shown
    assert preview(1, 2, CREATED, raw, 200).split("\n", 1)[1] == shown


def test_text_at_the_limit_is_not_truncated() -> None:
    assert truncated("x" * 200, 200) == "x" * 200


def test_text_over_the_limit_keeps_the_limit_and_an_ellipsis() -> None:
    text = "".join(chr(ord("a") + n % 26) for n in range(205))

    body = preview(1, 2, CREATED, text, 200).split("\n", 1)[1]

    assert body == text[:200] + "…"


def test_limit_counts_codepoints_not_bytes() -> None:
    assert truncated("é" * 205, 200) == "é" * 200 + "…"
    assert truncated("🚀" * 3, 2) == "🚀🚀…"


def test_truncation_happens_before_sanitizing() -> None:
    # 5 codepoints of raw text survive; the CRLF counts as two before it becomes one ⏎
    assert preview(1, 2, CREATED, "ab\r\ncdef", 5).split("\n", 1)[1] == "ab⏎c…"


def test_a_cut_through_crlf_leaves_one_line_break_mark() -> None:
    assert preview(1, 2, CREATED, "ab\r\ncd", 3).split("\n", 1)[1] == "ab⏎…"


def test_empty_text_gives_an_empty_body_line() -> None:
    assert preview(1, 2, CREATED, "", 200) == (
        "[cafleet msg 1 from 2 2026-11-29T08:17:14.410760+00:00]\n"
    )

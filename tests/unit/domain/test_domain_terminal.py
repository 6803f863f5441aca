"""Stored text escaped for the terminal: controls and bidi overrides shown, never obeyed."""

from __future__ import annotations

import pytest

from cafleet.domain.terminal import escaped

C0 = [chr(c) for c in range(0x20) if chr(c) not in "\t\n"]
C1 = [chr(c) for c in range(0x80, 0xA0)]
BIDI = [chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))]


@pytest.mark.parametrize("char", [*C0, "\x7f", *C1], ids=lambda c: f"U+{ord(c):04X}")
def test_every_c0_c1_and_del_control_is_written_as_a_hex_escape(char: str) -> None:
    expected = "\\r" if char == "\r" else f"\\x{ord(char):02x}"

    assert escaped(f"a{char}b") == f"a{expected}b"


@pytest.mark.parametrize("char", BIDI, ids=lambda c: f"U+{ord(c):04X}")
def test_bidi_embeddings_overrides_and_isolates_are_written_as_unicode_escapes(
    char: str,
) -> None:
    assert escaped(f"a{char}b") == f"a\\u{ord(char):04x}b"


def test_newlines_and_tabs_stay_so_a_body_prints_as_its_lines() -> None:
    assert escaped("line one\n\tindented\nline three\n") == "line one\n\tindented\nline three\n"


@pytest.mark.parametrize(
    "text",
    [
        "plain ascii, punctuation: ~!@#$%^&*()_+{}|:\"<>?`[]\\;',./",
        "café naïve Ærøskøbing",
        "日本語のテキスト、中文文本，한국어",
        "emoji 🚀👩‍💻🇯🇵 and a zero-width joiner",
        "עברית and العربية with their own direction, no override",
        "⏎ │ ˋ $﹙ look-alikes and U+FFFD �",
        "",
    ],
)
def test_ordinary_unicode_is_left_alone(text: str) -> None:
    assert escaped(text) == text


def test_the_terminal_attacks_of_the_research_come_out_inert() -> None:
    body = "hello\x1b]52;c;cHduZWQ=\x07\x1b]0;new-title\x07\rFAKE\x1b[2J\u202eevil\x9b31m"

    shown = escaped(body)

    assert shown == (
        "hello\\x1b]52;c;cHduZWQ=\\x07\\x1b]0;new-title\\x07\\rFAKE\\x1b[2J\\u202eevil\\x9b31m"
    )
    assert shown.isprintable()


def test_escaping_twice_changes_nothing() -> None:
    once = escaped("\x1b[31mred\x1b[0m\r\n\u2066x\u2069\x00")

    assert escaped(once) == once

"""Stored text made harmless to print on a terminal: its controls shown, never obeyed."""

from __future__ import annotations

import re

# C0 controls but tab and newline, DEL, C1 controls, and the bidi embeddings, overrides and
# isolates (U+202A-U+202E, U+2066-U+2069) that make text read differently from its order.
_UNSAFE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if char == "\r":
        return "\\r"
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def escaped(text: str) -> str:
    """`text` with each unsafe character written as a Python string literal writes it:
    `\\x1b` (ESC), `\\r`, `\\x7f`, `\\x9b`, `\\u202e`. Newlines and tabs stay, so a body
    still prints as its lines; everything else (accents, CJK, emoji) is left alone.
    Escaping twice changes nothing."""
    return _UNSAFE.sub(_escape, text)

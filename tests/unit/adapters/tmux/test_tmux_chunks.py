"""The tmux driver's text pieces: within the byte cap, whole characters, nothing lost."""

from __future__ import annotations

import pytest

from cafleet.adapters.tmux.formats import CHUNK_BYTES, chunks


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("", id="empty"),
        pytest.param("a" * CHUNK_BYTES, id="exactly-the-cap"),
        pytest.param("a" * (CHUNK_BYTES - 1) + "é" + "b", id="two-byte-char-across-the-cap"),
        pytest.param("x" * (CHUNK_BYTES - 2) + "日本語" * 3000, id="three-byte-chars"),
        pytest.param("🙂" * (CHUNK_BYTES // 2), id="four-byte-chars"),
    ],
)
def test_pieces_stay_under_the_cap_and_rejoin_to_the_text(text: str) -> None:
    pieces = list(chunks(text, CHUNK_BYTES))
    assert "".join(pieces) == text
    assert all(0 < len(p.encode()) <= CHUNK_BYTES for p in pieces)
    assert all(len(p.encode()) > CHUNK_BYTES - 4 for p in pieces[:-1])  # no piece cut short


def test_a_character_wider_than_the_limit_is_kept_whole() -> None:
    assert list(chunks("a🙂b", 2)) == ["a", "🙂", "b"]

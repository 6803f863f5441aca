"""The digests the hot path computes without OpenSSL are the standard library's own."""

from __future__ import annotations

import hashlib
import hmac

import pytest

from cafleet.domain.digests import same_text, sha256_hex


@pytest.mark.parametrize(
    "data", [b"", b"abc", "caf\u00e9 \U0001f600".encode(), bytes(range(256)) * 9]
)
def test_sha256_hex_is_hashlib_s(data: bytes) -> None:
    assert sha256_hex(data) == hashlib.sha256(data).hexdigest()


@pytest.mark.parametrize(
    ("left", "right"),
    [("", ""), ("sha256:ab", "sha256:ab"), ("sha256:ab", "sha256:ac"), ("a", "ab")],
)
def test_same_text_is_compare_digest(left: str, right: str) -> None:
    assert same_text(left, right) is hmac.compare_digest(left, right)

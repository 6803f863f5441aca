"""SHA-256 and constant-time comparison without loading OpenSSL.

`hashlib` and `hmac` load OpenSSL's libcrypto (about 3.5 MiB of memory and 4 ms), which
would be a third of what a hot command adds to the interpreter. CPython ships its own
SHA-256 and `compare_digest` in built-in modules; where a build lacks them, the public
modules are used. The results are the same either way.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any


def sha256_hex(data: bytes) -> str:
    digest: str = _sha256()(data).hexdigest()
    return digest


def same_text(left: str, right: str) -> bool:
    """Whether two ASCII strings are equal, in time that does not depend on where they differ."""
    return bool(_compare_digest()(left, right))


@cache
def _sha256() -> Callable[[bytes], Any]:
    try:
        from _sha2 import sha256  # type: ignore[import-not-found]  # Python 3.12+
    except ImportError:
        try:
            from _sha256 import sha256  # type: ignore[import-not-found]  # Python 3.11
        except ImportError:
            from hashlib import sha256
    return sha256  # type: ignore[no-any-return]


@cache
def _compare_digest() -> Callable[[str, str], bool]:
    try:
        from _operator import _compare_digest  # what hmac.compare_digest is
    except ImportError:
        from hmac import compare_digest as _compare_digest  # type: ignore[no-redef]
    return _compare_digest

"""The admin WebUI's generated token, kept in a 0600 file of the private runtime directory
so that the person who started the server (or a script of theirs) can find it again.

One file per port, `webui-<port>.token`, holding the token and a newline. Standard library
only.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path

from cafleet.adapters.runtime.private_files import create_private, problem_of, read_private
from cafleet.domain.errors import Unavailable

TOKEN_BYTES = 32  # token_urlsafe(32): 43 characters, 256 bits


def generated_token() -> str:
    return secrets.token_urlsafe(TOKEN_BYTES)


def token_file(directory: Path, port: int) -> Path:
    return directory / f"webui-{port}.token"


def publish_token(directory: Path, port: int, token: str) -> Path:
    """Write the token to its file, replacing one an earlier server on this port left."""
    path = token_file(directory, port)
    partial = directory / f".webui-{port}-{secrets.token_hex(8)}.partial"
    try:
        create_private(partial, token + "\n")
        os.replace(partial, path)  # the directory is private: nobody else can race the rename
    except OSError as exc:
        with contextlib.suppress(OSError):
            partial.unlink()
        raise Unavailable(f"cannot write the WebUI token file {path}: {problem_of(exc)}") from None
    return path


def withdraw_token(path: Path, token: str) -> None:
    """Remove the file when it still holds this server's token (a later server may own it)."""
    with contextlib.suppress(OSError):
        if read_private(path).strip() == token:
            path.unlink()

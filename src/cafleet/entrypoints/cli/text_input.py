"""The --text / --text-file pair: exactly one, never blank, read before any side effect."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from cafleet.domain.errors import Invalid

F = TypeVar("F", bound=Callable[..., Any])


def text_options(func: F) -> F:
    func = click.option(
        "--text-file",
        "text_file",
        metavar="PATH",
        help="Read the body from a UTF-8 file ('-' for stdin).",
    )(func)
    return click.option("--text", "text", help="The body, given inline.")(func)


def read_body(text: str | None, text_file: str | None) -> str:
    if text is not None and text_file is not None:
        raise click.UsageError("--text and --text-file are mutually exclusive.")
    if text is None and text_file is None:
        raise click.UsageError("Provide exactly one of --text or --text-file.")
    if text is not None:
        if not text.strip():
            raise click.UsageError("text may not be empty.")
        return text
    assert text_file is not None
    return _read_stdin() if text_file == "-" else _read_file(text_file)


def _read_stdin() -> str:
    data = sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else sys.stdin.read()
    try:
        body = data.decode("utf-8") if isinstance(data, bytes) else data
    except UnicodeDecodeError:
        raise Invalid("--text-file -: file is not valid UTF-8.") from None
    if not body.strip():
        raise Invalid("--text-file -: stdin is empty.")
    return body


def _read_file(name: str) -> str:
    path = Path(name)
    try:
        regular = path.is_file()
    except OSError:  # a directory on the way that this user may not enter
        raise Invalid(f"--text-file {name}: file is not readable.") from None
    if not regular:
        raise Invalid(f"--text-file {name}: file does not exist or is not a regular file.")
    try:
        data = path.read_bytes()
    except OSError:
        raise Invalid(f"--text-file {name}: file is not readable.") from None
    try:
        body = data.decode("utf-8")
    except UnicodeDecodeError:
        raise Invalid(f"--text-file {name}: file is not valid UTF-8.") from None
    if not body.strip():
        raise Invalid(f"--text-file {name}: file is empty.")
    return body

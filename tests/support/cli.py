"""The one way a test runs the `cafleet` CLI as a separate process.

`run_cafleet` runs the installed console script with exactly the environment it is given and
fails the test if the CLI printed a traceback; `Cli` binds it to an environment.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple


def cafleet_command() -> list[str]:
    """The installed console script (the virtualenv's own first), else `python -m cafleet`."""
    search = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    found = shutil.which("cafleet", path=search)
    return [found] if found else [sys.executable, "-m", "cafleet"]


CAFLEET = cafleet_command()


class Result(NamedTuple):
    code: int
    stdout: str
    stderr: str

    @property
    def lines(self) -> list[str]:
        return self.stdout.splitlines()


def run_cafleet(
    *args: str,
    env: Mapping[str, str],
    input: str | bytes | None = None,
    cwd: Path | None = None,
    timeout: float = 120,
    wrapper: Sequence[str] = (),
) -> Result:
    """Run the installed `cafleet` with exactly `env` (stdin empty unless `input`); never a
    traceback on stderr."""
    data = input.encode() if isinstance(input, str) else input
    done = subprocess.run(
        [*wrapper, *CAFLEET, *args],
        env=dict(env),
        input=data if data is not None else b"",
        capture_output=True,
        cwd=cwd,
        timeout=timeout,
        check=False,
    )
    result = Result(
        done.returncode,
        done.stdout.decode("utf-8", errors="replace"),
        done.stderr.decode("utf-8", errors="replace"),
    )
    assert "Traceback" not in result.stderr, result.stderr
    return result


def merged(env: Mapping[str, str], overrides: Mapping[str, str | None] | None) -> dict[str, str]:
    """`env` with `overrides` applied; an override of None removes the variable."""
    result = dict(env)
    for key, value in (overrides or {}).items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = value
    return result


class Cli:
    """`cafleet` bound to an environment; per-call overrides (None removes a variable)."""

    def __init__(self, env: Mapping[str, str], wrapper: Sequence[str] = ()) -> None:
        self.env = dict(env)
        self.wrapper = tuple(wrapper)  # a command the CLI runs under (e.g. setpriv)

    def with_env(self, **overrides: str | None) -> Cli:
        return Cli(merged(self.env, overrides), self.wrapper)

    def __call__(
        self,
        *args: str,
        input: str | bytes | None = None,
        cwd: Path | None = None,
        env: Mapping[str, str | None] | None = None,
        timeout: float = 120,
    ) -> Result:
        return run_cafleet(
            *args,
            env=merged(self.env, env),
            input=input,
            cwd=cwd,
            timeout=timeout,
            wrapper=self.wrapper,
        )

    def ok(self, *args: str, **kwargs: Any) -> str:
        """Run, insist on exit 0 and a silent stderr, return stdout."""
        result = self(*args, **kwargs)
        assert result.code == 0, result
        assert result.stderr == "", result
        return result.stdout

    def json(self, *args: str, **kwargs: Any) -> Any:
        """Run with the global --json flag and parse stdout."""
        return json.loads(self.ok("--json", *args, **kwargs))

    def fails(self, *args: str, **kwargs: Any) -> str:
        """Run, insist on exit 1 with an empty stdout and one stderr line; return that line."""
        result = self(*args, **kwargs)
        assert result.code == 1, result
        assert result.stdout == "", result
        lines = result.stderr.splitlines()
        assert len(lines) == 1, result
        return lines[0]

"""The one import probe: run part of CAFleet in a fresh interpreter and see what it imported.

The import-hygiene tests (a hot command, `--help`, the hook and the launcher load nothing they
do not need) all ask the same question of `sys.modules`; `probe_cli` and `probe_module` answer
it with the exit code, the output and every module loaded, and `Probe.loaded` picks the ones a
test is about.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

_RUN = """
import contextlib, io, json, sys

kind, target = sys.argv[1], json.loads(sys.argv[2])
out, err = io.StringIO(), io.StringIO()
code = 0
with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
    try:
        if kind == "cli":
            from cafleet.entrypoints.cli.main import main

            main(target)
        else:
            import runpy

            sys.argv = ["x"]
            runpy.run_module(target, run_name="__main__")
    except SystemExit as exc:
        code = exc.code
print()
print(json.dumps({
    "code": code,
    "stdout": out.getvalue(),
    "stderr": err.getvalue(),
    "modules": sorted(sys.modules),
}))
"""


@dataclass(frozen=True)
class Probe:
    code: Any  # SystemExit's code: 0, an int, a message, or None
    stdout: str
    stderr: str
    modules: tuple[str, ...]

    def loaded(
        self,
        packages: Iterable[str] = (),
        *,
        names: Iterable[str] = (),
        prefixes: Iterable[str] = (),
    ) -> list[str]:
        """The loaded modules of `packages` (by top-level name), named exactly in `names`, or
        starting with one of `prefixes`; sorted."""
        tops, exact, starts = set(packages), set(names), tuple(prefixes)
        return sorted(
            m
            for m in self.modules
            if m.split(".")[0] in tops or m in exact or (starts and m.startswith(starts))
        )


def probe_cli(
    argv: Sequence[str], env: Mapping[str, str] | None = None, timeout: float = 60
) -> Probe:
    """`cafleet <argv>` run in-process by a fresh interpreter (its output captured)."""
    return _probe("cli", list(argv), env, timeout)


def probe_module(module: str, env: Mapping[str, str] | None = None, timeout: float = 60) -> Probe:
    """`python -m <module> x` run by a fresh interpreter (its output captured)."""
    return _probe("module", module, env, timeout)


def _probe(kind: str, target: Any, env: Mapping[str, str] | None, timeout: float) -> Probe:
    done = subprocess.run(
        [sys.executable, "-c", _RUN, kind, json.dumps(target)],
        env=None if env is None else dict(env),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    found = json.loads(done.stdout.splitlines()[-1])  # after anything written past sys.stdout
    return Probe(found["code"], found["stdout"], found["stderr"], tuple(found["modules"]))

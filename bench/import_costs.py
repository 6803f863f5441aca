"""What the packages left out of the hot path would cost: import time against the CLI's own.

Each probe is one ``python -c 'import ...'``: the CLI's import graph (what a hot command
loads), and beside it pydantic-settings, dependency-injector's ``containers`` and
``providers`` and SQLAlchemy, each alone. Per probe two figures: the import time
``-X importtime`` reports (the sum of the top-level imports' cumulative time, interpreter
start-up excluded) and the whole process's wall time. Probes run interleaved, round after
round, the order rotated each round; medians over the rounds.

Standard library only. Usage (from the repository root)::

    python3 bench/import_costs.py [--python PATH ...] [--rounds 15] [--write]

``--python`` (repeatable) names an interpreter whose packages are measured; a probe whose
package an interpreter lacks is left out for it. Default: this repository's virtualenv, which
has no pydantic-settings (docs/benchmarks.md says how to make one that has).
The repository's ``src`` is put on ``PYTHONPATH`` so any interpreter finds ``cafleet``.
Nothing here asserts on timings: it measures and reports.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from cli_latency import IMPORT_GRAPH, parse_importtime, timed_run
from docs_section import replace_marked, reproduce_lines

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_PYTHON = REPO_ROOT / ".venv" / "bin" / "python"
DEFAULT_DOCS = REPO_ROOT / "docs" / "benchmarks.md"
START_MARK = "<!-- import-costs:start -->"
END_MARK = "<!-- import-costs:end -->"

PROBES = (
    ("CLI import graph (a hot command's imports)", IMPORT_GRAPH),
    ("`import pydantic_settings`", "import pydantic_settings"),
    ("`import dependency_injector.containers`", "import dependency_injector.containers"),
    ("`import dependency_injector.providers`", "import dependency_injector.providers"),
    ("`import sqlalchemy`", "import sqlalchemy"),
    ("`python -c pass` (start-up alone)", "pass"),
)


@dataclass(frozen=True)
class Probe:
    label: str
    interpreter: str
    python: Path
    code: str


def probe_env() -> dict[str, str]:
    keep = {name: os.environ[name] for name in ("PATH", "HOME", "LANG") if name in os.environ}
    return {**keep, "PYTHONPATH": str(REPO_ROOT / "src")}


def output(argv: Sequence[str | Path], env: Mapping[str, str]) -> subprocess.CompletedProcess[str]:
    argv = [str(arg) for arg in argv]
    return subprocess.run(argv, check=False, env=dict(env), capture_output=True, text=True)


def describe(python: Path, env: Mapping[str, str]) -> str:
    """The interpreter's version and the versions of the measured packages it has."""
    code = (
        "import sys, importlib.metadata as m\n"
        "names = ('click', 'pydantic', 'pydantic-settings', 'dependency-injector', 'sqlalchemy')\n"
        "def v(n):\n"
        "    try: return f'{n} {m.version(n)}'\n"
        "    except m.PackageNotFoundError: return f'no {n}'\n"
        "print(f'Python {sys.version.split()[0]}; ' + ', '.join(v(n) for n in names))"
    )
    return output([python, "-c", code], env).stdout.strip()


def import_ms(python: Path, code: str, env: Mapping[str, str]) -> float:
    stderr = output([python, "-X", "importtime", "-c", code], env).stderr
    return sum(r.cumulative_us for r in parse_importtime(stderr) if r.depth == 0) / 1000.0


def measure(probes: Sequence[Probe], rounds: int, warmup: int) -> dict[Probe, tuple[float, float]]:
    """Probe -> (median import ms, median wall ms)."""
    env = probe_env()
    imports: dict[Probe, list[float]] = {probe: [] for probe in probes}
    walls: dict[Probe, list[float]] = {probe: [] for probe in probes}
    for number in range(warmup + rounds):
        shift = number % len(probes)
        for probe in [*probes[shift:], *probes[:shift]]:
            wall = timed_run([probe.python, "-c", probe.code], env)
            took = import_ms(probe.python, probe.code, env)
            if number >= warmup:
                walls[probe].append(wall)
                imports[probe].append(took)
    return {p: (statistics.median(imports[p]), statistics.median(walls[p])) for p in probes}


def render(
    pythons: Sequence[Path],
    results: Mapping[Probe, tuple[float, float]],
    args: argparse.Namespace,
) -> str:
    env = probe_env()
    cli = {p.interpreter: took for p, (took, _) in results.items() if p.code == IMPORT_GRAPH}
    lines = [
        "### Results",
        "",
        f"- Date: {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC",
        f"- Machine: {platform.system()} {platform.release()} ({platform.machine()}), "
        f"nproc {os.cpu_count()}",
        *(
            f"- Interpreter {letter(i)}: {describe(python, env)}"
            for i, python in enumerate(pythons)
        ),
        f"- Load while measuring: 1-min load average {args.load_before:.2f} before, "
        f"{os.getloadavg()[0]:.2f} after",
        f"- Runs: {args.rounds} rounds after {args.warmup} warm-up rounds, every probe of every "
        "interpreter interleaved (order rotated each round); medians",
        "",
        "| Probe | interpreter | import ms (`-X importtime`) | × the CLI's imports "
        "| whole process ms |",
        "|---|:---:|---:|---:|---:|",
    ]
    for probe, (took, wall) in results.items():
        ratio = took / cli[probe.interpreter]
        lines.append(
            f"| {probe.label} | {probe.interpreter} | {took:.0f} | {ratio:.2f}× | {wall:.0f} |"
        )
    lines += ["", f"The CLI's import graph: `{IMPORT_GRAPH}`.", ""]
    shown = " ".join(f"--python <interpreter {letter(i)}>" for i in range(len(pythons)))
    lines += reproduce_lines(
        f"python3 bench/import_costs.py {shown} --rounds {args.rounds} --write"
    )
    return "\n".join(lines)


def letter(index: int) -> str:
    return "ABCDEFGH"[index]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", type=Path, action="append", help="repeatable")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--docs", type=Path, default=DEFAULT_DOCS)
    parser.add_argument("--write", action="store_true", help="update docs/benchmarks.md")
    args = parser.parse_args(argv)
    pythons: list[Path] = args.python or [DEFAULT_PYTHON]
    args.load_before = os.getloadavg()[0]
    env = probe_env()
    probes = []
    for index, python in enumerate(pythons):
        if output([python, "-c", IMPORT_GRAPH], env).returncode != 0:
            print(f"error: {python} cannot import the CLI ({IMPORT_GRAPH})", file=sys.stderr)
            return 1
        probes += [
            Probe(label, letter(index), python, code)
            for label, code in PROBES
            if output([python, "-c", code], env).returncode == 0
        ]
    body = render(pythons, measure(probes, args.rounds, args.warmup), args)
    print(body)
    if args.write:
        block = f"{START_MARK}\n{body}\n{END_MARK}"
        replace_marked(args.docs, START_MARK, END_MARK, block, "# Benchmarks\n\n")
        print(f"updated {args.docs}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

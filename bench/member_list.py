"""Cost of `cafleet member list --fleet-id F` (and `--json`), by fleet size.

Each implementation gets a scratch SQLite file and a private tmux server, prepared as in
``monitor_tick.py``: a Director (the server's first pane), a monitoring member running the
demo agent, and N members whose panes run ``sleep 3600`` (one tmux window each), registered
in the database (ours through the unit of work, upstream with the rows its `member create`
writes). Then the listing runs as a whole process, ours and upstream alternating call by
call, with a ``tmux`` shim first on ``PATH`` that logs each invocation before it runs the
real tmux, so each call's wall time and its count of tmux subprocesses are recorded.

Standard library only; the registration of our members runs in a child that imports the
package. Usage (from the repository root)::

    python3 bench/member_list.py [--sizes 20,100,200] [--calls 15] [--warmup 2]
                                 [--upstream-cafleet PATH] [--write] [--raw-json FILE]

Nothing here asserts on timings: it measures and reports.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import monitor_tick as mt
from docs_section import replace_marked

START_MARK = "<!-- member-list:start -->"
END_MARK = "<!-- member-list:end -->"
FORMS = (("table", ()), ("json", ("--json",)))

SHIM = """#!/bin/sh
echo x >> "$CAFLEET_BENCH_TMUX_LOG"
exec {real} "$@"
"""


def register_main(spec_path: Path) -> int:
    """Child mode: register the members of a prepared fleet; print their ids."""
    spec = json.loads(spec_path.read_text())
    ids = mt.register_ours(int(spec["fleet_id"]), int(spec["director_id"]), spec["panes"])
    print(json.dumps(ids))
    return 0


def tmux_shim(where: Path) -> Path:
    real = shutil.which("tmux")
    if real is None:
        raise mt.BenchError("tmux is not on PATH")
    where.mkdir(parents=True, exist_ok=True)
    shim = where / "tmux"
    shim.write_text(SHIM.format(real=real))
    shim.chmod(0o755)
    return where


def timed_call(argv: Sequence[str], env: dict[str, str], log: Path) -> dict[str, float]:
    log.write_text("")
    start = time.perf_counter()
    proc = mt.run(argv, env, check=False)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise mt.BenchError(f"`{' '.join(argv)}` exited {proc.returncode}: {proc.stderr.strip()}")
    return {"wall_ms": wall * 1000, "tmux_calls": len(log.read_text().splitlines())}


def prepare(
    impl: mt.Impl, where: Path, base: list[str], size: int, env: dict[str, str], demo: list[str]
) -> mt.Prepared:
    database = where / "cafleet.db"
    if impl.label == "ours":
        prepared = mt.prepare_ours(impl, env, database, base, size, demo)
        spec = where / "register.json"
        spec.write_text(
            json.dumps(
                {
                    "fleet_id": prepared.fleet_id,
                    "director_id": prepared.director_id,
                    "panes": prepared.panes,
                }
            )
        )
        out = mt.run([impl.python, Path(__file__).resolve(), "--register", spec], env)
        prepared.member_ids = json.loads(out.stdout)
        return prepared
    return mt.prepare_upstream(impl, env, database, base, size, demo)


def listed_count(impl: mt.Impl, prepared: mt.Prepared) -> int:
    argv = [*impl.cafleet, "--json", "member", "list", "--fleet-id", str(prepared.fleet_id)]
    body = json.loads(mt.run(argv, prepared.env).stdout)
    rows = body if isinstance(body, list) else body.get("members", [])
    return len(rows)


Samples = dict[int, dict[str, dict[str, list[dict[str, float]]]]]  # size -> impl -> form


def measure_size(
    impls: Sequence[mt.Impl], size: int, args: argparse.Namespace, scratch: Path, demo: list[str]
) -> tuple[dict[str, dict[str, list[dict[str, float]]]], dict[str, int]]:
    shim_dir = tmux_shim(scratch / "shim")
    log = scratch / f"tmux-{size}.log"
    stack: list[Any] = []
    prepared: dict[str, mt.Prepared] = {}
    listed: dict[str, int] = {}
    try:
        for impl in impls:
            where = scratch / f"{impl.label}-{size}"
            env = mt.scratch_env(where / "home")
            env["CAFLEET_DATABASE_URL"] = f"sqlite:///{where / 'cafleet.db'}"
            print(f"{impl.label}, {size} members: preparing ...", file=sys.stderr)
            tmux = mt.private_tmux(env)
            base = tmux.__enter__()
            stack.append(tmux)
            prepared[impl.label] = prepare(impl, where, base, size, env, demo)
            env["PATH"] = f"{shim_dir}{os.pathsep}{env.get('PATH', '')}"
            env["CAFLEET_BENCH_TMUX_LOG"] = str(log)
            listed[impl.label] = listed_count(impl, prepared[impl.label])
        samples: dict[str, dict[str, list[dict[str, float]]]] = {
            impl.label: {form: [] for form, _ in FORMS} for impl in impls
        }
        for round_no in range(args.warmup + args.calls):
            for form, flags in FORMS:
                for impl in impls:  # alternate call by call: drift hits both alike
                    p = prepared[impl.label]
                    argv = [*impl.cafleet, *flags, "member", "list", "--fleet-id", str(p.fleet_id)]
                    sample = timed_call(argv, p.env, log)
                    if round_no >= args.warmup:
                        samples[impl.label][form].append(sample)
        return samples, listed
    finally:
        for tmux in reversed(stack):
            tmux.__exit__(None, None, None)


def median_of(rows: Sequence[dict[str, float]], key: str) -> float:
    return statistics.median(row[key] for row in rows)


def results_table(samples: Samples, listed: dict[int, dict[str, int]]) -> str:
    lines = [
        "| Members | Output | Impl | rows listed | wall median ms | min ms | max ms"
        " | tmux calls per call | ratio ours / upstream (wall) |",
        "|---:|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for size, by_impl in samples.items():
        for form, _ in FORMS:
            ours = by_impl.get("ours", {}).get(form)
            upstream = by_impl.get("upstream", {}).get(form)
            for impl, rows in by_impl.items():
                walls = [row["wall_ms"] for row in rows[form]]
                ratio = "-"
                if impl == "ours" and ours and upstream:
                    ratio = f"{median_of(ours, 'wall_ms') / median_of(upstream, 'wall_ms'):.2f}x"
                lines.append(
                    f"| {size} | {form} | {impl} | {listed[size][impl]}"
                    f" | {statistics.median(walls):.0f} | {min(walls):.0f} | {max(walls):.0f}"
                    f" | {median_of(rows[form], 'tmux_calls'):g} | {ratio} |"
                )
    return "\n".join(lines)


METHOD = """\
## Member listing by fleet size

Script: [`bench/member_list.py`](../bench/member_list.py) (standard library only; it reuses
the fleet preparation of `bench/monitor_tick.py`).

**What is measured.** The whole-process wall time of `cafleet member list --fleet-id F` and
`cafleet --json member list --fleet-id F`, and the number of tmux subprocesses each call
starts, for fleets of 20, 100 and 200 members whose panes are real (one tmux window each,
running `sleep 3600`, on a private server `tmux -L cafleet-bench-mon-<pid>-<random>`), for
this repository and upstream `cafleet==0.17.1`. The fleets are prepared as for the monitor
tick below (a Director, a monitoring member running the demo agent, N members; ours
registered through the unit of work, upstream with the rows its `member create` writes).
Each call runs with a `tmux` shim first on `PATH` that appends a line to a log and then
runs the real tmux, so "tmux calls" counts every tmux process the listing started. Calls
alternate ours, upstream, call by call; the first rounds are untimed. The "rows listed"
column is read from one `--json` call of each before the timing, to show both list the same
fleet.
"""


def render(samples: Samples, listed: dict[int, dict[str, int]], args: argparse.Namespace,
           machine: list[str]) -> str:  # fmt: skip
    flat = " / ".join(
        f"{median_of(by_impl['ours']['table'], 'tmux_calls'):g}" for by_impl in samples.values()
    )
    sizes = " / ".join(str(size) for size in samples)
    parts = [
        START_MARK,
        METHOD,
        "### Results",
        "",
        *machine,
        f"- Runs: {args.calls} timed calls per implementation, output and size, after"
        f" {args.warmup} untimed rounds; medians",
        "",
        results_table(samples, listed),
        "",
        f"Ours starts {flat} tmux processes per listing at {sizes} members: one"
        " `list-panes -a` for the server the members' panes are on, whatever their number"
        " (it shows each member's pane state and agent status from that one listing)."
        " Upstream's listing starts none: it reads the database only and shows no pane state.",
        "",
        "Reproduce (from the repository root):",
        "",
        "```bash",
        mt.reproduce_command(args, "member_list.py", ("--calls", args.calls)),
        "```",
        END_MARK,
    ]
    return "\n".join(parts)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = mt.fleet_bench_parser(__doc__, "--calls", 15, "timed calls of each kind", 2)
    parser.add_argument("--register", type=Path, help=argparse.SUPPRESS)
    return mt.parsed_sizes(parser, argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.register is not None:
        return register_main(args.register)
    ours_python = args.ours_python.absolute()
    impls = mt.implementations(args)
    demo = [str(ours_python), "-m", "cafleet.demo.agent"]
    samples: Samples = {}
    listed: dict[int, dict[str, int]] = {}
    with tempfile.TemporaryDirectory(prefix="cafleet-bench-list-") as tmp:
        try:
            for size in args.sizes:
                samples[size], listed[size] = measure_size(impls, size, args, Path(tmp), demo)
            env = mt.scratch_env(Path(tmp) / "probe-home")
            machine = [
                f"- Date: {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC",
                f"- Machine: {platform.system()} {platform.release()} ({platform.machine()}),"
                f" nproc {len(os.sched_getaffinity(0))}, {mt.cpu_model()};"
                f" {mt.run(['tmux', '-V'], env).stdout.strip()}, SQLite {sqlite3.sqlite_version}",
            ]
            for impl in impls:
                version = mt.run([*impl.cafleet, "--version"], env).stdout.strip()
                python = mt.python_version(impl.python, env)
                machine.append(f"- {impl.label}: {version} on Python {python}")
        except mt.BenchError as exc:
            print(f"benchmark failed: {exc}", file=sys.stderr)
            return 1
    body = render(samples, listed, args, machine)
    print(body)
    if args.raw_json:
        args.raw_json.parent.mkdir(parents=True, exist_ok=True)
        args.raw_json.write_text(json.dumps(samples, indent=1))
    if args.write:
        replace_marked(args.docs, START_MARK, END_MARK, body, "# Benchmarks\n\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

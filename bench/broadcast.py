"""`cafleet message broadcast` to 20, 100 and 200 live members: this repository vs upstream 0.17.1.

Each implementation gets a scratch SQLite file and a private tmux server, prepared as in
``monitor_tick.py`` (a Director, a monitoring member running the demo agent), with N members
whose panes (one tmux window each) run the fake ``claude`` of ``push_latency.py``: a raw-mode
reader that timestamps every Enter it receives with the system-wide monotonic clock. Members
are registered as Claude Code members (ours through the unit of work, marked ready; upstream
with the rows its `member create` writes). Then broadcasts run ours and upstream alternating,
each with the ``tmux`` shim of ``member_list.py`` first on ``PATH``, and for each one:

- the wall time of the broadcast process;
- the time from its start until the last of the N panes received its Enter ("all submitted");
- how many of the N panes received an Enter within 1 s of the process's end;
- the tmux processes the broadcast started.

Standard library only; the registration of our members runs in a child that imports the
package. Usage (from the repository root)::

    python3 bench/broadcast.py [--sizes 20,100] [--broadcasts 7] [--warmup 1]
                               [--upstream-cafleet PATH] [--write] [--raw-json FILE]

Nothing here asserts on timings: it measures and reports.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import member_list as ml
import monitor_tick as mt
import push_latency as pl
from docs_section import replace_marked

START_MARK = "<!-- broadcast:start -->"
END_MARK = "<!-- broadcast:end -->"
SETTLE_SECONDS = 1.0  # an Enter later than this after the process ended is not counted

Sample = dict[str, float]
Samples = dict[int, dict[str, list[Sample]]]  # size -> impl -> one sample per broadcast


def register_main(spec_path: Path) -> int:
    """Child mode: register the members of a prepared fleet as ready Claude Code members."""
    spec = json.loads(spec_path.read_text())
    ids = mt.register_ours(
        int(spec["fleet_id"]), int(spec["director_id"]), spec["panes"], "claude", (), ready=True
    )
    print(json.dumps(ids))
    return 0


def prepare(
    impl: mt.Impl,
    where: Path,
    base: list[str],
    size: int,
    env: dict[str, str],
    fake: Path,
    demo: list[str],
) -> mt.Prepared:
    database = where / "cafleet.db"

    def member_argv(n: int) -> list[str]:
        return [str(fake), "--name", f"{impl.label}-{size}-m{n}", "bench"]

    if impl.label != "ours":
        return mt.prepare_upstream(impl, env, database, base, size, demo, member_argv)
    prepared = mt.prepare_ours(impl, env, database, base, size, demo, member_argv)
    spec = where / "register.json"
    spec.write_text(
        json.dumps(
            {"fleet_id": prepared.fleet_id, "director_id": prepared.director_id,
             "panes": prepared.panes}
        )
    )  # fmt: skip
    out = mt.run([impl.python, Path(__file__).resolve(), "--register", spec], env)
    prepared.member_ids = json.loads(out.stdout)
    return prepared


def one_broadcast(prepared: mt.Prepared, logs: Sequence[Path], tmux_log: Path, n: int) -> Sample:
    argv = [
        *prepared.impl.cafleet,
        *("message", "broadcast", "--fleet-id", str(prepared.fleet_id)),
        *("--agent-id", str(prepared.director_id), "--text", f"bench broadcast {n}"),
    ]
    tmux_log.write_text("")
    start = time.monotonic()
    proc = mt.run(argv, prepared.env, check=False)
    end = time.monotonic()
    if proc.returncode != 0:
        raise mt.BenchError(f"{prepared.impl.label}: broadcast exited {proc.returncode}")
    deadline = end + SETTLE_SECONDS
    firsts: list[float] = []
    while time.monotonic() < deadline:
        firsts = [min(t) for log in logs if (t := [e for e in pl.enter_times(log) if e > start])]
        if len(firsts) == len(logs):
            break
        time.sleep(0.01)
    time.sleep(0.3)  # a retried Enter of this broadcast would be in by now
    return {
        "wall_ms": (end - start) * 1000,
        "all_submitted_ms": (max(firsts) - start) * 1000 if len(firsts) == len(logs) else -1.0,
        "submitted": float(len(firsts)),
        "tmux_calls": float(len(tmux_log.read_text().splitlines())),
    }


def measure_size(
    impls: Sequence[mt.Impl], size: int, args: argparse.Namespace, scratch: Path, demo: list[str]
) -> dict[str, list[Sample]]:
    fake, log_dir = scratch / "fake" / "bin" / "claude", scratch / "fake" / "logs"
    shim_dir = ml.tmux_shim(scratch / "shim")
    tmux_log = scratch / f"tmux-{size}.log"
    stack: list[Any] = []
    prepared: dict[str, mt.Prepared] = {}
    logs: dict[str, list[Path]] = {}
    try:
        for impl in impls:
            where = scratch / f"{impl.label}-{size}"
            env = mt.scratch_env(where / "home")
            env["CAFLEET_DATABASE_URL"] = f"sqlite:///{where / 'cafleet.db'}"
            print(f"{impl.label}, {size} members: preparing ...", file=sys.stderr)
            tmux = mt.private_tmux(env)
            base = tmux.__enter__()
            stack.append(tmux)
            prepared[impl.label] = prepare(impl, where, base, size, env, fake, demo)
            logs[impl.label] = [log_dir / f"{impl.label}-{size}-m{n}.log" for n in range(size)]
            for log in logs[impl.label]:
                pl.wait_ready(log)
            env["PATH"] = f"{shim_dir}{os.pathsep}{env.get('PATH', '')}"
            env["CAFLEET_BENCH_TMUX_LOG"] = str(tmux_log)
        samples: dict[str, list[Sample]] = {impl.label: [] for impl in impls}
        for round_no in range(args.warmup + args.broadcasts):
            order = impls if round_no % 2 == 0 else list(reversed(impls))
            for impl in order:  # alternate broadcast by broadcast: drift hits both alike
                sample = one_broadcast(prepared[impl.label], logs[impl.label], tmux_log, round_no)
                if round_no >= args.warmup:
                    samples[impl.label].append(sample)
            print(f"  {size} members: round {round_no + 1}", file=sys.stderr)
        return samples
    finally:
        for tmux in reversed(stack):
            tmux.__exit__(None, None, None)


def median_of(rows: Sequence[Sample], key: str) -> float:
    return statistics.median(row[key] for row in rows)


def results_table(samples: Samples) -> str:
    lines = [
        "| Members | Impl | wall median ms | min | max | all submitted median ms | max"
        " | panes submitted (min of runs) | tmux calls per broadcast | ratio ours / upstream"
        " (wall, all submitted) |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for size, by_impl in samples.items():
        for impl, rows in by_impl.items():
            walls = [row["wall_ms"] for row in rows]
            done = [row["all_submitted_ms"] for row in rows]
            shown = "-" if min(done) < 0 else f"{statistics.median(done):.0f} | {max(done):.0f}"
            if min(done) < 0:
                shown = "not all | -"
            ratio = "-"
            upstream = by_impl.get("upstream")
            if impl == "ours" and upstream:
                wall = median_of(rows, "wall_ms") / median_of(upstream, "wall_ms")
                ratio = f"{wall:.2f}x"
                if min(done) >= 0 and min(r["all_submitted_ms"] for r in upstream) >= 0:
                    done_ratio = median_of(rows, "all_submitted_ms") / median_of(
                        upstream, "all_submitted_ms"
                    )
                    ratio += f", {done_ratio:.2f}x"
            lines.append(
                f"| {size} | {impl} | {statistics.median(walls):.0f} | {min(walls):.0f}"
                f" | {max(walls):.0f} | {shown}"
                f" | {min(row['submitted'] for row in rows):.0f} of {size}"
                f" | {median_of(rows, 'tmux_calls'):g} | {ratio} |"
            )
    return "\n".join(lines)


METHOD = """\
## Broadcast to live members

Script: [`bench/broadcast.py`](../bench/broadcast.py) (standard library only; it reuses the
fleet preparation of `bench/monitor_tick.py`, the fake `claude` of `bench/push_latency.py`
and the tmux shim of `bench/member_list.py`).

**What is measured.** `cafleet message broadcast` from the Director to N members (20, 100
and 200) whose panes are real (one tmux window each, on a private server) and run the fake
`claude`, which records when each Enter arrives. Members are Claude Code members (ours
registered through the unit of work and marked ready, upstream with the rows its `member
create` writes), so both implementations type the preview with the keys path. For each
broadcast: the wall time of the process, the time from its start until the last of the N
panes received its Enter ("all submitted"), how many panes got an Enter at all, and the tmux
processes started (a `tmux` shim first on `PATH` logs each one). Broadcasts alternate ours,
upstream; the first rounds are untimed. Ours uses the Claude profile's shipped submit delay
(0.05 s, then a look at each composer; the fake `claude` echoes nothing, so its composer
never holds the text and no Enter is retried); upstream 0.17.1 pauses a fixed 0.12 s per pane.
"""


def render(samples: Samples, args: argparse.Namespace, machine: list[str]) -> str:
    parts = [
        START_MARK,
        METHOD,
        "### Results",
        "",
        *machine,
        f"- Runs: {args.broadcasts} timed broadcasts per implementation and size, after"
        f" {args.warmup} untimed rounds; medians",
        "",
        results_table(samples),
        "",
        "Ours takes every recipient's send lock, checks all panes with one `list-panes -a`"
        " (and one chained `capture-pane` call for the dialog check), pastes into all panes in"
        " one chained call, sleeps one submit delay, checks again and presses every Enter in"
        " one chained call, so its tmux processes per broadcast do not grow with the number of"
        " recipients (a chain is split only to stay under tmux's command size).",
        "",
        "Reproduce (from the repository root):",
        "",
        "```bash",
        mt.reproduce_command(args, "broadcast.py", ("--broadcasts", args.broadcasts)),
        "```",
        END_MARK,
    ]
    return "\n".join(parts)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = mt.fleet_bench_parser(__doc__, "--broadcasts", 7, "timed broadcasts", 1)
    parser.add_argument("--register", type=Path, help=argparse.SUPPRESS)
    return mt.parsed_sizes(parser, argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.register is not None:
        return register_main(args.register)
    ours_python = args.ours_python.absolute()
    impls = mt.implementations(args)
    samples: Samples = {}
    with tempfile.TemporaryDirectory(prefix="cafleet-bench-broadcast-") as tmp:
        try:
            pl.write_fake_claude(Path(tmp) / "fake" / "bin", Path(tmp) / "fake" / "logs")
            demo = [str(ours_python), "-m", "cafleet.demo.agent"]
            for size in args.sizes:
                samples[size] = measure_size(impls, size, args, Path(tmp), demo)
            env = mt.scratch_env(Path(tmp) / "probe-home")
            machine = [
                f"- Date: {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC",
                f"- Machine: {platform.system()} {platform.release()} ({platform.machine()}),"
                f" nproc {len(os.sched_getaffinity(0))}, {mt.cpu_model()};"
                f" {mt.run(['tmux', '-V'], env).stdout.strip()}, SQLite {sqlite3.sqlite_version};"
                f" 1-minute load average {os.getloadavg()[0]:.1f} at the end",
            ]
            for impl in impls:
                version = mt.run([*impl.cafleet, "--version"], env).stdout.strip()
                machine.append(
                    f"- {impl.label}: {version} on Python {mt.python_version(impl.python, env)}"
                )
        except (mt.BenchError, pl.BenchError) as exc:
            print(f"benchmark failed: {exc}", file=sys.stderr)
            return 1
    body = render(samples, args, machine)
    print(body)
    if args.raw_json:
        args.raw_json.parent.mkdir(parents=True, exist_ok=True)
        args.raw_json.write_text(json.dumps(samples, indent=1))
    if args.write:
        replace_marked(args.docs, START_MARK, END_MARK, body, "# Benchmarks\n\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

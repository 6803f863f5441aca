"""The hot CLI commands on the PostgreSQL store, next to ours and upstream 0.17.1 on SQLite.

Three implementations, each seeded the same way by its own CLI (cli_latency.prepare: a fleet
created in a private tmux server, then messages both ways): ours on a SQLite file, ours on a
database of a private PostgreSQL server started from Debian's programs
(tests/support/postgres.py, unix socket, durability off as in the tests), and upstream on a
SQLite file (upstream has no PostgreSQL store). The commands run interleaved, round after
round (cli_latency.measure); medians, p90 and peak RSS are reported.

Usage (from the repository root)::

    python3 bench/postgres_store.py --upstream-cafleet PATH [--rounds 15] [--write]

Nothing here asserts on timings: it measures and reports.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import cli_latency as latency
from docs_section import replace_marked

sys.path.insert(0, str(latency.REPO_ROOT / "tests"))
from support.postgres import PostgresServer

START_MARK = "<!-- postgres-store:start -->"
END_MARK = "<!-- postgres-store:end -->"
COMMANDS = ("message send", "message poll", "member list")
LABELS = ("ours-sqlite", "ours-postgres", "upstream")
METHOD = """## The PostgreSQL store

Script: [`bench/postgres_store.py`](../bench/postgres_store.py) (it reuses the seeding and the
interleaved timing of `bench/cli_latency.py`).

**What is measured.** The whole-process wall time and peak RSS of `message send`,
`message poll` and `member list` for three set-ups seeded the same way by their own CLI (a
fleet made in a private tmux server, then messages both ways): ours on a SQLite file, ours
on a database of a private PostgreSQL server started from Debian's programs (unix socket,
durability off as in the tests), and upstream `cafleet==0.17.1` on a SQLite file (upstream
has no PostgreSQL store). The three run interleaved, command after command. On PostgreSQL
the CLI imports SQLAlchemy and psycopg (the standard-library hot path serves SQLite only),
which is most of the difference from SQLite.
"""


def impls(
    args: argparse.Namespace, scratch: Path, env: dict[str, str], url: str
) -> list[latency.Impl]:
    ours, upstream = args.ours.absolute(), args.upstream_cafleet.absolute()
    made = []
    for label, executable, database_url in (
        ("ours-sqlite", ours, f"sqlite:///{scratch / 'ours.db'}"),
        ("ours-postgres", ours, url),
        ("upstream", upstream, f"sqlite:///{scratch / 'upstream.db'}"),
    ):
        if not executable.is_file():
            raise latency.BenchError(f"{label}: no executable at {executable}")
        home = scratch / f"home-{label}"  # each its own skills record and runtime files
        home.mkdir()
        impl_env = {**env, "HOME": str(home), "CAFLEET_DATABASE_URL": database_url,
                    "XDG_CONFIG_HOME": str(home / ".config")}  # fmt: skip
        made.append(latency.Impl(label, executable, scratch / f"{label}.db", impl_env))
    return made


def render(measured: latency.Measured, args: argparse.Namespace, server: str) -> str:
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        METHOD,
        "### Results",
        "",
        f"- Date: {now}",
        f"- Machine: {platform.system()} {platform.release()} ({platform.machine()}),"
        f" nproc {os.cpu_count()}; 1-minute load average {os.getloadavg()[0]:.1f} at the end",
        f"- PostgreSQL: {server}",
        f"- Rounds: {args.rounds} (after {args.warmup} warm-up), interleaved",
        "",
        "| Command | ours on SQLite ms | ours on PostgreSQL ms (p90) | upstream on SQLite ms"
        " | PostgreSQL / SQLite | PostgreSQL / upstream | peak MiB (SQLite / PostgreSQL) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name in COMMANDS:
        wall = {label: latency.summarize(measured.wall[name][label]) for label in LABELS}
        peak = {label: statistics.median(measured.peak[name][label]) for label in LABELS}
        lines.append(
            f"| `cafleet {name}` | {wall['ours-sqlite'].median:.0f}"
            f" | {wall['ours-postgres'].median:.0f} ({wall['ours-postgres'].p90:.0f})"
            f" | {wall['upstream'].median:.0f}"
            f" | {wall['ours-postgres'].median / wall['ours-sqlite'].median:.2f}×"
            f" | {wall['ours-postgres'].median / wall['upstream'].median:.2f}×"
            f" | {peak['ours-sqlite']:.1f} / {peak['ours-postgres']:.1f} |"
        )
    lines += [
        "",
        "Reproduce (from the repository root):",
        "",
        "```bash",
        "python3 bench/postgres_store.py --upstream-cafleet <path-to-upstream-cafleet>"
        f" --rounds {args.rounds} --write",
        "```",
    ]
    return "\n".join(lines)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ours", type=Path, default=latency.DEFAULT_OURS)
    parser.add_argument("--upstream-cafleet", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--pending", type=int, default=50)
    parser.add_argument("--replies", type=int, default=10)
    parser.add_argument("--write", action="store_true", help="update docs/benchmarks.md")
    parser.add_argument("--docs", type=Path, default=latency.DEFAULT_DOCS)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        with (
            tempfile.TemporaryDirectory(prefix="cafleet-bench-") as tmp,
            PostgresServer() as server,
        ):
            scratch = Path(tmp)
            env = latency.scratch_env(scratch)
            url = server.create_database("bench")
            version = server.psql("SHOW server_version")
            with latency.private_tmux(env) as tmux:
                made = impls(args, scratch, env | tmux, url)
                fleets = {i.label: latency.prepare(i, args.pending, args.replies).fleet
                          for i in made}  # fmt: skip
                measured = latency.measure(made, fleets, args.rounds, args.warmup, COMMANDS)
    except latency.BenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    body = render(measured, args, f"{version} (private server, unix socket)")
    print(body)
    if args.write:
        replace_marked(args.docs, START_MARK, END_MARK, f"{START_MARK}\n{body}\n{END_MARK}",
                       "# Benchmarks\n\n")  # fmt: skip
        print(f"updated {args.docs}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Message search over a large fleet: `message search` on 100,000 stored messages.

A fresh store is migrated by our own code (the FTS5 index and its triggers on SQLite, the GIN
index on PostgreSQL), one fleet with a few agents is made, and the messages are inserted in
bulk through plain SQL (the triggers index each row as a send would). The bodies are drawn
from a fixed vocabulary with a Zipf-like frequency (seeded: every run stores the same
texts), so some words occur in most messages and others in a handful.

Timed in process: SearchService.search (what `cafleet message search` and GET /api/search
call: the query, ranking, snippets and the folding of broadcast copies) for a set of query
shapes, each repeated; medians and p90 per shape and over all. Timed as whole processes:
`cafleet message search` itself, next to `cafleet message show` on the same store (the
process floor of a read command). Upstream 0.17.1 has no search at all.

Usage (from the repository root, with this repository's virtualenv)::

    .venv/bin/python bench/search.py [--messages 100000] [--repeat 15] [--postgres] [--write]

Nothing here asserts on timings: it measures and reports.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from docs_section import replace_marked, reproduce_lines

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT / "src"))
sys.path.insert(0, str(REPO_ROOT / "tests"))

from cafleet.application.messaging.search import SearchService  # noqa: E402
from cafleet.domain.search import SearchQuery  # noqa: E402

DEFAULT_DOCS = REPO_ROOT / "docs" / "benchmarks.md"
START_MARK = "<!-- search:start -->"
END_MARK = "<!-- search:end -->"
AGENTS = 6
# team commands want a skills install at this version (what `cafleet setup` records)
SKILLS_ROW = (
    f"INSERT INTO skill_installs VALUES ('claude', '{__import__('cafleet').__version__}', ?)"
)
VOCABULARY = 3000
SEED = 17
# query shape -> (words, filters); the words are vocabulary ranks (0: the most frequent)
SHAPES: dict[str, tuple[tuple[int, ...], dict[str, object]]] = {
    "one common word": ((3,), {}),
    "one mid word": ((300,), {}),
    "one rare word": ((2900,), {}),
    "two words": ((40, 700), {}),
    "three words": ((10, 120, 900), {}),
    "common word, --from": ((5,), {"from": True}),
    "common word, --since 10% newest": ((7,), {"since": True}),
    "no hit": ((-1,), {}),
}
METHOD = """## Message search

Script: [`bench/search.py`](../bench/search.py); run it with this repository's virtualenv.

**What is stored.** One fleet of six agents and {messages:,} messages between them, inserted
in bulk into a store migrated by our own code, so the FTS5 index (SQLite) or the GIN index
(PostgreSQL) is kept by the same triggers and migrations as in use. Each body is 8 to 60
words drawn with a Zipf-like frequency from a vocabulary of {vocabulary:,} words (seeded: the
same texts every run): the most common word is in most messages, the rarest in a few.

**What is measured.** In process, `SearchService.search` (what `cafleet message search` and
`GET /api/search` run: the query, the ranking of at most the newest 5,000 matches, the
snippets, the folding of broadcast copies; limit 20) for each query shape, {repeat} times
each after one warm-up; the table gives the median and p90 per shape and over all. As whole
processes, `cafleet message search` for a two-word query next to `cafleet message show` of
one message on the same store (the floor of any read command: the interpreter, the imports,
opening the store). Upstream `cafleet==0.17.1`
has no search: no command or route finds a message by its words, so there is no upstream row
(its CLI's process floor is in the CLI-latency section).

**PostgreSQL.** Each body's vector is stored (`tasks.text_search`, migration 0012) and
GIN-indexed, so ranking reads vectors instead of parsing bodies, and the query gives the
planner the words and the fleet's agents as values: for a word in most messages it walks the
newest messages backwards to the first 5,000 matches, for a rare one it uses the index. The
commonest words cost most (ranking 5,000 vectors); rare and multi-word queries stay under
10 ms. The SQLite store is the default.
"""


WORDS = [f"w{n:04d}" for n in range(VOCABULARY)]  # by frequency rank: w0000 the commonest


def bodies(count: int) -> Iterator[str]:
    rng = random.Random(SEED)
    vocabulary = WORDS
    weights = [1 / (rank + 1) for rank in range(VOCABULARY)]
    for _ in range(count):
        size = rng.randint(8, 60)
        yield " ".join(rng.choices(vocabulary, weights, k=size))


def seed_sqlite(path: Path, messages: int) -> int:
    from cafleet.adapters.store.sqlite.schema import migrate

    migrate(path)
    conn = sqlite3.connect(path)
    now = datetime.datetime.now(datetime.UTC)
    with conn:
        conn.execute(
            "INSERT INTO fleets (fleet_id, name, created_at) VALUES (1, 'big', ?)",
            (now.isoformat(),),
        )
        for agent in range(1, AGENTS + 1):
            conn.execute(
                "INSERT INTO agents (agent_id, fleet_id, name, description, status, registered_at,"
                " agent_card_json) VALUES (?, 1, ?, 'd', 'active', ?, '{}')",
                (agent, f"agent{agent}", now.isoformat()),
            )
        conn.execute(SKILLS_ROW, (now.isoformat(),))
        conn.executemany(
            "INSERT INTO tasks (context_id, from_agent_id, to_agent_id, type, created_at,"
            " status_state, status_timestamp, text, thread_id)"
            " VALUES (?, ?, ?, 'unicast', ?, 'completed', ?, ?, NULL)",
            rows(messages, now),
        )
    conn.close()
    return 1


def rows(messages: int, now: datetime.datetime) -> Iterator[tuple[object, ...]]:
    rng = random.Random(SEED + 1)
    start = now - datetime.timedelta(seconds=messages)
    for n, text in enumerate(bodies(messages)):
        sender = rng.randint(1, AGENTS)
        to = rng.choice([a for a in range(1, AGENTS + 1) if a != sender])
        at = (start + datetime.timedelta(seconds=n)).isoformat(timespec="microseconds")
        yield to, sender, to, at, at, text


def seed_postgres(url: str, messages: int) -> int:
    from sqlalchemy import create_engine, text

    from cafleet.adapters.store.postgres.schema import migrate

    migrate(url)
    engine = create_engine(url)
    now = datetime.datetime.now(datetime.UTC)
    with engine.begin() as conn:
        conn.execute(
            text("INSERT INTO fleets (fleet_id, name, created_at) VALUES (1, 'big', :at)"),
            {"at": now.isoformat()},
        )
        for agent in range(1, AGENTS + 1):
            conn.execute(
                text(
                    "INSERT INTO agents (agent_id, fleet_id, name, description, status,"
                    " registered_at, agent_card_json) VALUES (:a, 1, :n, 'd', 'active', :at, '{}')"
                ),
                {"a": agent, "n": f"agent{agent}", "at": now.isoformat()},
            )
        conn.exec_driver_sql(SKILLS_ROW.replace("?", "%s"), (now.isoformat(),))
        batch: list[dict[str, object]] = []
        statement = text(
            "INSERT INTO tasks (context_id, from_agent_id, to_agent_id, type, created_at,"
            " status_state, status_timestamp, text) VALUES (:c, :f, :t, 'unicast', :at,"
            " 'completed', :at, :text)"
        )
        for to, sender, _, at, _, body in rows(messages, now):
            batch.append({"c": to, "f": sender, "t": to, "at": at, "text": body})
            if len(batch) == 5000:
                conn.execute(statement, batch)
                batch = []
        if batch:
            conn.execute(statement, batch)
        conn.execute(text("UPDATE tasks SET thread_id = task_id"))
        conn.execute(text("ANALYZE tasks"))
    engine.dispose()
    return 1


def query_for(shape: str, newest: datetime.datetime, messages: int) -> SearchQuery:
    ranks, filters = SHAPES[shape]
    vocabulary = WORDS
    text = " ".join("zzznothing" if r < 0 else vocabulary[r] for r in ranks)
    since = newest - datetime.timedelta(seconds=messages // 10) if filters.get("since") else None
    return SearchQuery(text, from_agent_id=2 if filters.get("from") else None, since=since)


def timed(call: Callable[[], object], repeat: int) -> list[float]:
    call()  # warm-up: caches, the first page of the index
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        call()
        times.append((time.perf_counter() - started) * 1000)
    return times


def p90(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]


def in_process(uow: object, messages: int, repeat: int) -> dict[str, list[float]]:
    service = SearchService(uow)  # type: ignore[arg-type]
    newest = datetime.datetime.now(datetime.UTC)
    results = {}
    for shape in SHAPES:
        query = query_for(shape, newest, messages)
        results[shape] = timed(lambda q=query: service.search(1, None, q), repeat)
    return results


def whole_process(env: dict[str, str], repeat: int) -> dict[str, list[float]]:
    cafleet = str(REPO_ROOT / ".venv" / "bin" / "cafleet")
    vocabulary = WORDS
    commands = {
        "cafleet message search (two words)": [
            cafleet, "message", "search", "--fleet-id", "1", "--agent-id", "1",
            vocabulary[40], vocabulary[700],
        ],
        "cafleet message show (floor)": [
            cafleet, "message", "show", "--fleet-id", "1", "--agent-id", "1", "--task-id", "5",
        ],
    }  # fmt: skip
    results: dict[str, list[float]] = {name: [] for name in commands}
    for round_ in range(repeat + 1):
        for name, argv in commands.items():
            started = time.perf_counter()
            done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
            elapsed = (time.perf_counter() - started) * 1000
            if done.returncode != 0:
                raise SystemExit(f"{name} failed: {done.stderr.strip()}")
            if round_:
                results[name].append(elapsed)
    return results


@contextmanager
def stores(
    args: argparse.Namespace, scratch: Path
) -> Iterator[list[tuple[str, object, dict[str, str]]]]:
    from cafleet.adapters.store.sqlite.unit_of_work import DirectUnitOfWorkFactory

    made = []
    db = scratch / "search.db"
    started = time.perf_counter()
    seed_sqlite(db, args.messages)
    print(f"SQLite seeded in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    env = {**os.environ, "CAFLEET_DATABASE_URL": f"sqlite:///{db}", "HOME": str(scratch)}
    env.pop("CAFLEET_FLEET_ID", None)
    env.pop("CAFLEET_AGENT_ID", None)
    made.append(("SQLite (FTS5)", DirectUnitOfWorkFactory(db), env))
    if not args.postgres:
        yield made
        return
    from cafleet.adapters.store.postgres.unit_of_work import PostgresUnitOfWorkFactory
    from support.postgres import PostgresServer

    with PostgresServer() as server:
        url = server.create_database("search")
        started = time.perf_counter()
        seed_postgres(url, args.messages)
        print(f"PostgreSQL seeded in {time.perf_counter() - started:.1f} s", file=sys.stderr)
        made.append(
            (
                "PostgreSQL (GIN, ts_rank)",
                PostgresUnitOfWorkFactory(url),
                {**env, "CAFLEET_DATABASE_URL": url},
            )
        )
        yield made


def report(
    args: argparse.Namespace,
    measured: list[tuple[str, dict[str, list[float]], dict[str, list[float]]]],
) -> str:
    lines = [
        "### Results",
        "",
        f"- Date: {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC",
        f"- Machine: {platform.system()} {platform.release()} ({platform.machine()}), nproc"
        f" {os.cpu_count()}; SQLite {sqlite3.sqlite_version}; Python {platform.python_version()};"
        f" 1-minute load average {os.getloadavg()[0]:.1f} at the end",
        f"- {args.messages:,} messages, {args.repeat} timed runs per query shape"
        " (after one warm-up)",
        "",
    ]
    header = (
        "| Query shape | "
        + " | ".join(f"{name} median ms | p90 ms" for name, _, _ in measured)
        + " |"
    )
    lines += [header, "|---|" + "---:|---:|" * len(measured)]
    for shape in SHAPES:
        cells = []
        for _, timings, _ in measured:
            cells += [f"{statistics.median(timings[shape]):.1f}", f"{p90(timings[shape]):.1f}"]
        lines.append(f"| {shape} | " + " | ".join(cells) + " |")
    cells = []
    for _, timings, _ in measured:
        every = [t for values in timings.values() for t in values]
        cells += [f"**{statistics.median(every):.1f}**", f"{p90(every):.1f}"]
    lines.append("| all shapes | " + " | ".join(cells) + " |")
    lines += ["", "Whole processes (interleaved, median ms):", ""]
    lines += [
        "| Command | " + " | ".join(name for name, _, _ in measured) + " |",
        "|---|" + "---:|" * len(measured),
    ]
    for command in measured[0][2]:
        lines.append(
            f"| `{command}` | "
            + " | ".join(f"{statistics.median(cli[command]):.0f}" for _, _, cli in measured)
            + " |"
        )
    lines.append("")
    for name, timings, cli in measured:
        every = [t for values in timings.values() for t in values]
        search_cli, floor = (statistics.median(v) for v in cli.values())
        worst = max(statistics.median(v) for v in timings.values())
        lines.append(
            f"- {name}: search median {statistics.median(every):.1f} ms in process over all"
            f" shapes (goal ≤ 50 ms), worst shape {worst:.1f} ms; as a whole process"
            f" `message search` takes {search_cli:.0f} ms where `message show` takes"
            f" {floor:.0f} ms"
        )
    command = f".venv/bin/python bench/search.py --messages {args.messages} --repeat {args.repeat}"
    command += " --postgres --write" if args.postgres else " --write"
    lines += ["", *reproduce_lines(command)]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument(
        "--postgres", action="store_true", help="also on a private PostgreSQL server"
    )
    parser.add_argument("--write", action="store_true", help="update the marked docs section")
    parser.add_argument("--docs", type=Path, default=DEFAULT_DOCS, help="the file --write edits")
    args = parser.parse_args()
    with (
        tempfile.TemporaryDirectory(prefix="cafleet-search-bench-") as tmp,
        stores(args, Path(tmp)) as made,
    ):
        measured = [
            (name, in_process(uow, args.messages, args.repeat), whole_process(env, args.repeat))
            for name, uow, env in made
        ]
    text = report(args, measured)
    print(text)
    if args.write:
        method = METHOD.format(messages=args.messages, vocabulary=VOCABULARY, repeat=args.repeat)
        block = f"{START_MARK}\n{method}\n{text}\n{END_MARK}"
        replace_marked(args.docs, START_MARK, END_MARK, block, "# Benchmarks\n\n")


if __name__ == "__main__":
    main()

"""Cost of one monitor tick: wall time, CPU time and subprocesses, by fleet size.

Each implementation gets a scratch SQLite file and a private tmux server. The fleet is a
Director (the server's first pane), a monitoring member whose pane runs the demo agent, and
N ordinary members whose panes run ``sleep 3600`` (one tmux window each), registered in the
database. A driver process then runs the implementation's own tick function in-process,
the way ``cafleet monitor start`` does, and measures each tick:

- wall: ``time.perf_counter()`` around the tick; also without the deliberate sleeps inside
  it (Esc pause, submit delay), counted by a ``time.sleep`` shim;
- CPU: ``time.process_time()`` of the driver, plus the CPU of the subprocesses the tick ran
  (``resource.getrusage(RUSAGE_CHILDREN)``);
- subprocesses: a ``subprocess.Popen`` shim counts every child started, and which were tmux;
- SQL statements: counted by each SQLite connection's trace callback (transaction control
  and PRAGMAs left out).

Two kinds of tick alternate: a *wake* tick, after every watched agent's ``last_ping_at``
and stall-check time were cleared (untimed), so all N+1 are due and one wake is typed into
the watcher's pane; and an *idle* tick right after it, when nothing is due.

Standard library only in the orchestrator; the drivers import the implementation under test.
Usage (from the repository root)::

    python3 bench/monitor_tick.py [--sizes 20,100,200] [--ticks 15] [--warmup 2]
                                  [--upstream-cafleet PATH] [--write] [--raw-json FILE]

Nothing here asserts on timings: it measures and reports.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import importlib
import io
import json
import os
import platform
import resource
import secrets
import shlex
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from docs_section import replace_marked, reproduce_lines

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OURS_PYTHON = REPO_ROOT / ".venv" / "bin" / "python"
DEFAULT_DOCS = REPO_ROOT / "docs" / "benchmarks.md"
START_MARK = "<!-- monitor-tick:start -->"
END_MARK = "<!-- monitor-tick:end -->"
UPSTREAM_VERSION = "0.17.1"
TICK_SECONDS = 5
MEMBER_INTERVAL = 720
SCENARIOS = ("wake", "idle")
NOT_COUNTED = ("BEGIN", "COMMIT", "ROLLBACK", "PRAGMA")


class BenchError(RuntimeError):
    """A preparation step failed; the benchmark cannot continue."""


# =============================================================== the driver (runs in a child)


@dataclass
class Counters:
    popen: int = 0
    tmux: int = 0
    slept: float = 0.0
    statements: int = 0


def install_shims(counters: Counters) -> None:
    """Count subprocesses, deliberate sleeps and SQL statements of whatever runs next."""
    real_init = subprocess.Popen.__init__
    real_sleep = time.sleep

    def counting_init(self: subprocess.Popen[Any], args: Any, *rest: Any, **kw: Any) -> None:
        counters.popen += 1
        first = args if isinstance(args, str | bytes) else next(iter(args), "")
        if os.path.basename(os.fsdecode(first)) == "tmux":
            counters.tmux += 1
        real_init(self, args, *rest, **kw)

    def counting_sleep(seconds: float) -> None:
        # deliberate pauses only: subprocess polls with time.sleep while it waits for a child
        if sys._getframe(1).f_globals.get("__name__") != "subprocess":
            counters.slept += seconds
        real_sleep(seconds)

    subprocess.Popen.__init__ = counting_init  # type: ignore[method-assign]
    time.sleep = counting_sleep  # type: ignore[assignment]

    def count_statement(statement: str) -> None:
        if not statement.lstrip().upper().startswith(NOT_COUNTED):
            counters.statements += 1

    # Every connection either implementation opens comes from one of these two names
    # (SQLAlchemy's SQLite dialect calls the dbapi2 one); each connection traces its statements.
    for module in (sqlite3, sqlite3.dbapi2):
        real_connect = module.connect

        def counting_connect(*args: Any, _connect: Any = real_connect, **kwargs: Any) -> Any:
            conn = _connect(*args, **kwargs)
            conn.set_trace_callback(count_statement)
            return conn

        module.connect = counting_connect


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure(
    tick: Callable[[], int],
    reset: Callable[[], None],
    counters: Counters,
    ticks: int,
    warmup: int,
    expected_wake: int,
) -> dict[str, list[dict[str, float]]]:
    """Alternate wake and idle ticks; `tick` returns how many agents its wake named."""
    samples: dict[str, list[dict[str, float]]] = {name: [] for name in SCENARIOS}
    for round_no in range(warmup + ticks):
        for scenario in SCENARIOS:
            if scenario == "wake":
                reset()
            before = (counters.popen, counters.tmux, counters.slept, counters.statements)
            child0, cpu0, wall0 = children_cpu(), time.process_time(), time.perf_counter()
            named = tick()
            wall = time.perf_counter() - wall0
            cpu, child = time.process_time() - cpu0, children_cpu() - child0
            wanted = expected_wake if scenario == "wake" else 0
            if named != wanted:
                raise BenchError(f"a {scenario} tick named {named} agents, expected {wanted}")
            if round_no < warmup:
                continue
            slept = counters.slept - before[2]
            samples[scenario].append(
                {
                    "wall_ms": wall * 1000,
                    "wall_no_sleep_ms": (wall - slept) * 1000,
                    "cpu_ms": cpu * 1000,
                    "children_cpu_ms": child * 1000,
                    "subprocesses": counters.popen - before[0],
                    "tmux_calls": counters.tmux - before[1],
                    "sql_statements": counters.statements - before[3],
                }
            )
    return samples


def clear_schedules(database: Path, agent_ids: Sequence[int], *, ours: bool) -> None:
    """Make every watched agent due again (untimed, outside the tick)."""
    extra = ", last_stall_check_at = NULL" if ours else ""
    marks = ",".join("?" * len(agent_ids))
    conn = sqlite3.connect(database, timeout=30)
    try:
        with conn:
            conn.execute(
                f"UPDATE monitor_config SET last_ping_at = NULL{extra} WHERE agent_id IN ({marks})",
                list(agent_ids),
            )
    finally:
        conn.close()


def register_ours(
    fleet_id: int,
    director_id: int,
    panes: Sequence[str],
    coding_agent: str = "custom",
    commands: Sequence[str] = ("sleep",),
    ready: bool = False,
) -> list[int]:
    """Ordinary members on the given panes, written through the package's unit of work;
    `ready`: as if their agent had been seen ready (so a push types at once)."""
    settings_mod: Any = importlib.import_module("cafleet.settings")
    composition: Any = importlib.import_module("cafleet.composition")
    agent_mod: Any = importlib.import_module("cafleet.domain.fleet")
    monitor_mod: Any = importlib.import_module("cafleet.domain.monitor")
    placement_mod: Any = importlib.import_module("cafleet.domain.placement")
    components = composition.Components(settings_mod.Settings.from_environ())
    ids: list[int] = []
    with components.uow(write=True) as uow:
        director = uow.placements.get(director_id)
        now = components.clock.now()
        for n, pane in enumerate(panes, start=1):
            name = f"member-{n}"
            agent_id = uow.agents.add(
                agent_mod.Agent(0, fleet_id, name, f"{name} (benchmark)", now)
            )
            uow.placements.add(
                placement_mod.Placement(
                    agent_id=agent_id,
                    director_agent_id=director_id,
                    backend=director.backend,
                    session=director.session,
                    window_id=director.window_id,
                    pane_id=pane,
                    coding_agent=placement_mod.CodingAgent(coding_agent),
                    created_at=now,
                    socket=director.socket,
                    agent_commands=tuple(commands),
                    ready_at=now if ready else None,
                    ready_rule="wait" if ready else None,
                )
            )
            uow.monitor.enroll(monitor_mod.MonitorSchedule(agent_id, MEMBER_INTERVAL))
            ids.append(agent_id)
        uow.commit()
    return ids


def drive_ours(spec: Mapping[str, Any], counters: Counters) -> dict[str, Any]:
    container_mod: Any = importlib.import_module("cafleet.container")
    settings_mod: Any = importlib.import_module("cafleet.settings")
    fleet_id, database = int(spec["fleet_id"]), Path(spec["database"])
    members = spec.get("member_ids") or register_ours(
        fleet_id, int(spec["director_id"]), spec["panes"]
    )
    watched = [int(spec["director_id"]), *members]
    service = container_mod.build_container(settings_mod.Settings.from_environ()).monitor()
    service.claim(fleet_id, TICK_SECONDS)

    def tick() -> int:
        report = service.tick(fleet_id)
        if report.due and not report.woke:
            raise BenchError(f"ours: the wake was not delivered: {report.not_delivered}")
        return len(report.due)

    try:
        samples = measure(
            tick,
            lambda: clear_schedules(database, watched, ours=True),
            counters,
            int(spec["ticks"]),
            int(spec["warmup"]),
            len(watched),
        )
    finally:
        service.release(fleet_id)
    return {"samples": samples, "member_ids": members}


def drive_upstream(spec: Mapping[str, Any], counters: Counters) -> dict[str, Any]:
    loop: Any = importlib.import_module("cafleet.monitor.loop")
    broker: Any = importlib.import_module("cafleet.broker")
    fleet_id, database = int(spec["fleet_id"]), Path(spec["database"])
    watched = [int(spec["director_id"]), *spec["member_ids"]]
    now = datetime.datetime.now(datetime.UTC)
    if not broker.claim_monitor_runtime(fleet_id, os.getpid(), TICK_SECONDS, now.isoformat()):
        raise BenchError("upstream: the monitor slot is taken")

    def tick() -> int:
        printed = io.StringIO()  # upstream prints one line per due agent after a wake
        with contextlib.redirect_stdout(printed):
            loop.monitor_tick(fleet_id, datetime.datetime.now(datetime.UTC))
        return printed.getvalue().count("-> wake monitor")

    def reset() -> None:
        clear_schedules(database, watched, ours=False)
        loop._last_stall_check_at.clear()  # upstream keeps the stall-check time in memory

    try:
        samples = measure(
            tick, reset, counters, int(spec["ticks"]), int(spec["warmup"]), len(watched)
        )
    finally:
        broker.clear_monitor_runtime(fleet_id, os.getpid())
    return {"samples": samples}


def driver_main(spec_path: Path) -> int:
    spec = json.loads(spec_path.read_text())
    counters = Counters()
    install_shims(counters)
    drive = drive_ours if spec["impl"] == "ours" else drive_upstream
    result = drive(spec, counters)
    Path(spec["out"]).write_text(json.dumps(result))
    return 0


# =============================================================== the orchestrator


@dataclass(frozen=True)
class Impl:
    label: str
    cafleet: list[str]  # argv prefix of its CLI
    python: Path  # the interpreter that imports it


@dataclass
class Prepared:
    impl: Impl
    env: dict[str, str]
    database: Path
    fleet_id: int
    director_id: int
    tmux_base: list[str]
    panes: list[str]
    member_ids: list[int] = field(default_factory=list)
    how: str = ""


def run(
    argv: Sequence[str | Path], env: Mapping[str, str], *, check: bool = True
) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [str(arg) for arg in argv],
        env=dict(env),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    if check and proc.returncode != 0:
        shown = shlex.join(str(arg) for arg in argv)
        raise BenchError(f"`{shown}` exited {proc.returncode}: {proc.stderr.strip()}")
    return proc


def interpreter_of(script: Path) -> Path:
    """The Python that runs a console script: its shebang, else the sibling ``python``."""
    first = script.read_bytes().split(b"\n", 1)[0].decode(errors="replace")
    if first.startswith("#!") and "python" in first:
        return Path(first[2:].split()[0])
    return script.parent / "python"


def scratch_env(home: Path) -> dict[str, str]:
    dropped = ("CAFLEET_", "PYTHON", "TMUX", "HERDR_", "XDG_", "VIRTUAL_ENV")
    env = {key: value for key, value in os.environ.items() if not key.startswith(dropped)}
    home.mkdir(parents=True)
    env["HOME"] = str(home)
    env["XDG_CONFIG_HOME"] = str(home / ".config")
    env["XDG_DATA_HOME"] = str(home / ".local" / "share")
    env["XDG_CACHE_HOME"] = str(home / ".cache")
    env["XDG_RUNTIME_DIR"] = str(home / ".run")
    (home / ".run").mkdir(mode=0o700)
    return env


@contextlib.contextmanager
def private_tmux(env: dict[str, str]) -> Iterator[list[str]]:
    """A private tmux server (200x50 session `bench`); sets TMUX/TMUX_PANE in `env`."""
    base = ["tmux", "-L", f"cafleet-bench-mon-{os.getpid()}-{secrets.token_hex(3)}"]
    socket = ""
    try:
        run(
            [*base, "-f", "/dev/null", "new-session", "-d", "-s", "bench", "-x", "200", "-y", "50"],
            env,
        )
        socket = run([*base, "display-message", "-p", "#{socket_path}"], env).stdout.strip()
        pane = run([*base, "display-message", "-p", "-t", "bench", "#{pane_id}"], env)
        env["TMUX"], env["TMUX_PANE"] = f"{socket},0,0", pane.stdout.strip()
        yield base
    finally:
        subprocess.run([*base, "kill-server"], env=env, capture_output=True, check=False)
        if socket:
            Path(socket).unlink(missing_ok=True)


def new_window(
    base: list[str], env: Mapping[str, str], *argv: str, extra: Mapping[str, str] | None = None
) -> str:
    """A window of its own in session `bench` running argv; returns its pane id."""
    pairs = (extra or {}).items()
    env_args = [arg for key, value in pairs for arg in ("-e", f"{key}={value}")]
    out = run(
        [
            *base,
            "new-window",
            "-d",
            "-t",
            "bench",
            "-P",
            "-F",
            "#{pane_id}",
            *env_args,
            "--",
            *argv,
        ],
        env,
    )
    return out.stdout.strip()


def fleet_ids(out: str) -> tuple[int, int]:
    words = dict(w.split("=", 1) for w in out.split()[1:] if "=" in w)
    return int(out.split(maxsplit=1)[0]), int(words["director"])


def prepare_ours(
    impl: Impl,
    env: dict[str, str],
    database: Path,
    base: list[str],
    size: int,
    demo: list[str],
    member_argv: Callable[[int], Sequence[str]] = lambda _: ("sleep", "3600"),
) -> Prepared:
    cli = impl.cafleet
    run([*cli, "setup", "db"], env)
    run([*cli, "setup", "skill", "--agent", "claude"], env)  # the skills gate wants a record
    fleet_id, director_id = fleet_ids(
        run([*cli, "fleet", "create", "--name", "bench", "--coding-agent", "custom"], env).stdout
    )
    run(
        [*cli, "member", "create", "--fleet-id", str(fleet_id), "--agent-id", str(director_id),
         "--name", "watcher", "--description", "benchmark watcher", "--role", "monitor",
         "--coding-agent", "custom", "--agent-command", shlex.join(demo), "--text", "watch"],
        env,
    )  # fmt: skip
    panes = [new_window(base, env, *member_argv(n)) for n in range(size)]
    how = "watcher by `member create --role monitor`; members through the unit of work"
    return Prepared(impl, env, database, fleet_id, director_id, base, panes, how=how)


def prepare_upstream(
    impl: Impl,
    env: dict[str, str],
    database: Path,
    base: list[str],
    size: int,
    demo: list[str],
    member_argv: Callable[[int], Sequence[str]] = lambda _: ("sleep", "3600"),
) -> Prepared:
    cli = impl.cafleet
    run([*cli, "setup", "db"], env)
    version = run([*cli, "--version"], env).stdout.strip().rsplit(" ", 1)[-1]
    now = datetime.datetime.now(datetime.UTC).isoformat()
    execute(database, "INSERT OR REPLACE INTO skill_installs VALUES ('claude', ?, ?)", version, now)
    fleet_id, director_id = fleet_ids(run([*cli, "fleet", "create", "--name", "bench"], env).stdout)
    director = query(
        database,
        "SELECT mux_session, mux_window_id FROM agent_placements WHERE agent_id = ?",
        director_id,
    )
    watcher_id = add_upstream_agent(database, fleet_id, "watcher", "monitoring-member", now)
    watcher_pane = new_window(
        base,
        env,
        *demo,
        extra={"CAFLEET_FLEET_ID": str(fleet_id), "CAFLEET_AGENT_ID": str(watcher_id)},
    )
    add_upstream_placement(database, watcher_id, director_id, director, watcher_pane, now)
    panes = [new_window(base, env, *member_argv(n)) for n in range(size)]
    member_ids = []
    for n, pane in enumerate(panes, start=1):
        agent_id = add_upstream_agent(database, fleet_id, f"member-{n}", None, now)
        add_upstream_placement(database, agent_id, director_id, director, pane, now)
        execute(
            database,
            "INSERT INTO monitor_config (agent_id, interval_seconds, enabled) VALUES (?, ?, 1)",
            agent_id,
            MEMBER_INTERVAL,
        )
        member_ids.append(agent_id)
    how = "watcher and members written with SQL, as the rows its `member create` writes"
    return Prepared(impl, env, database, fleet_id, director_id, base, panes, member_ids, how)


def execute(database: Path, sql: str, *params: Any) -> int:
    conn = sqlite3.connect(database, timeout=30)
    try:
        with conn:
            cursor = conn.execute(sql, params)
        return int(cursor.lastrowid or 0)
    finally:
        conn.close()


def query(database: Path, sql: str, *params: Any) -> tuple[Any, ...]:
    conn = sqlite3.connect(database, timeout=30)
    try:
        row = conn.execute(sql, params).fetchone()
    finally:
        conn.close()
    if row is None:
        raise BenchError(f"no row for {sql}")
    return tuple(row)


def add_upstream_agent(database: Path, fleet_id: int, name: str, kind: str | None, now: str) -> int:
    card: dict[str, Any] = {"name": name, "description": f"{name} (benchmark)", "skills": []}
    if kind is not None:
        card["cafleet"] = {"kind": kind}
    return execute(
        database,
        "INSERT INTO agents (fleet_id, name, description, status, registered_at, agent_card_json)"
        " VALUES (?, ?, ?, 'active', ?, ?)",
        fleet_id, name, card["description"], now, json.dumps(card, separators=(",", ":")),
    )  # fmt: skip


def add_upstream_placement(
    database: Path, agent_id: int, director_id: int, director: tuple[Any, ...], pane: str, now: str
) -> None:
    execute(
        database,
        "INSERT INTO agent_placements (agent_id, director_agent_id, mux_session,"
        " mux_window_id, mux_pane_id, backend, coding_agent, created_at)"
        " VALUES (?, ?, ?, ?, ?, 'tmux', 'claude', ?)",
        agent_id, director_id, director[0], director[1], pane, now,
    )  # fmt: skip


def run_driver(prepared: Prepared, scratch: Path, ticks: int, warmup: int) -> dict[str, Any]:
    tag = f"{prepared.impl.label}-{len(prepared.panes)}-{secrets.token_hex(2)}"
    spec_path, out_path = scratch / f"spec-{tag}.json", scratch / f"out-{tag}.json"
    spec = {
        "impl": prepared.impl.label,
        "fleet_id": prepared.fleet_id,
        "director_id": prepared.director_id,
        "database": str(prepared.database),
        "panes": prepared.panes,
        "member_ids": prepared.member_ids,
        "ticks": ticks,
        "warmup": warmup,
        "out": str(out_path),
    }
    spec_path.write_text(json.dumps(spec))
    run([prepared.impl.python, Path(__file__).resolve(), "--driver", spec_path], prepared.env)
    result: dict[str, Any] = json.loads(out_path.read_text())
    if not prepared.member_ids:
        prepared.member_ids = list(result.get("member_ids", []))
    return result


# --------------------------------------------------------------- reporting


Samples = dict[str, dict[int, dict[str, list[dict[str, float]]]]]  # impl -> size -> scenario


def median_of(rows: Sequence[Mapping[str, float]], key: str) -> float:
    return statistics.median(row[key] for row in rows)


def results_table(samples: Samples, sizes: Sequence[int], scenario: str) -> str:
    lines = [
        "| Members | Impl | wall ms | wall w/o sleeps ms | CPU ms (self) | CPU ms (children)"
        " | subprocesses | of which tmux | SQL statements |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for size in sizes:
        for impl, by_size in samples.items():
            rows = by_size.get(size, {}).get(scenario)
            if not rows:
                continue
            cells = [
                median_of(rows, k)
                for k in ("wall_ms", "wall_no_sleep_ms", "cpu_ms", "children_cpu_ms")
            ]
            counts = [median_of(rows, k) for k in ("subprocesses", "tmux_calls", "sql_statements")]
            lines.append(
                f"| {size} | {impl} | " + " | ".join(f"{c:.1f}" for c in cells) + " | "
                + " | ".join(f"{c:g}" for c in counts) + " |"
            )  # fmt: skip
    return "\n".join(lines)


def wall_ratio(ours: Sequence[Mapping[str, float]], upstream: Sequence[Mapping[str, float]]) -> str:
    key = "wall_no_sleep_ms"
    return f"{median_of(ours, key) / median_of(upstream, key):.2f}x"


def readings(samples: Samples, sizes: Sequence[int]) -> list[str]:
    """What scales with the fleet and what does not, read off the medians."""

    def series(impl: str, scenario: str, key: str) -> str:
        by_size = samples.get(impl, {})
        shape = "{:.1f}" if key.endswith("_ms") else "{:g}"
        values = [
            shape.format(median_of(by_size[n][scenario], key)) for n in sizes if by_size.get(n)
        ]
        return " / ".join(values)

    shown = " / ".join(str(n) for n in sizes)
    lines = [f"Medians for {shown} members, per implementation:", ""]
    for impl in samples:
        lines.append(
            f"- {impl}: subprocesses per tick {series(impl, 'idle', 'subprocesses')} (idle),"
            f" {series(impl, 'wake', 'subprocesses')} (wake); SQL statements per tick"
            f" {series(impl, 'idle', 'sql_statements')} (idle),"
            f" {series(impl, 'wake', 'sql_statements')} (wake); CPU ms (self) per wake tick"
            f" {series(impl, 'wake', 'cpu_ms')}"
        )
    if "upstream" in samples:
        for scenario in SCENARIOS:
            ratios = [
                wall_ratio(samples["ours"][n][scenario], samples["upstream"][n][scenario])
                for n in sizes
                if samples["ours"].get(n) and samples["upstream"].get(n)
            ]
            lines.append(
                f"- ours / upstream, wall w/o sleeps per {scenario} tick: {' / '.join(ratios)}"
            )
    return lines


def cpu_model() -> str:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return platform.processor() or "unknown CPU"
    for line in text.splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return "unknown CPU"


def python_version(python: Path, env: Mapping[str, str]) -> str:
    return run(
        [python, "-c", "import platform; print(platform.python_version())"], env
    ).stdout.strip()


METHOD = """\
## Monitor tick cost

Script: [`bench/monitor_tick.py`](../bench/monitor_tick.py) (standard library only; its
drivers import the implementation under test).

**What is measured.** The cost of one tick of the monitor loop for fleets with 20, 100
and 200 enrolled members, for this repository and, when given, upstream `cafleet==0.17.1`.
Each implementation gets a scratch SQLite file (created by its own `setup db`) and a private
tmux server (`tmux -L cafleet-bench-mon-<pid>-<random> -f /dev/null`, killed at the end).
The fleet is created by its own `fleet create` in the server's first pane (the Director); the
monitoring member's pane runs the demo agent (`python -m cafleet.demo.agent`); each member's
pane runs `sleep 3600` in a window of its own (`tmux new-window -d -P -F '#{pane_id}'`).
Members are registered straight into the database: through our unit of work for ours, and
with SQL writing the same rows upstream's `member create` writes (agent, placement,
`monitor_config` at 720 s) for upstream, whose `member create` would split all the panes
into the Director's window, which does not have room for them.

A driver process imports the implementation and calls its own tick function in-process,
as `cafleet monitor start` does (ours: `MonitorService.tick` from the container; upstream:
`cafleet.monitor.loop.monitor_tick`), after claiming the runtime slot. Per tick it records
wall time (`time.perf_counter`), the driver's CPU (`time.process_time`), the CPU of the
children the tick waited for (`getrusage(RUSAGE_CHILDREN)`), the subprocesses started (a
`subprocess.Popen` shim; tmux ones counted apart), the SQL statements sent (each SQLite
connection's trace callback, transaction control and PRAGMAs left out) and the deliberate
sleeps (a `time.sleep` shim that ignores the polling sleeps of `subprocess` itself), so
"wall w/o sleeps" removes the Esc pause and the submit delay of the wake.

**Two ticks per round.** A *wake* tick first: every watched agent's `last_ping_at` (and our
persisted stall-check time; upstream's is in memory and is cleared there) is reset outside
the timing, so the Director and all N members are due and one wake line naming N+1 agents
is typed into the watcher's pane. Then an *idle* tick, when nothing is due: heartbeat,
reads and the pane listing only. The driver checks that each wake tick named N+1 agents and
each idle tick none. Ours runs with `CAFLEET_SUBMIT_DELAY_CUSTOM=0`; upstream's 0.12 s submit
delay is fixed in its code and shows up only in the "wall" column.
"""


READING_NOTES = [
    "Where the counts come from (read from the code of each implementation): an idle tick"
    " lists the panes once (`tmux list-panes -a`) whatever the fleet size; a wake adds, for"
    " ours, one `list-panes -t` for the watcher's agent check, the Esc, the text and the Enter"
    " (`send-keys`), and for upstream the text and the Enter. The wake text names every due"
    " agent and is typed in pieces of at most 8 KiB (one tmux command is capped near 16 KiB),"
    " so a wake naming all 201 agents of the largest fleet takes one `send-keys` more: the"
    " count follows the length of the text, one call per 8 KiB, not one per member. Our wake"
    " tick records the progress of every named agent with one prepared `UPDATE` run once per"
    " agent (`executemany`, each run counted by the trace), so its statement count follows the"
    " number of agents woken; upstream records all pings with a single"
    " `UPDATE ... WHERE agent_id IN (...)`. What also grows with the fleet is the driver's own"
    " CPU: reading and mapping every agent, placement and schedule row of the fleet each tick.",
]


def render(samples: Samples, args: argparse.Namespace, machine: list[str], notes: list[str]) -> str:
    parts = [
        START_MARK,
        METHOD,
        "### Results",
        "",
        *machine,
        f"- Runs: {args.ticks} wake + {args.ticks} idle ticks per implementation and size, after"
        f" {args.warmup} untimed rounds; medians",
        *notes,
        "",
        "**Wake tick** (all N+1 watched agents due, one wake typed):",
        "",
        results_table(samples, args.sizes, "wake"),
        "",
        "**Idle tick** (nothing due):",
        "",
        results_table(samples, args.sizes, "idle"),
        "",
        *readings(samples, args.sizes),
        "",
        *READING_NOTES,
        "",
        *reproduce_lines(reproduce_command(args)),
        END_MARK,
    ]
    return "\n".join(parts)


def reproduce_command(args: argparse.Namespace, script: str = "monitor_tick.py",
                      runs: tuple[str, int] | None = None) -> str:  # fmt: skip
    """The command line that produced these results (member_list.py shares it)."""
    flag, count = runs or ("--ticks", args.ticks)
    parts = ["python3", f"bench/{script}", "--sizes", ",".join(map(str, args.sizes))]
    parts += [flag, str(count), "--warmup", str(args.warmup)]
    if args.upstream_cafleet:
        parts += ["--upstream-cafleet", "<path-to-upstream-cafleet>"]
    return " ".join([*parts, "--write"])


def write_section(docs: Path, section: str) -> None:
    """Replace the marked section of ``docs`` (re-read just before writing) or append it."""
    replace_marked(docs, START_MARK, END_MARK, section, "# Benchmarks\n\n")


# --------------------------------------------------------------- main


def fleet_bench_parser(
    doc: str | None, runs: str, runs_default: int, runs_help: str, warmup: int
) -> argparse.ArgumentParser:
    """The options every fleet-size benchmark takes (this one, member_list.py, broadcast.py):
    sizes, timed `runs` and warm-up rounds, the two implementations, --write and --raw-json."""
    parser = argparse.ArgumentParser(description=(doc or "").split("\n\n")[0])
    parser.add_argument("--sizes", default="20,100,200", help="member counts (20,100,200)")
    parser.add_argument(runs, type=int, default=runs_default, help=f"{runs_help} ({runs_default})")
    parser.add_argument(
        "--warmup", type=int, default=warmup, help=f"untimed rounds first ({warmup})"
    )
    parser.add_argument(
        "--ours-python", type=Path, default=DEFAULT_OURS_PYTHON, help="the Python of our virtualenv"
    )
    parser.add_argument(
        "--upstream-cafleet",
        type=Path,
        default=os.environ.get("CAFLEET_UPSTREAM") or None,
        help=f"upstream cafleet {UPSTREAM_VERSION} executable (env CAFLEET_UPSTREAM)",
    )
    parser.add_argument("--write", action="store_true", help="update docs/benchmarks.md")
    parser.add_argument("--docs", type=Path, default=DEFAULT_DOCS, help=argparse.SUPPRESS)
    parser.add_argument("--raw-json", type=Path, help="also save every sample here")
    return parser


def parsed_sizes(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> argparse.Namespace:
    args = parser.parse_args(argv)
    args.sizes = [int(s) for s in str(args.sizes).split(",") if s.strip()]
    return args


def implementations(args: argparse.Namespace) -> list[Impl]:
    """Ours (`python -m cafleet` on --ours-python), then upstream when it was given."""
    ours_python = args.ours_python.absolute()
    impls = [Impl("ours", [str(ours_python), "-m", "cafleet"], ours_python)]
    if args.upstream_cafleet:
        script = args.upstream_cafleet.absolute()
        impls.append(Impl("upstream", [str(script)], interpreter_of(script)))
    return impls


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = fleet_bench_parser(__doc__, "--ticks", 15, "timed ticks of each kind", 2)
    parser.add_argument("--driver", type=Path, help=argparse.SUPPRESS)
    return parsed_sizes(parser, argv)


def benchmark(args: argparse.Namespace, scratch: Path) -> tuple[Samples, list[str], list[str]]:
    ours_python = args.ours_python.absolute()
    impls = implementations(args)
    demo = [str(ours_python), "-m", "cafleet.demo.agent"]
    samples: Samples = {impl.label: {} for impl in impls}
    notes: dict[str, str] = {}
    for size in args.sizes:
        for impl in impls:
            where = scratch / f"{impl.label}-{size}"
            env = scratch_env(where / "home")
            database = where / "cafleet.db"
            env["CAFLEET_DATABASE_URL"] = f"sqlite:///{database}"
            env["CAFLEET_SUBMIT_DELAY_CUSTOM"] = "0"
            print(f"{impl.label}, {size} members ...", file=sys.stderr)
            with private_tmux(env) as base:
                prepare = prepare_ours if impl.label == "ours" else prepare_upstream
                prepared = prepare(impl, env, database, base, size, demo)
                notes[impl.label] = prepared.how
                result = run_driver(prepared, scratch, args.ticks, args.warmup)
            samples[impl.label][size] = result["samples"]
    env = scratch_env(scratch / "probe-home")
    tmux = run(["tmux", "-V"], env).stdout.strip()
    machine = [
        f"- Date: {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC",
        f"- Machine: {platform.system()} {platform.release()} ({platform.machine()}), "
        f"nproc {len(os.sched_getaffinity(0))}, {cpu_model()}; {tmux}, "
        f"SQLite {sqlite3.sqlite_version} (benchmark's Python)",
    ]
    for impl in impls:
        version = run([*impl.cafleet, "--version"], env).stdout.strip()
        machine.append(f"- {impl.label}: {version} on Python {python_version(impl.python, env)}")
    note_lines = [f"- Registration, {label}: {how}" for label, how in notes.items()]
    if not args.upstream_cafleet:
        note_lines.append("- Upstream: not measured in this run (no `--upstream-cafleet`)")
    return samples, machine, note_lines


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.driver is not None:
        return driver_main(args.driver)
    with tempfile.TemporaryDirectory(prefix="cafleet-bench-mon-") as tmp:
        try:
            samples, machine, notes = benchmark(args, Path(tmp))
        except BenchError as exc:
            print(f"benchmark failed: {exc}", file=sys.stderr)
            return 1
    body = render(samples, args, machine, notes)
    print(body)
    if args.raw_json:
        args.raw_json.parent.mkdir(parents=True, exist_ok=True)
        args.raw_json.write_text(json.dumps(samples, indent=1))
    if args.write:
        write_section(args.docs, body)
    return 0


if __name__ == "__main__":
    sys.exit(main())

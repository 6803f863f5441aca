"""Whole-process wall time of cafleet's hot CLI commands: this repository vs upstream 0.17.1.

Each implementation gets its own scratch SQLite file, migrated with its own ``setup db`` and
seeded with its own CLI (a fleet created inside a private tmux server, then messages in both
directions). The hot commands then run interleaved, round after round, and the medians are
compared. A second part shows where the time goes: ``-X importtime`` of our CLI's import graph
and the wall time of bare interpreter start-ups (the floor no CLI can go below).

Standard library only. Usage (from the repository root)::

    python3 bench/cli_latency.py --upstream-cafleet PATH [--rounds 15] [--write]
    python3 bench/cli_latency.py --upstream-python PATH_TO_PYTHON3.12 [--rounds 15] [--write]

Nothing here asserts on timings: it measures and reports.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import secrets
import shlex
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from docs_section import replace_marked, reproduce_lines

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OURS = REPO_ROOT / ".venv" / "bin" / "cafleet"
DEFAULT_DOCS = REPO_ROOT / "docs" / "benchmarks.md"
UPSTREAM_VERSION = "0.17.1"
START_MARK = "<!-- cli-latency:start -->"
END_MARK = "<!-- cli-latency:end -->"

HOT_COMMANDS = ("message send", "message poll", "member list", "--version")
IMPORT_GRAPH = (
    "import cafleet.entrypoints.cli.main, cafleet.entrypoints.cli.message, "
    "cafleet.composition, cafleet.adapters.store.sqlite.unit_of_work"
)
FLOOR_SNIPPETS = (
    ("python -c pass", "pass"),
    ("python -c 'import click'", "import click"),
    ("python -c 'import sqlalchemy'", "import sqlalchemy"),
    ("python -c '<CLI import graph>'", IMPORT_GRAPH),
)
# The Director's pane runs an inert reader: upstream types message previews into it.
INERT_PANE_COMMAND = "cat > /dev/null"
FLEET_LINE = re.compile(r"^(\d+) director=(\d+) admin=(\d+)\s*$", re.MULTILINE)
POLL_ENTRY = re.compile(r"^\[\d+ \| from:", re.MULTILINE)
IMPORTTIME_LINE = re.compile(r"^import time:\s+(\d+) \|\s+(\d+) \| ( *)(\S+)\s*$")
SEND_TEXT = "bench: status ping, please report progress on the current task"
GOAL_RATIO = 0.2  # of upstream's median wall time
GOAL_PEAK_MIB = 25


class BenchError(RuntimeError):
    """A preparation step failed; the benchmark cannot continue."""


@dataclass(frozen=True)
class Impl:
    """One cafleet implementation under test, with its own database and environment."""

    label: str
    cafleet: Path
    database: Path
    env: Mapping[str, str]


@dataclass(frozen=True)
class Fleet:
    fleet_id: int
    director: int
    admin: int


@dataclass(frozen=True)
class Summary:
    median: float
    p90: float


@dataclass(frozen=True)
class Prepared:
    """What seeding produced for one implementation, reported next to the results."""

    fleet: Fleet
    pending_at_start: int
    skills_gate: str


# ---------------------------------------------------------------- process helpers


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
    )
    if check and proc.returncode != 0:
        shown = shlex.join(str(arg) for arg in argv)
        raise BenchError(f"`{shown}` exited {proc.returncode}: {proc.stderr.strip()}")
    return proc


# Peak RSS is read through this launcher, never from the benchmark's own children: Linux
# counts the memory a child had before its exec (a copy of, or with vfork the very, parent)
# in its peak, so every child of this ~20 MiB script would report at least that much. The
# launcher is a bare interpreter (about 9 MiB, shown as the floor) that spawns the command
# and prints the command's own ru_maxrss (KiB) and exit status.
PEAK_LAUNCHER = """
import os, sys
devnull = os.open(os.devnull, os.O_RDWR)
actions = [(os.POSIX_SPAWN_DUP2, devnull, fd) for fd in (0, 1, 2)]
pid = os.posix_spawnp(sys.argv[1], sys.argv[1:], os.environ, file_actions=actions)
_, status, usage = os.wait4(pid, 0)
print(usage.ru_maxrss, os.waitstatus_to_exitcode(status))
"""


def timed_run(argv: Sequence[str | Path], env: Mapping[str, str]) -> float:
    """Wall time (ms) of one whole process; a failed run aborts the benchmark. Its output
    goes to a file, not a pipe, so nothing has to be read while waiting."""
    with tempfile.TemporaryFile("w+") as out:
        start = time.perf_counter()
        proc = subprocess.Popen(
            [str(arg) for arg in argv],
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            text=True,
        )
        proc.wait()
        elapsed = (time.perf_counter() - start) * 1000.0
        if proc.returncode != 0:
            out.seek(0)
            shown = shlex.join(str(arg) for arg in argv)
            raise BenchError(f"`{shown}` exited {proc.returncode}: {out.read().strip()}")
    return elapsed


def peak_mib(argv: Sequence[str | Path], env: Mapping[str, str]) -> float:
    """The process's own peak resident set (MiB), through PEAK_LAUNCHER."""
    launcher = [sys.executable, "-I", "-S", "-c", PEAK_LAUNCHER, *map(str, argv)]
    done = subprocess.run(launcher, env=dict(env), capture_output=True, text=True, check=False)
    fields = done.stdout.split()
    if done.returncode != 0 or len(fields) != 2 or fields[1] != "0":
        shown = shlex.join(str(arg) for arg in argv)
        raise BenchError(f"`{shown}` failed under the peak launcher: {done.stderr.strip()}")
    return int(fields[0]) / 1024.0  # Linux reports KiB


def cli(impl: Impl, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return run([impl.cafleet, *args], impl.env, check=check)


def interpreter_of(script: Path) -> Path:
    """The Python that runs a console script: its shebang, else the sibling ``python``."""
    first = script.read_bytes().split(b"\n", 1)[0].decode(errors="replace")
    if first.startswith("#!") and "python" in first:
        return Path(first[2:].split()[0])
    return script.parent / "python"


# ---------------------------------------------------------------- environment


def scratch_env(scratch: Path) -> dict[str, str]:
    """A child environment with a scratch HOME and a private bytecode cache.

    Every ``PYTHON*`` variable is dropped so both implementations start alike; the bytecode
    cache under the scratch directory means both run from compiled bytecode after warm-up,
    however they were installed (an editable install keeps its sources outside site-packages).
    """
    dropped = ("CAFLEET_", "PYTHON", "TMUX", "HERDR_", "XDG_", "VIRTUAL_ENV")
    env = {key: value for key, value in os.environ.items() if not key.startswith(dropped)}
    home = scratch / "home"
    home.mkdir()
    env["HOME"] = str(home)
    env["XDG_CONFIG_HOME"] = str(home / ".config")
    env["XDG_DATA_HOME"] = str(home / ".local" / "share")
    env["XDG_CACHE_HOME"] = str(home / ".cache")
    env["PYTHONPYCACHEPREFIX"] = str(scratch / "pycache")
    return env


@contextmanager
def private_tmux(env: Mapping[str, str]) -> Iterator[dict[str, str]]:
    """A private tmux server; yields the TMUX/TMUX_PANE pair of its only pane."""
    base = ["tmux", "-L", f"cafleet-bench-{os.getpid()}-{secrets.token_hex(3)}"]
    socket = ""
    try:
        new_session = ["new-session", "-d", "-s", "bench", "-x", "200", "-y", "50"]
        run([*base, "-f", "/dev/null", *new_session, INERT_PANE_COMMAND], env)
        socket = run([*base, "display-message", "-p", "#{socket_path}"], env).stdout.strip()
        pane = run([*base, "display-message", "-p", "-t", "bench", "#{pane_id}"], env)
        yield {"TMUX": f"{socket},0,0", "TMUX_PANE": pane.stdout.strip()}
    finally:
        subprocess.run([*base, "kill-server"], env=dict(env), capture_output=True, check=False)
        if socket:  # tmux may leave the socket file of a killed server behind
            Path(socket).unlink(missing_ok=True)


def make_upstream_venv(python: Path, where: Path, env: Mapping[str, str]) -> Path:
    """Create a venv with ``cafleet==UPSTREAM_VERSION`` from PyPI; return its console script."""
    venv = where / "upstream-venv"
    print(f"creating {venv.name} with {python} ...", file=sys.stderr)
    run([python, "-m", "venv", venv], env)
    pip: list[str | Path] = [venv / "bin" / "python", "-m", "pip", "install", "-q"]
    run([*pip, "--disable-pip-version-check", f"cafleet=={UPSTREAM_VERSION}"], env)
    return venv / "bin" / "cafleet"


# ---------------------------------------------------------------- preparation


def version_of(impl: Impl) -> str:
    return cli(impl, "--version").stdout.strip().rsplit(" ", 1)[-1]


def record_skill_install(database: Path, version: str) -> None:
    """Write the row upstream's skills gate looks for (what ``setup skill`` records)."""
    now = datetime.datetime.now(datetime.UTC).isoformat()
    with sqlite3.connect(database) as conn:
        conn.execute(
            "INSERT OR REPLACE INTO skill_installs (coding_agent, cafleet_version, installed_at)"
            " VALUES (?, ?, ?)",
            ("claude", version, now),
        )
    conn.close()


def satisfy_skills_gate(impl: Impl) -> str:
    """Get past a "run 'cafleet setup' first" refusal; return how it was done."""
    probe = cli(impl, "fleet", "list", check=False)
    if probe.returncode == 0:
        return "no gate"
    if "skill" not in probe.stderr + probe.stdout:
        raise BenchError(f"{impl.label}: `fleet list` failed: {probe.stderr.strip()}")
    (Path(impl.env["HOME"]) / ".claude").mkdir(exist_ok=True)
    install = cli(impl, "setup", "skill", "--agent", "claude", check=False)
    if install.returncode == 0:
        how = "`setup skill --agent claude` (scratch HOME)"
    elif "could not reach" in install.stderr:
        # Upstream's `setup skill` downloads the skills from GitHub; without that network
        # access, record the row it would have written. The gate still runs on every command.
        record_skill_install(impl.database, version_of(impl))
        how = "skills row recorded in its database (`setup skill` could not download)"
    else:
        raise BenchError(f"{impl.label}: `setup skill` failed: {install.stderr.strip()}")
    cli(impl, "fleet", "list")
    return how


def seed(impl: Impl, pending: int, replies: int) -> Fleet:
    """Create the fleet, then ``pending`` Director->Admin and ``replies`` Admin->Director."""
    out = cli(impl, "fleet", "create", "--name", "bench").stdout
    match = FLEET_LINE.search(out)
    if match is None:
        raise BenchError(f"{impl.label}: unexpected `fleet create` output: {out!r}")
    fleet = Fleet(*(int(group) for group in match.groups()))
    for i in range(pending):
        text = f"seed {i}: please review the change set and report back with findings"
        send_message(impl, fleet, fleet.director, fleet.admin, text)
    for i in range(replies):
        send_message(impl, fleet, fleet.admin, fleet.director, f"reply {i}: on it")
    return fleet


def send_message(impl: Impl, fleet: Fleet, sender: int, recipient: int, text: str) -> None:
    cli(impl, *command_argv("message send", fleet, sender=sender, recipient=recipient, text=text))


def prepare(impl: Impl, pending: int, replies: int) -> Prepared:
    print(f"preparing {impl.label} ({impl.cafleet}) ...", file=sys.stderr)
    cli(impl, "setup", "db")
    gate = satisfy_skills_gate(impl)
    fleet = seed(impl, pending, replies)
    poll = cli(impl, *command_argv("message poll", fleet)).stdout
    return Prepared(fleet, len(POLL_ENTRY.findall(poll)), gate)


# ---------------------------------------------------------------- measurement


def command_argv(
    name: str,
    fleet: Fleet,
    *,
    sender: int | None = None,
    recipient: int | None = None,
    text: str = SEND_TEXT,
) -> list[str]:
    """The argv (after the executable) of a hot command; ``send`` defaults to Director->Admin."""
    fid = str(fleet.fleet_id)
    match name:
        case "message send":
            source = fleet.director if sender is None else sender
            target = fleet.admin if recipient is None else recipient
            return [
                *("message", "send", "--fleet-id", fid, "--agent-id", str(source)),
                *("--to", str(target), "--text", text),
            ]
        case "message poll":
            return ["message", "poll", "--fleet-id", fid, "--agent-id", str(fleet.admin)]
        case "member list":
            return ["member", "list", "--fleet-id", fid]
        case "--version":
            return ["--version"]
    raise ValueError(name)


Samples = dict[str, dict[str, list[float]]]


@dataclass(frozen=True)
class Measured:
    wall: Samples
    peak: Samples  # MiB


def measure(
    impls: Sequence[Impl],
    fleets: Mapping[str, Fleet],
    rounds: int,
    warmup: int,
    commands: Sequence[str] = HOT_COMMANDS,
) -> Measured:
    """Interleave the implementations command by command; the first alternates per round."""
    wall: Samples = {name: {impl.label: [] for impl in impls} for name in commands}
    peak: Samples = {name: {impl.label: [] for impl in impls} for name in commands}
    for index in range(warmup + rounds):
        order = impls if index % 2 == 0 else list(reversed(impls))
        for name in commands:
            for impl in order:
                argv: list[str | Path] = [impl.cafleet, *command_argv(name, fleets[impl.label])]
                elapsed = timed_run(argv, impl.env)
                if index >= warmup:
                    wall[name][impl.label].append(elapsed)
                    peak[name][impl.label].append(peak_mib(argv, impl.env))  # untimed run
        phase = "warm-up" if index < warmup else "round"
        number = index + 1 if index < warmup else index - warmup + 1
        print(f"  {phase} {number} done", file=sys.stderr)
    return Measured(wall, peak)


def summarize(values: Sequence[float]) -> Summary:
    if len(values) < 2:
        return Summary(values[0], values[0])
    p90 = statistics.quantiles(values, n=10, method="inclusive")[-1]
    return Summary(statistics.median(values), p90)


def repeat_ms(argv: Sequence[str | Path], env: Mapping[str, str], runs: int) -> list[float]:
    """``runs`` timed runs after two untimed ones (which also fill the bytecode cache)."""
    for _ in range(2):
        timed_run(argv, env)
    return [timed_run(argv, env) for _ in range(runs)]


# ---------------------------------------------------------------- where the time goes


@dataclass(frozen=True)
class ImportRecord:
    depth: int
    name: str
    self_us: int
    cumulative_us: int


def parse_importtime(stderr: str) -> list[ImportRecord]:
    records = []
    for line in stderr.splitlines():
        match = IMPORTTIME_LINE.match(line)
        if match:
            self_us, cumulative_us, indent, name = match.groups()
            records.append(ImportRecord(len(indent) // 2, name, int(self_us), int(cumulative_us)))
    return records


def per_package(records: Sequence[ImportRecord]) -> dict[str, tuple[int, int]]:
    """Top-level package -> (self µs, cumulative µs).

    Cumulative counts each outermost import of the package, i.e. one whose importer belongs
    to another package, so it includes whatever that package imports in turn.
    """
    totals: dict[str, tuple[int, int]] = {}
    stack: list[tuple[int, str]] = []
    for record in reversed(records):  # reversed importtime output is pre-order
        while stack and stack[-1][0] >= record.depth:
            stack.pop()
        root = record.name.split(".", 1)[0]
        self_us, cumulative_us = totals.get(root, (0, 0))
        outermost = not stack or stack[-1][1] != root
        totals[root] = (
            self_us + record.self_us,
            cumulative_us + (record.cumulative_us if outermost else 0),
        )
        stack.append((record.depth, root))
    return totals


def import_profile(
    python: Path, env: Mapping[str, str], runs: int
) -> tuple[float, dict[str, tuple[float, float]]]:
    """Median total import ms and per-package median (self ms, cumulative ms)."""
    argv: list[str | Path] = [python, "-X", "importtime", "-c", IMPORT_GRAPH]
    run(argv, env)  # fills the bytecode cache
    profiles = [parse_importtime(run(argv, env).stderr) for _ in range(runs)]
    totals = [sum(r.cumulative_us for r in records if r.depth == 0) for records in profiles]
    tables = [per_package(records) for records in profiles]
    packages = {name for table in tables for name in table}
    medians = {
        name: (
            statistics.median(table.get(name, (0, 0))[0] for table in tables) / 1000.0,
            statistics.median(table.get(name, (0, 0))[1] for table in tables) / 1000.0,
        )
        for name in packages
    }
    return statistics.median(totals) / 1000.0, medians


MODULES_PROBE = """
import json, runpy, sys
script, out = sys.argv[1], sys.argv[2]
sys.argv = [script, *sys.argv[3:]]
try:
    runpy.run_path(script, run_name="__main__")
finally:
    with open(out, "w") as file:
        json.dump(sorted({name.split(".")[0] for name in sys.modules}), file)
"""


def third_party_imports(python: Path, impl: Impl, fleet: Fleet) -> list[str]:
    """The top-level packages in ``sys.modules`` after a real `message send` that the
    standard library does not provide."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "modules.json"
        send = command_argv("message send", fleet)
        run([python, "-c", MODULES_PROBE, impl.cafleet, out, *send], impl.env)
        roots: list[str] = json.loads(out.read_text())
    return [r for r in roots if r not in sys.stdlib_module_names and not r.startswith("_")]


# ---------------------------------------------------------------- reporting


def fmt(ms: float) -> str:
    return f"{ms:.0f}"


def results_table(measured: Measured) -> str:
    lines = [
        "| Command | ours median ms | ours p90 ms | upstream median ms | upstream p90 ms"
        f" | ours / upstream (median) | goal ≤ {GOAL_RATIO}× | ours peak MiB"
        f" | upstream peak MiB | goal ≤ {GOAL_PEAK_MIB} MiB |",
        "|---|---:|---:|---:|---:|---:|:---:|---:|---:|:---:|",
    ]
    for name in HOT_COMMANDS:
        ours = summarize(measured.wall[name]["ours"])
        upstream = summarize(measured.wall[name]["upstream"])
        ours_peak = statistics.median(measured.peak[name]["ours"])
        upstream_peak = statistics.median(measured.peak[name]["upstream"])
        ratio = ours.median / upstream.median
        reference = name == "--version"
        goal = "n/a (reference)" if reference else met(ratio <= GOAL_RATIO)
        peak_goal = "n/a (reference)" if reference else met(ours_peak <= GOAL_PEAK_MIB)
        lines.append(
            f"| `cafleet {name}` | {fmt(ours.median)} | {fmt(ours.p90)} | {fmt(upstream.median)}"
            f" | {fmt(upstream.p90)} | {ratio:.2f}× | {goal} | {ours_peak:.1f}"
            f" | {upstream_peak:.1f} | {peak_goal} |"
        )
    return "\n".join(lines)


def met(ok: bool) -> str:
    return "met" if ok else "not met"


def import_table(total_ms: float, packages: Mapping[str, tuple[float, float]], top: int) -> str:
    ranked = sorted(packages.items(), key=lambda item: item[1][1], reverse=True)[:top]
    lines = [
        f"Total import time of the CLI's import graph (sum of top-level imports, median): "
        f"**{fmt(total_ms)} ms**.",
        "",
        "| Package | cumulative ms | self ms |",
        "|---|---:|---:|",
    ]
    lines += [f"| `{name}` | {cum:.1f} | {own:.1f} |" for name, (own, cum) in ranked]
    return "\n".join(lines)


def floor_table(rows: Sequence[tuple[str, Summary]]) -> str:
    lines = ["| Process | median ms | p90 ms |", "|---|---:|---:|"]
    lines += [f"| `{label}` | {fmt(s.median)} | {fmt(s.p90)} |" for label, s in rows]
    return "\n".join(lines)


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
    code = "import platform; print(platform.python_version())"
    return run([python, "-c", code], env).stdout.strip()


def machine_lines(impls: Sequence[Impl], pythons: Mapping[str, Path]) -> list[str]:
    tmux = run(["tmux", "-V"], impls[0].env).stdout.strip()
    lines = [
        f"- Date: {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC",
        f"- Machine: {platform.system()} {platform.release()} ({platform.machine()}), "
        f"nproc {len(os.sched_getaffinity(0))}, {cpu_model()}; {tmux}, "
        f"SQLite {sqlite3.sqlite_version} (benchmark's Python)",
    ]
    for impl in impls:
        python = python_version(pythons[impl.label], impl.env)
        lines.append(f"- {impl.label}: cafleet {version_of(impl)} on Python {python}")
    return lines


def add_upstream_options(parser: argparse.ArgumentParser) -> None:
    """--upstream-cafleet and --upstream-python, as every script comparing with upstream
    takes them (see make_upstream_venv)."""
    parser.add_argument(
        "--upstream-cafleet",
        type=Path,
        default=os.environ.get("CAFLEET_UPSTREAM") or None,
        help=f"upstream cafleet {UPSTREAM_VERSION} executable (env CAFLEET_UPSTREAM)",
    )
    parser.add_argument(
        "--upstream-python",
        type=Path,
        default=os.environ.get("CAFLEET_UPSTREAM_PYTHON") or None,
        help=f"a python3.12 to build a scratch venv with cafleet=={UPSTREAM_VERSION} from PyPI"
        " (env CAFLEET_UPSTREAM_PYTHON); used when no upstream executable is given",
    )


def upstream_option(args: argparse.Namespace) -> list[str]:
    """The upstream option of a reproduce command, with a placeholder for the path."""
    if args.upstream_cafleet:
        return ["--upstream-cafleet", "<path-to-upstream-cafleet>"]
    return ["--upstream-python", "<path-to-python3.12>"]


def reproduce_command(args: argparse.Namespace) -> str:
    parts = ["python3", "bench/cli_latency.py", *upstream_option(args)]
    if args.ours != DEFAULT_OURS:
        parts += ["--ours", "<path-to-our-cafleet>"]
    parts += ["--rounds", str(args.rounds), "--warmup", str(args.warmup)]
    parts += ["--pending", str(args.pending), "--replies", str(args.replies), "--write"]
    return " ".join(parts)


@dataclass(frozen=True)
class Report:
    machine: list[str]
    prepared: Mapping[str, Prepared]
    samples: Measured
    hot_imports: list[str]  # top-level packages beyond the standard library
    import_total_ms: float
    packages: Mapping[str, tuple[float, float]]
    floors: list[tuple[str, Summary]]
    launcher_mib: float  # what the peak launcher reports for `true`: the lowest it can


def render(report: Report, args: argparse.Namespace) -> str:
    ours, upstream = report.prepared["ours"], report.prepared["upstream"]
    growth = args.warmup + args.rounds
    return "\n".join(
        [
            "### Results",
            "",
            *report.machine,
            f"- Runs: {args.rounds} rounds per command after {args.warmup} warm-up rounds, "
            "implementations interleaved (the one going first alternates per round)",
            f"- Data: `message poll` lists {ours.pending_at_start} (ours) / "
            f"{upstream.pending_at_start} (upstream) pending messages at the start, "
            f"+{growth} by the end (each round's `message send` adds one); "
            f"{args.replies} Admin->Director messages also seeded; `member list` has no members",
            f"- Skills gate: upstream {upstream.skills_gate}; ours {ours.skills_gate}",
            "",
            results_table(report.samples),
            "",
            "Peak MiB is each process's own peak resident set, median over the rounds, from an"
            " extra untimed run per round: a bare-interpreter launcher spawns the command and"
            " reads its rusage (`wait4`), because a child of the benchmark itself would count"
            " the benchmark's memory from before its exec. A process cannot be measured below"
            f" the launcher's own {report.launcher_mib:.1f} MiB.",
            "",
            "Packages a `message send` imports beyond the standard library (`-X importtime` of"
            f" the command itself): {', '.join(f'`{name}`' for name in report.hot_imports)}.",
            "",
            "### Where the time goes (ours)",
            "",
            f"`python -X importtime -c '{IMPORT_GRAPH}'` with our venv's Python, "
            f"top {args.top_imports} top-level packages by cumulative time "
            f"(median of {args.import_runs} runs; cumulative includes what a package imports, "
            "so rows overlap):",
            "",
            import_table(report.import_total_ms, report.packages, args.top_imports),
            "",
            f"Start-up floor: whole-process wall of bare interpreters (median of {args.floor_runs}"
            " runs after 2 warm-ups; `python` is our venv's unless marked upstream):",
            "",
            floor_table(report.floors),
            "",
            *reproduce_lines(reproduce_command(args)),
        ]
    )


def write_section(docs: Path, body: str) -> None:
    """Replace the marked section of ``docs`` (append it, or create the file, if missing)."""
    section = f"{START_MARK}\n{body}\n{END_MARK}"
    heading = "# Benchmarks\n\n## CLI latency against upstream 0.17.1\n\n"
    replace_marked(docs, START_MARK, END_MARK, section, heading)


# ---------------------------------------------------------------- main


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ours", type=Path, default=DEFAULT_OURS, help="our cafleet executable")
    add_upstream_options(parser)
    parser.add_argument("--rounds", type=int, default=15, help="timed rounds (default 15)")
    parser.add_argument("--warmup", type=int, default=2, help="untimed rounds first (default 2)")
    parser.add_argument("--pending", type=int, default=50, help="seeded Director->Admin messages")
    parser.add_argument("--replies", type=int, default=10, help="seeded Admin->Director messages")
    parser.add_argument("--import-runs", type=int, default=5, help="-X importtime runs")
    parser.add_argument("--floor-runs", type=int, default=15, help="runs per start-up floor row")
    parser.add_argument("--top-imports", type=int, default=12, help="packages to list")
    parser.add_argument("--write", action="store_true", help="update the marked docs section")
    parser.add_argument("--docs", type=Path, default=DEFAULT_DOCS, help="the file --write edits")
    parser.add_argument("--raw-json", type=Path, help="also dump every sample here as JSON")
    args = parser.parse_args(argv)
    if args.upstream_cafleet is None and args.upstream_python is None:
        parser.error("give --upstream-cafleet (or CAFLEET_UPSTREAM) or --upstream-python")
    if args.rounds < 1 or args.warmup < 0 or args.pending < 0 or args.replies < 0:
        parser.error("--rounds must be >= 1; --warmup, --pending and --replies >= 0")
    return args


def build_impls(args: argparse.Namespace, scratch: Path, env: Mapping[str, str]) -> list[Impl]:
    upstream = args.upstream_cafleet or make_upstream_venv(args.upstream_python, scratch, env)
    impls = []
    for label, given in (("ours", args.ours), ("upstream", upstream)):
        executable = Path(given).absolute()
        if not executable.is_file():
            raise BenchError(f"{label}: no executable at {executable}")
        database = scratch / f"{label}.db"
        impl_env = {**env, "CAFLEET_DATABASE_URL": f"sqlite:///{database}"}
        impls.append(Impl(label, executable, database, impl_env))
    return impls


def floors(
    impls: Sequence[Impl], pythons: Mapping[str, Path], runs: int
) -> list[tuple[str, Summary]]:
    ours = impls[0]
    rows = [
        (label, summarize(repeat_ms([pythons["ours"], "-c", code], ours.env, runs)))
        for label, code in FLOOR_SNIPPETS
    ]
    upstream = impls[1]
    rows.append(
        (
            "python -c pass (upstream's Python)",
            summarize(repeat_ms([pythons["upstream"], "-c", "pass"], upstream.env, runs)),
        )
    )
    return rows


def benchmark(args: argparse.Namespace, scratch: Path) -> Report:
    env = scratch_env(scratch)
    with private_tmux(env) as tmux:
        impls = build_impls(args, scratch, env | tmux)
        pythons = {impl.label: interpreter_of(impl.cafleet) for impl in impls}
        prepared = {impl.label: prepare(impl, args.pending, args.replies) for impl in impls}
        fleets = {label: p.fleet for label, p in prepared.items()}
        print("measuring hot commands ...", file=sys.stderr)
        load_before = os.getloadavg()[0]
        samples = measure(impls, fleets, args.rounds, args.warmup)
        hot_imports = third_party_imports(pythons["ours"], impls[0], fleets["ours"])
        load = f"1-min load average {load_before:.2f} before, {os.getloadavg()[0]:.2f} after"
        print("profiling imports and start-up floors ...", file=sys.stderr)
        total, packages = import_profile(pythons["ours"], impls[0].env, args.import_runs)
        return Report(
            machine=[*machine_lines(impls, pythons), f"- Load while measuring: {load}"],
            prepared=prepared,
            samples=samples,
            hot_imports=hot_imports,
            import_total_ms=total,
            packages=packages,
            floors=floors(impls, pythons, args.floor_runs),
            launcher_mib=peak_mib(["true"], impls[0].env),
        )


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        with tempfile.TemporaryDirectory(prefix="cafleet-bench-") as tmp:
            report = benchmark(args, Path(tmp))
    except BenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    body = render(report, args)
    print(body)
    if args.raw_json:
        args.raw_json.parent.mkdir(parents=True, exist_ok=True)
        raw = {"wall_ms": report.samples.wall, "peak_mib": report.samples.peak}
        args.raw_json.write_text(json.dumps(raw, indent=2) + "\n")
    if args.write:
        write_section(args.docs, body)
        print(f"updated {args.docs}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

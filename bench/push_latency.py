"""Push latency and broadcast lock hold on live tmux panes: this repository vs upstream 0.17.1.

(a) Push latency: the time from the start of a ``cafleet message send`` process to the moment
    the recipient's pane program receives the submitting Enter, plus the whole-process wall
    time of the send. Recipients: the built-in demo agent (a custom member; the latency is
    taken when its CAFLEET_DEMO_LOG shows the new ``submit`` line, polled every millisecond)
    and a fake ``claude`` executable (a raw-mode reader that timestamps every CR it reads with
    the system-wide monotonic clock) for a like-for-like comparison with upstream, whose
    members can only be claude/codex/opencode.
(b) Broadcast: the wall time of ``cafleet message broadcast`` to members whose panes run the
    fake ``claude``, and how long the SQLite write lock is held meanwhile, measured from
    outside by a probe process that tries ``BEGIN IMMEDIATE`` with ``busy_timeout=0`` on the
    same database file every millisecond and records the stretches in which it could not.

Standard library only. Usage (from the repository root)::

    python3 bench/push_latency.py [--upstream-cafleet PATH] [--sends 20] [--members 20]
                                  [--broadcasts 5] [--write]

Nothing here asserts on timings: it measures and reports. Each implementation runs in its
own private tmux server with its own scratch HOME and database; the servers are always killed.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import secrets
import select
import shlex
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import termios
import time
import tty
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

from docs_section import replace_marked, reproduce_lines

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OURS = REPO_ROOT / ".venv" / "bin" / "cafleet"
DEFAULT_DOCS = REPO_ROOT / "docs" / "benchmarks.md"
UPSTREAM_VERSION = "0.17.1"
OUR_CLAUDE_DELAY = "0.05"  # the claude profile's default
UPSTREAM_SUBMIT_DELAY = "0.12"  # upstream 0.17.1's fixed pause between text and Enter
START_MARK = "<!-- push-latency:start -->"
END_MARK = "<!-- push-latency:end -->"
FLEET_LINE = re.compile(r"^(\d+) director=(\d+) admin=(\d+)\s*$", re.MULTILINE)
# ours says `coding_agent=`, upstream `backend=`
MEMBER_LINE = re.compile(r"^(\d+) \S+ (?:coding_agent|backend)=\S+ pane=(\S+)\s*$", re.M)
TASK_LINE = re.compile(r"^\[(\d+) \|", re.M)  # `[<task> | from:<agent> | <time>]`
RECIPIENT_LINE = re.compile(r"^\s*to (\d+): task (\d+)", re.M)  # ours, one per recipient
BROADCAST_LINE = re.compile(r"broadcast id=\d+ recipients=(\d+) delivered=(\d+)")
CLI_TIMEOUT = 120.0
WAIT_TIMEOUT = 60.0


class BenchError(RuntimeError):
    """A preparation or measurement step failed; the benchmark cannot continue."""


# ---------------------------------------------------------------- helper processes


def fake_agent(log_dir: Path, argv: Sequence[str]) -> int:
    """A stand-in for an agent TUI: raw terminal, bracketed paste on, reads and discards.

    Appends ``<monotonic seconds> enter`` to ``<log_dir>/<name>.log`` for every CR (the Enter
    key; previews themselves carry no CR), where ``<name>`` follows ``--name`` in ``argv``.
    """
    name = argv[argv.index("--name") + 1] if "--name" in argv[:-1] else "agent"
    fd = sys.stdin.fileno()
    saved = termios.tcgetattr(fd)
    tty.setraw(fd, termios.TCSANOW)  # TCSANOW: keep input that arrived before this point
    os.write(sys.stdout.fileno(), b"\x1b[?2004h")
    if argv:  # show the spawn prompt, as an agent TUI does once it took it (readiness rule)
        os.write(sys.stdout.fileno(), argv[-1].encode()[:500] + b"\r\n")
    try:
        with (log_dir / f"{name}.log").open("a", encoding="ascii") as log:
            log.write(f"{time.monotonic():.6f} ready\n")
            log.flush()
            while True:
                data = os.read(fd, 65536)
                now = time.monotonic()
                if not data or b"\x03" in data:
                    return 0
                if b"\r" in data:
                    log.write(f"{now:.6f} enter\n" * data.count(b"\r"))
                    log.flush()
    finally:
        with suppress(termios.error, OSError):
            termios.tcsetattr(fd, termios.TCSANOW, saved)


def lock_probe(database: Path) -> int:
    """Try ``BEGIN IMMEDIATE`` (busy_timeout 0) every millisecond until stdin closes.

    Prints ``ready`` once the first attempt has run, then, at the end, one JSON object:
    ``stretches`` (``[first failed attempt, next successful attempt]`` in monotonic seconds),
    ``attempts`` and ``max_gap`` (the longest interval between two attempts).
    """
    conn = sqlite3.connect(database, timeout=0, isolation_level=None)
    conn.execute("PRAGMA busy_timeout=0")
    stretches: list[list[float]] = []
    failing_since: float | None = None
    attempts, last, max_gap = 0, time.monotonic(), 0.0
    announced = False
    while True:
        now = time.monotonic()
        max_gap = max(max_gap, now - last) if attempts else 0.0
        last = now
        attempts += 1
        try:
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("ROLLBACK")
            locked = False
        except sqlite3.OperationalError:
            locked = True
        if locked and failing_since is None:
            failing_since = now
        elif not locked and failing_since is not None:
            stretches.append([failing_since, now])
            failing_since = None
        if not announced:
            print("ready", flush=True)
            announced = True
        if select.select([sys.stdin], [], [], 0)[0] and not sys.stdin.readline():
            break
        time.sleep(0.001)
    if failing_since is not None:
        stretches.append([failing_since, time.monotonic()])
    conn.close()
    print(json.dumps({"stretches": stretches, "attempts": attempts, "max_gap": max_gap}))
    return 0


# ---------------------------------------------------------------- running things


def run(
    argv: Sequence[str | Path], env: Mapping[str, str], *, check: bool = True
) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [str(arg) for arg in argv],
        env=dict(env),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT,
        check=False,
    )
    if check and proc.returncode != 0:
        shown = shlex.join(str(arg) for arg in argv)
        raise BenchError(f"`{shown}` exited {proc.returncode}: {proc.stderr.strip()}")
    return proc


def wait_for(probe: Callable[[], bool], what: str, timeout: float = WAIT_TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while not probe():
        if time.monotonic() > deadline:
            raise BenchError(f"timed out waiting for {what}")
        time.sleep(0.005)


def interpreter_of(script: Path) -> Path:
    """The Python that runs a console script: its shebang, else the sibling ``python``."""
    first = script.read_bytes().split(b"\n", 1)[0].decode(errors="replace")
    if first.startswith("#!") and "python" in first:
        return Path(first[2:].split()[0])
    return script.parent / "python"


def scratch_env(where: Path, fake_bin: Path) -> dict[str, str]:
    """The caller's environment minus cafleet/tmux/Python settings, with a scratch HOME."""
    dropped = ("CAFLEET_", "PYTHON", "TMUX", "HERDR_", "XDG_", "VIRTUAL_ENV")
    env = {key: value for key, value in os.environ.items() if not key.startswith(dropped)}
    home = where / "home"
    (home / ".claude").mkdir(parents=True)  # upstream's `setup skill` looks for it
    runtime = where / "run"
    runtime.mkdir(mode=0o700)
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_DATA_HOME=str(home / ".local" / "share"),
        XDG_CACHE_HOME=str(home / ".cache"),
        XDG_RUNTIME_DIR=str(runtime),
        PYTHONPYCACHEPREFIX=str(where.parent / "pycache"),
        PATH=os.pathsep.join([str(fake_bin), env.get("PATH", "")]),
        # the fake claude has no hooks; its screen shows the prompt (ignored by upstream)
        CAFLEET_READY_RULES_CLAUDE="screen",
    )
    return env


def write_fake_claude(fake_bin: Path, log_dir: Path) -> None:
    """``claude`` on PATH: runs `fake_agent` under the process name ``claude``.

    tmux reports a pane's foreground command from argv[0], so both implementations' agent
    checks see ``claude`` (``exec -a`` needs bash).
    """
    bash = shutil.which("bash")
    if bash is None:
        raise BenchError("bash is needed for the fake claude executable")
    fake_bin.mkdir(parents=True, exist_ok=True)
    log_dir.mkdir(parents=True, exist_ok=True)
    target = [sys.executable, str(Path(__file__).resolve()), "fake-agent", str(log_dir)]
    script = fake_bin / "claude"
    script.write_text(f'#!{bash}\nexec -a claude {shlex.join(target)} "$@"\n')
    script.chmod(0o755)


# ---------------------------------------------------------------- fleets


@dataclass(frozen=True)
class Impl:
    label: str
    cafleet: Path
    python: Path


@dataclass
class FleetRun:
    """One fleet of one implementation inside its own private tmux server."""

    impl: Impl
    env: dict[str, str]
    database: Path
    log_dir: Path
    fleet_id: int = 0
    director: int = 0
    admin: int = 0
    gate: str = ""
    members: dict[str, tuple[int, str]] = field(default_factory=dict)

    def cli(self, *args: str, extra: Mapping[str, str] | None = None) -> str:
        return run([self.impl.cafleet, *args], {**self.env, **(extra or {})}).stdout

    def argv(self, *args: str) -> list[str]:
        return [str(self.impl.cafleet), *args]

    def create_member(
        self, name: str, agent_args: Sequence[str], extra: Mapping[str, str] | None = None
    ) -> tuple[int, str]:
        out = self.cli(
            *("member", "create", "--fleet-id", str(self.fleet_id)),
            *("--agent-id", str(self.director), "--name", name),
            *("--description", f"bench member {name}", *agent_args, "--text", "bench"),
            extra=extra,
        )
        match = MEMBER_LINE.search(out)
        if match is None:
            raise BenchError(f"{self.impl.label}: unexpected `member create` output: {out!r}")
        member = (int(match.group(1)), match.group(2))
        self.members[name] = member
        return member


def satisfy_skills_gate(fleet: FleetRun) -> str:
    """Get past a "run 'cafleet setup' first" refusal; return how it was done."""
    probe = run([fleet.impl.cafleet, "fleet", "list"], fleet.env, check=False)
    if probe.returncode == 0:
        return "no gate"
    if "skill" not in probe.stderr + probe.stdout:
        raise BenchError(f"{fleet.impl.label}: `fleet list` failed: {probe.stderr.strip()}")
    setup = run([fleet.impl.cafleet, "setup", "skill", "--agent", "claude"], fleet.env, check=False)
    if setup.returncode == 0:
        return "`setup skill --agent claude` (scratch HOME)"
    # `setup skill` downloads the skills from GitHub; without network access the row it
    # would record is written directly. The gate still runs its check on every command.
    version = fleet.cli("--version").strip().rsplit(" ", 1)[-1]
    now = datetime.datetime.now(datetime.UTC).isoformat()
    with sqlite3.connect(fleet.database) as conn:
        conn.execute(
            "INSERT OR REPLACE INTO skill_installs (coding_agent, cafleet_version, installed_at)"
            " VALUES (?, ?, ?)",
            ("claude", version, now),
        )
    conn.close()
    fleet.cli("fleet", "list")
    return "skills row recorded in its database (`setup skill` could not download)"


@contextmanager
def fleet_run(impl: Impl, scratch: Path, tag: str, fake_bin: Path) -> Iterator[FleetRun]:
    """Scratch HOME + database + private tmux server (always killed) + a fleet."""
    where = scratch / f"{impl.label}-{tag}"
    where.mkdir()
    env = scratch_env(where, fake_bin)
    tmux = ["tmux", "-L", f"cafleet-bench-{os.getpid()}-{secrets.token_hex(3)}", "-f", "/dev/null"]
    socket = ""
    try:
        run([*tmux, "new-session", "-d", "-s", "bench", "-x", "250", "-y", "100"], env)
        socket = run([*tmux, "display-message", "-p", "#{socket_path}"], env).stdout.strip()
        pane = run([*tmux, "display-message", "-p", "-t", "bench", "#{pane_id}"], env)
        database = where / "cafleet.db"
        env.update(
            CAFLEET_DATABASE_URL=f"sqlite:///{database}",
            TMUX=f"{socket},0,0",
            TMUX_PANE=pane.stdout.strip(),
        )
        fleet = FleetRun(impl, env, database, fake_bin.parent / "logs")
        fleet.cli("setup", "db")
        fleet.gate = satisfy_skills_gate(fleet)
        out = fleet.cli("fleet", "create", "--name", f"bench-{tag}")
        match = FLEET_LINE.search(out)
        if match is None:
            raise BenchError(f"{impl.label}: unexpected `fleet create` output: {out!r}")
        fleet.fleet_id, fleet.director, fleet.admin = (int(g) for g in match.groups())
        yield fleet
    finally:
        subprocess.run([*tmux, "kill-server"], capture_output=True, check=False)
        if socket:
            Path(socket).unlink(missing_ok=True)


def fake_log(fleet: FleetRun, name: str) -> Path:
    return fleet.log_dir / f"{name}.log"


def enter_times(path: Path) -> list[float]:
    if not path.exists():
        return []
    return [
        float(line.split()[0])
        for line in path.read_text(encoding="ascii").splitlines()
        if line.endswith(" enter")
    ]


def wait_ready(path: Path) -> None:
    wait_for(lambda: path.exists() and "ready" in path.read_text(), f"{path.stem} to start")


# ---------------------------------------------------------------- (a) push latency


@dataclass
class LatencyCase:
    label: str
    delay: str
    fleet: FleetRun
    recipient: str  # member name
    demo: bool  # the demo agent (log polling) or the fake claude (agent timestamps)
    extra: dict[str, str]
    latency_ms: list[float] = field(default_factory=list)
    wall_ms: list[float] = field(default_factory=list)

    def measure(self, index: int) -> tuple[float, float]:
        fleet = self.fleet
        agent_id, _ = fleet.members[self.recipient]
        argv = fleet.argv(
            *("message", "send", "--fleet-id", str(fleet.fleet_id)),
            *("--agent-id", str(fleet.director), "--to", str(agent_id)),
            *("--text", f"bench push {index}: please report progress"),
        )
        env = {**fleet.env, **self.extra}
        if self.demo:
            return self._demo(argv, env)
        return self._fake(argv, env)

    def _demo(self, argv: list[str], env: dict[str, str]) -> tuple[float, float]:
        log = self.fleet.log_dir / f"{self.recipient}.jsonl"
        with log.open("rb") as handle:
            handle.seek(0, os.SEEK_END)
            acks = log.read_text(encoding="utf-8").count('"event":"ack"')
            seen = b""
            start = time.monotonic()
            proc = subprocess.Popen(
                argv,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            submitted: float | None = None
            exited: float | None = None
            while submitted is None or exited is None:
                now = time.monotonic()
                if submitted is None:
                    seen += handle.read()
                    if b'"event":"submit"' in seen:
                        submitted = now
                if exited is None and proc.poll() is not None:
                    exited = now
                if now - start > WAIT_TIMEOUT:
                    proc.kill()
                    raise BenchError(f"{self.label}: no submit logged within {WAIT_TIMEOUT}s")
                time.sleep(0.001)
        _, err = proc.communicate()
        if proc.returncode != 0:
            raise BenchError(f"{self.label}: message send exited {proc.returncode}: {err}")
        # Let the agent finish its poll and ACK, so that the next send finds it idle.
        wait_for(
            lambda: log.read_text(encoding="utf-8").count('"event":"ack"') > acks,
            f"{self.recipient} to acknowledge",
        )
        time.sleep(0.2)
        return (submitted - start) * 1000.0, (exited - start) * 1000.0

    def _fake(self, argv: list[str], env: dict[str, str]) -> tuple[float, float]:
        log = fake_log(self.fleet, self.recipient)
        start = time.monotonic()
        proc = subprocess.run(
            argv, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, check=False
        )
        exited = time.monotonic()
        if proc.returncode != 0:
            raise BenchError(f"{self.label}: message send exited {proc.returncode}: {proc.stderr}")
        wait_for(lambda: any(t > start for t in enter_times(log)), f"{self.recipient}'s Enter")
        time.sleep(0.1)  # any later Enter of the same push would be in by now
        last = max(t for t in enter_times(log) if t > start)
        time.sleep(0.1)
        self._take_in(proc.stdout)
        return (last - start) * 1000.0, (exited - start) * 1000.0

    def _take_in(self, sent: str) -> None:
        """Acknowledge the message as the agent would (untimed): the fake never polls, and
        ours would let the next message join an announcement not yet taken in instead of
        typing it."""
        found = TASK_LINE.search(sent)
        if found is None:
            raise BenchError(f"{self.label}: no task id in the send's output: {sent!r}")
        agent_id, _ = self.fleet.members[self.recipient]
        self.fleet.cli(
            *("message", "ack", "--fleet-id", str(self.fleet.fleet_id)),
            *("--agent-id", str(agent_id), "--task-id", found.group(1)),
        )


# ---------------------------------------------------------------- (b) broadcast lock hold


@dataclass
class BroadcastCase:
    label: str
    delay: str
    fleet: FleetRun
    extra: dict[str, str]
    wall_ms: list[float] = field(default_factory=list)
    longest_ms: list[float] = field(default_factory=list)
    total_ms: list[float] = field(default_factory=list)
    delivered: list[int] = field(default_factory=list)
    recipients: list[int] = field(default_factory=list)
    panes_entered: list[int] = field(default_factory=list)
    probe_gap_ms: list[float] = field(default_factory=list)
    stretches: list[list[tuple[float, float]]] = field(default_factory=list)

    def measure(self, index: int, keep: bool) -> None:
        """One broadcast; its figures are recorded when `keep` (not a warm-up)."""
        fleet = self.fleet
        probe = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "lock-probe", str(fleet.database)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert probe.stdin is not None and probe.stdout is not None
        if probe.stdout.readline().strip() != "ready":
            raise BenchError("the lock probe did not start")
        time.sleep(0.05)
        argv = fleet.argv(
            *("message", "broadcast", "--fleet-id", str(fleet.fleet_id)),
            *("--agent-id", str(fleet.director), "--text", f"bench broadcast {index}"),
        )
        start = time.monotonic()
        done = subprocess.run(
            argv,
            env={**fleet.env, **self.extra},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            check=False,
        )
        end = time.monotonic()
        time.sleep(0.05)
        probe.stdin.close()
        report = json.loads(probe.stdout.read())
        probe.wait()
        if done.returncode != 0:
            raise BenchError(f"{self.label}: broadcast exited {done.returncode}: {done.stderr}")
        match = BROADCAST_LINE.search(done.stdout)
        if match is None:
            raise BenchError(f"{self.label}: unexpected broadcast output: {done.stdout!r}")
        inside = [
            (max(a, start), min(b, end)) for a, b in report["stretches"] if b >= start and a <= end
        ]
        logs = [fake_log(fleet, name) for name in fleet.members]
        time.sleep(0.3)
        entered = sum(1 for log in logs if any(start < t < end + 1 for t in enter_times(log)))
        time.sleep(0.5)
        for agent_id, task in RECIPIENT_LINE.findall(done.stdout):  # ours lists them
            fleet.cli(  # taken in, as the agents would: the next broadcast is typed again
                *("message", "ack", "--fleet-id", str(fleet.fleet_id)),
                *("--agent-id", agent_id, "--task-id", task),
            )
        if not keep:
            return
        self.wall_ms.append((end - start) * 1000.0)
        self.longest_ms.append(max((b - a for a, b in inside), default=0.0) * 1000.0)
        self.total_ms.append(sum(b - a for a, b in inside) * 1000.0)
        self.stretches.append([((a - start) * 1000.0, (b - a) * 1000.0) for a, b in inside])
        self.recipients.append(int(match.group(1)))
        self.delivered.append(int(match.group(2)))
        self.probe_gap_ms.append(report["max_gap"] * 1000.0)
        self.panes_entered.append(entered)


# ---------------------------------------------------------------- reporting


def p95(values: Sequence[float]) -> float:
    if len(values) < 2:
        return values[0]
    return statistics.quantiles(values, n=20, method="inclusive")[18]


def ms(value: float) -> str:
    return f"{value:.0f}"


def latency_table(cases: Sequence[LatencyCase]) -> str:
    lines = [
        "| Sender → recipient pane | submit delay | send → submit median ms | p95 ms"
        " | send process wall median ms | p95 ms |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for case in cases:
        lines.append(
            f"| {case.label} | {case.delay} | {ms(statistics.median(case.latency_ms))}"
            f" | {ms(p95(case.latency_ms))} | {ms(statistics.median(case.wall_ms))}"
            f" | {ms(p95(case.wall_ms))} |"
        )
    return "\n".join(lines)


def broadcast_table(cases: Sequence[BroadcastCase]) -> str:
    lines = [
        "| Implementation | submit delay | broadcast wall median ms | max ms"
        " | write lock held, longest stretch: median ms | max ms | locked in total: median ms"
        " | lock stretches per broadcast | delivered | panes that got the Enter |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for case in cases:
        counts = [len(found) for found in case.stretches]
        lines.append(
            f"| {case.label} | {case.delay} | {ms(statistics.median(case.wall_ms))}"
            f" | {ms(max(case.wall_ms))} | {statistics.median(case.longest_ms):.1f}"
            f" | {max(case.longest_ms):.1f} | {statistics.median(case.total_ms):.1f}"
            f" | {span(counts)} | {span(case.delivered)} of {max(case.recipients)}"
            f" | {span(case.panes_entered)} |"
        )
    gap = max(g for case in cases for g in case.probe_gap_ms)
    lines += [
        "",
        f"Probe resolution: the longest interval between two probe attempts was {gap:.1f} ms.",
    ]
    return "\n".join(lines)


def span(values: Sequence[int]) -> str:
    low, high = min(values), max(values)
    return str(low) if low == high else f"{low}–{high}"


def ratio(ours: float, upstream: float) -> str:
    return f"{ours / upstream:.2f}×" if upstream > 0 else "n/a"


def comparison_lines(
    latency: Sequence[LatencyCase], broadcasts: Sequence[BroadcastCase]
) -> list[str]:
    by_label = {c.label: c for c in latency}
    lines = []
    ours = by_label.get(f"ours → fake `claude` (delay set to {UPSTREAM_SUBMIT_DELAY} s)")
    upstream = by_label.get("upstream → fake `claude`")
    if ours and upstream:
        lines.append(
            "- Push latency at the same submit delay (ours / upstream, medians): send → submit "
            f"{ratio(statistics.median(ours.latency_ms), statistics.median(upstream.latency_ms))}"
            ", send process wall "
            f"{ratio(statistics.median(ours.wall_ms), statistics.median(upstream.wall_ms))}"
        )
    b_ours = [c for c in broadcasts if c.label.startswith("ours")]
    b_up = [c for c in broadcasts if c.label.startswith("upstream")]
    if b_ours and b_up:
        up = b_up[0]
        for case in b_ours:
            lines.append(
                f"- Broadcast, ours at {case.delay} / upstream (medians): wall "
                f"{ratio(statistics.median(case.wall_ms), statistics.median(up.wall_ms))}, "
                "longest write-lock stretch "
                f"{ratio(statistics.median(case.longest_ms), statistics.median(up.longest_ms))}"
            )
    return lines


def cpu_model() -> str:
    with suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown CPU"


def machine_lines(runs: Sequence[FleetRun], load_at_start: float) -> list[str]:
    tmux = run(["tmux", "-V"], os.environ).stdout.strip()
    lines = [
        f"- Date: {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC",
        f"- Machine: {platform.system()} {platform.release()} ({platform.machine()}), nproc "
        f"{len(os.sched_getaffinity(0))}, {cpu_model()}; {tmux}; SQLite "
        f"{sqlite3.sqlite_version} (probe's Python); 1-minute load average "
        f"{load_at_start:.1f} at the start, {os.getloadavg()[0]:.1f} at the end",
    ]
    seen = set()
    for fleet in runs:
        if fleet.impl.label in seen:
            continue
        seen.add(fleet.impl.label)
        version = fleet.cli("--version").strip()
        python = run(
            [fleet.impl.python, "-c", "import platform; print(platform.python_version())"],
            fleet.env,
        )
        lines.append(
            f"- {fleet.impl.label}: {version} on Python {python.stdout.strip()};"
            f" skills gate: {fleet.gate}"
        )
    return lines


def reproduce_command(args: argparse.Namespace) -> str:
    parts = ["python3", "bench/push_latency.py"]
    if args.upstream_cafleet:
        parts += ["--upstream-cafleet", "<path-to-upstream-cafleet>"]
    parts += ["--sends", str(args.sends), "--warmup", str(args.warmup)]
    parts += ["--members", str(args.members), "--broadcasts", str(args.broadcasts), "--write"]
    return " ".join(parts)


def render(
    args: argparse.Namespace,
    machine: Sequence[str],
    latency: Sequence[LatencyCase],
    broadcasts: Sequence[BroadcastCase],
) -> str:
    upstream_note = (
        f"upstream cafleet {UPSTREAM_VERSION} measured in the same run"
        if args.upstream_cafleet
        else "upstream not measured in this run (no --upstream-cafleet given)"
    )
    return "\n".join(
        [
            "### Results",
            "",
            *machine,
            f"- (a) {args.sends} timed sends per row after {args.warmup} warm-up sends, rows "
            "interleaved send by send; (b) "
            f"{args.broadcasts} broadcasts per row to {args.members} members, rows interleaved;"
            f" {upstream_note}",
            "",
            "**(a) Push latency** (Director → one member; `send → submit` ends when the",
            "recipient program reads the Enter):",
            "",
            latency_table(latency),
            "",
            f"**(b) Broadcast to {args.members} live panes** (Director → every member; each",
            "member pane runs the fake `claude`):",
            "",
            broadcast_table(broadcasts),
            "",
            *comparison_lines(latency, broadcasts),
            "",
            *reproduce_lines(reproduce_command(args)),
        ]
    )


SECTION_INTRO = """## Push latency and broadcast lock hold

Script: [`bench/push_latency.py`](../bench/push_latency.py) (standard library only). Each
implementation runs in its own private tmux server (250x100) with a scratch `HOME`, a scratch
`XDG_RUNTIME_DIR` and its own SQLite file; the caller's `CAFLEET_*`, `TMUX*`, `XDG_*` and
`PYTHON*` variables are dropped. The servers are killed at the end, whatever happens.

**Recipients.** Upstream 0.17.1 can only spawn `claude`, `codex` or `opencode` members, so a
fake `claude` is put first on `PATH` for both implementations: a bash wrapper that
`exec -a claude`s a tiny raw-mode reader (part of the script) which enables bracketed paste,
discards its input and logs the monotonic time of every CR it reads (the Enter key; previews
carry no CR). tmux names a pane's foreground command after argv[0], so both implementations'
pane checks see `claude`. Ours additionally pushes into the built-in demo agent (a `custom`
member); its `CAFLEET_DEMO_LOG` lines carry no timestamp, so the script polls the log every
millisecond and takes the time at which the new `submit` line shows up. Upstream's skills gate
is satisfied as in the CLI-latency section.

**(a) Push latency.** Director → one member. `time.monotonic()` is taken, then
`cafleet message send` is started; the latency ends when the recipient program reads the
submitting Enter, and the send process's own wall time is shown next to it. Ours uses the
recipient's per-backend submit delay: `CAFLEET_SUBMIT_DELAY_CUSTOM` (default 0.2 s, also 0)
for the demo agent, `CAFLEET_SUBMIT_DELAY_CLAUDE` for the fake `claude` (default 0.05 s, and
0.12 s, upstream's fixed pause, for the like-for-like row; the fake echoes nothing, so the
look at its composer after Enter never presses Enter again). The demo agent polls and
acknowledges every preview, so the script waits for that ACK before the next push. Expected
shape: process start-up + one short transaction + the pane check (foreground and, for claude,
a screen read for dialogs) + the paste + the submit delay + the same check + Enter (ours; no
Esc); upstream types Esc, a 0.1 s pause, the paste, its pause and Enter from inside its write
transaction. The fake `claude` prints its spawn prompt, so our members start by the `screen`
rule (`CAFLEET_READY_RULES_CLAUDE=screen`: the fake has no hooks).

**(b) Broadcast.** `cafleet message broadcast` from the Director to N members whose panes run
the fake `claude`. A probe process opens the same database file and tries
`BEGIN IMMEDIATE` + `ROLLBACK` with `busy_timeout=0` every millisecond; a stretch starts at
the first attempt that fails and ends at the next one that succeeds, so its resolution is the
probe's interval (printed with the results; a loaded machine stretches it) and a stretch
shorter than that can go unseen. Nothing else writes during a broadcast, so the stretches are
the broadcast's own write transactions: ours stores the messages in one transaction, commits,
types all previews together (one submit delay for all), then records the outcomes in short
transactions of their own;
upstream types every preview, one after the other, inside its single write transaction.
"delivered" is the command's own count; "panes that got the Enter" comes from the fake
agents' logs. The fake `claude` never polls, so after each push and each broadcast the script
acknowledges the messages as the members would (untimed): otherwise ours would let the next
message join the announcement the agent has not taken in yet rather than type it again.

**Caveat.** The machine is shared: absolute milliseconds include whatever else it was doing
(the load average is printed). Rows are interleaved send by send (broadcast by broadcast) so
that such noise falls on all of them alike; compare rows of the same run, not runs.
"""


def write_section(docs: Path, body: str) -> None:
    """Replace this benchmark's marked section (appended at the end when absent)."""
    section = f"{START_MARK}\n{SECTION_INTRO}\n{body}\n{END_MARK}"
    replace_marked(docs, START_MARK, END_MARK, section, "# Benchmarks\n\n")


# ---------------------------------------------------------------- main


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--ours", type=Path, default=DEFAULT_OURS, help="our cafleet executable")
    parser.add_argument(
        "--upstream-cafleet",
        type=Path,
        default=os.environ.get("CAFLEET_UPSTREAM") or None,
        help=f"upstream cafleet {UPSTREAM_VERSION} executable (env CAFLEET_UPSTREAM)",
    )
    parser.add_argument("--sends", type=int, default=20, help="timed sends per row (20)")
    parser.add_argument("--warmup", type=int, default=2, help="untimed sends per row first (2)")
    parser.add_argument("--members", type=int, default=20, help="broadcast recipients (20)")
    parser.add_argument("--broadcasts", type=int, default=5, help="broadcasts per row (5)")
    parser.add_argument("--write", action="store_true", help="update the marked docs section")
    parser.add_argument("--docs", type=Path, default=DEFAULT_DOCS, help="the file --write edits")
    parser.add_argument("--raw-json", type=Path, help="also dump every sample here as JSON")
    args = parser.parse_args(argv)
    if args.sends < 2 or args.warmup < 0 or args.members < 1 or args.broadcasts < 1:
        parser.error("--sends >= 2, --warmup >= 0, --members >= 1, --broadcasts >= 1")
    return args


def build_impls(args: argparse.Namespace) -> list[Impl]:
    impls = []
    for label, given in (("ours", args.ours), ("upstream", args.upstream_cafleet)):
        if given is None:
            continue
        executable = Path(given).absolute()
        if not executable.is_file():
            raise BenchError(f"{label}: no executable at {executable}")
        impls.append(Impl(label, executable, interpreter_of(executable)))
    return impls


def interleave(cases: Sequence[LatencyCase | BroadcastCase], rounds: int, warmup: int) -> None:
    for index in range(warmup + rounds):
        order = list(cases) if index % 2 == 0 else list(reversed(cases))
        for case in order:
            if isinstance(case, LatencyCase):
                latency, wall = case.measure(index)
                if index >= warmup:
                    case.latency_ms.append(latency)
                    case.wall_ms.append(wall)
            else:
                case.measure(index, keep=index >= warmup)
        phase = "warm-up" if index < warmup else "round"
        print(f"  {phase} {index + 1 if index < warmup else index - warmup + 1}", file=sys.stderr)


def measure_latency(
    impls: Sequence[Impl], args: argparse.Namespace, scratch: Path, fake_bin: Path
) -> tuple[list[LatencyCase], list[FleetRun]]:
    cases: list[LatencyCase] = []
    runs: list[FleetRun] = []
    with _fleets(impls, scratch, "latency", fake_bin) as fleets:
        for fleet in fleets:
            runs.append(fleet)
            name = f"{fleet.impl.label}-fake"
            fleet.create_member(name, ["--coding-agent", "claude"])
            wait_ready(fake_log(fleet, name))
            if fleet.impl.label == "ours":
                demo = "ours-demo"
                command = shlex.join([str(fleet.impl.python), "-m", "cafleet.demo.agent"])
                log = fleet.log_dir / f"{demo}.jsonl"
                fleet.create_member(
                    demo,
                    ["--coding-agent", "custom", "--agent-command", command],
                    extra={"CAFLEET_DEMO_LOG": str(log)},
                )
                wait_ready(log)
                for delay, note in (("0.2", " (default)"), ("0", "")):
                    cases.append(
                        LatencyCase(
                            "ours → demo agent (`custom`)",
                            f"{delay} s{note}",
                            fleet,
                            demo,
                            True,
                            {"CAFLEET_SUBMIT_DELAY_CUSTOM": delay},
                        )
                    )
                for delay, label, note in (
                    (UPSTREAM_SUBMIT_DELAY, f"(delay set to {UPSTREAM_SUBMIT_DELAY} s)", ""),
                    (OUR_CLAUDE_DELAY, "(default delay)", " (default)"),
                ):
                    cases.append(
                        LatencyCase(
                            f"ours → fake `claude` {label}",
                            f"{delay} s{note}",
                            fleet,
                            name,
                            False,
                            {"CAFLEET_SUBMIT_DELAY_CLAUDE": delay},
                        )
                    )
            else:
                cases.append(
                    LatencyCase(
                        "upstream → fake `claude`",
                        f"{UPSTREAM_SUBMIT_DELAY} s (fixed)",
                        fleet,
                        name,
                        False,
                        {},
                    )
                )
        print("measuring push latency ...", file=sys.stderr)
        interleave(cases, args.sends, args.warmup)
    return cases, runs


def measure_broadcast(
    impls: Sequence[Impl], args: argparse.Namespace, scratch: Path, fake_bin: Path
) -> list[BroadcastCase]:
    cases: list[BroadcastCase] = []
    with _fleets(impls, scratch, "broadcast", fake_bin) as fleets:
        for fleet in fleets:
            print(f"spawning {args.members} members for {fleet.impl.label} ...", file=sys.stderr)
            for n in range(args.members):
                name = f"{fleet.impl.label}-b{n:02d}"
                fleet.create_member(name, ["--coding-agent", "claude"])
            for name in fleet.members:
                wait_ready(fake_log(fleet, name))
            if fleet.impl.label == "ours":
                for delay, note in ((OUR_CLAUDE_DELAY, " (default)"), (UPSTREAM_SUBMIT_DELAY, "")):
                    cases.append(
                        BroadcastCase(
                            f"ours, `claude` delay {delay} s",
                            f"{delay} s{note}",
                            fleet,
                            {"CAFLEET_SUBMIT_DELAY_CLAUDE": delay},
                        )
                    )
            else:
                cases.append(
                    BroadcastCase(
                        f"upstream {UPSTREAM_VERSION}",
                        f"{UPSTREAM_SUBMIT_DELAY} s (fixed)",
                        fleet,
                        {},
                    )
                )
        print("measuring broadcasts ...", file=sys.stderr)
        interleave(cases, args.broadcasts, 1)
    return cases


@contextmanager
def _fleets(
    impls: Sequence[Impl], scratch: Path, tag: str, fake_bin: Path
) -> Iterator[list[FleetRun]]:
    with fleet_run(impls[0], scratch, tag, fake_bin) as first:
        if len(impls) == 1:
            yield [first]
            return
        with fleet_run(impls[1], scratch, tag, fake_bin) as second:
            yield [first, second]


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["fake-agent"]:
        return fake_agent(Path(argv[1]), argv[2:])
    if argv[:1] == ["lock-probe"]:
        return lock_probe(Path(argv[1]))
    args = parse_args(argv)
    load_at_start = os.getloadavg()[0]
    try:
        impls = build_impls(args)
        with tempfile.TemporaryDirectory(prefix="cafleet-push-bench-") as tmp:
            scratch = Path(tmp)
            fake_bin = scratch / "fake" / "bin"
            write_fake_claude(fake_bin, scratch / "fake" / "logs")
            latency, runs = measure_latency(impls, args, scratch, fake_bin)
            broadcasts = measure_broadcast(impls, args, scratch, fake_bin)
            machine = machine_lines(runs, load_at_start)
    except BenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    body = render(args, machine, latency, broadcasts)
    print(body)
    if args.raw_json:
        args.raw_json.parent.mkdir(parents=True, exist_ok=True)
        raw = {
            "latency": {
                f"{c.label} {c.delay}": {"send_to_submit_ms": c.latency_ms, "wall_ms": c.wall_ms}
                for c in latency
            },
            "broadcast": {
                f"{c.label} {c.delay}": {
                    "wall_ms": c.wall_ms,
                    "longest_ms": c.longest_ms,
                    "stretches_offset_and_ms": c.stretches,
                    "probe_max_gap_ms": c.probe_gap_ms,
                }
                for c in broadcasts
            },
        }
        args.raw_json.write_text(json.dumps(raw, indent=2) + "\n")
    if args.write:
        write_section(args.docs, body)
        print(f"updated {args.docs}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

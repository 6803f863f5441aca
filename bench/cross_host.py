"""Send → delivered across hosts: two simulated hosts on one PostgreSQL store, next to the
same-host push of ours and of upstream 0.17.1, measured in the same run.

Across hosts: the two-host harness of the tests (tests/support/two_hosts.py) on a private
PostgreSQL server (tests/support/postgres.py): host A with the Director's pane and its relay,
host B with its relay and one demo-agent member, each host a private tmux server and its own
CAFLEET_HOST. The Director on A sends with ``cafleet message send``; B's relay types the
preview into the member's pane. The latency runs from just before the send process starts to
the moment the member's CAFLEET_DEMO_LOG shows the ``submit`` carrying the send's text
(polled every millisecond). Next to it, in the same run and interleaved send by send: a
member beside the Director on A (same store, no relay in between), and the same-host rows of
bench/push_latency.py on SQLite (ours into the demo agent and into its fake ``claude``,
upstream into the fake ``claude``; upstream has no cross-host mode).

Usage (from the repository root, with this repository's virtualenv: the hosts run the
``cafleet`` and ``cafleet-demo-agent`` installed beside the interpreter)::

    .venv/bin/python bench/cross_host.py [--upstream-cafleet PATH | --upstream-python PATH]
                                         [--sends 30] [--warmup 3] [--write]

Nothing here asserts on timings: it measures and reports. Every server (PostgreSQL, the tmux
servers) and every relay is stopped however the script ends.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import secrets
import shlex
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any, BinaryIO, Protocol

import cli_latency
import push_latency as push
from docs_section import replace_marked, reproduce_lines

sys.path.insert(0, str(push.REPO_ROOT / "tests"))
from support.postgres import PostgresError, PostgresServer, find_bindir
from support.tmux import tmux_binary
from support.two_hosts import BIN, CAFLEET, SUBMIT_DELAY, TwoHosts, log_events, two_hosts

START_MARK = "<!-- cross-host:start -->"
END_MARK = "<!-- cross-host:end -->"
TASK = re.compile(r"\[cafleet msg (\d+) from \d+ ")
WAIT_TIMEOUT = 60.0
MAX_LOST = 3  # sends never submitted before the script gives up
SETTLE = 3.0  # seconds (three relay rounds at --poll 1) before the deliveries are checked


class Case(Protocol):
    label: str
    latency_ms: list[float]
    wall_ms: list[float]

    def measure(self, index: int) -> tuple[float, float]: ...


@dataclass
class Row:
    """One line of the results table: a case and how it is described."""

    case: Case
    path: str
    store: str
    recipient: str


# ---------------------------------------------------------------- sends on the PostgreSQL store


class LogReader:
    """The events appended to a demo agent's JSON-lines log after it was opened."""

    def __init__(self, handle: BinaryIO) -> None:
        self._handle = handle
        self._partial = b""

    def new_events(self) -> list[dict[str, Any]]:
        data = self._partial + self._handle.read()
        *lines, self._partial = data.split(b"\n")
        events = []
        for line in lines:
            try:
                events.append(json.loads(line))
            except ValueError:
                continue
        return events


@dataclass
class StoreCase:
    """The Director on A sends to one demo-agent member (on B or on A) whose agent logs to
    `log`. Each text is unique; the send ends at the member's `submit` of that text, and the
    next send waits for the member's ACK of it (its poll and ack run on its own host)."""

    label: str
    tag: str
    hosts: TwoHosts
    member: int
    log: Path
    latency_ms: list[float] = field(default_factory=list)
    wall_ms: list[float] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)  # every text sent, warm-ups too
    lost: list[str] = field(default_factory=list)

    def measure(self, index: int) -> tuple[float, float]:
        hosts = self.hosts
        text = f"bench note {index} {self.tag}-{secrets.token_hex(4)}"
        self.texts.append(text)
        argv = [
            *CAFLEET, "message", "send", "--fleet-id", str(hosts.fleet_id),
            "--agent-id", str(hosts.director), "--to", str(self.member), "--text", text,
        ]  # fmt: skip
        with self.log.open("rb") as handle:
            handle.seek(0, os.SEEK_END)
            reader = LogReader(handle)
            start = time.monotonic()
            proc = subprocess.Popen(
                argv,
                env=hosts.a.env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            submitted: float | None = None
            exited: float | None = None
            task = 0
            later: list[dict[str, Any]] = []  # what the member logged after the submit
            while submitted is None or exited is None:
                now = time.monotonic()
                if submitted is None:
                    for event in reader.new_events():
                        if submitted is not None:
                            later.append(event)
                        elif event.get("event") == "submit" and text in event.get("text", ""):
                            submitted = now
                            found = TASK.search(event["text"])
                            if found is None:
                                raise push.BenchError(f"no preview header: {event['text']!r}")
                            task = int(found.group(1))
                if exited is None and proc.poll() is not None:
                    exited = now
                if now - start > WAIT_TIMEOUT:
                    return self._lose(text, proc)
                time.sleep(0.001)
            _, err = proc.communicate()
            if proc.returncode != 0:
                raise push.BenchError(f"{self.label}: message send exited {proc.returncode}: {err}")
            # Its poll and ACK run CLI processes on the member's host: let them finish, so
            # that the next send finds the member idle.
            deadline = time.monotonic() + WAIT_TIMEOUT
            while not any(e.get("event") == "ack" and e.get("task_id") == task for e in later):
                later = reader.new_events()
                if time.monotonic() > deadline:
                    raise push.BenchError(f"{self.label}: task {task} was never acknowledged")
                time.sleep(0.005)
        time.sleep(0.2)
        return (submitted - start) * 1000.0, (exited - start) * 1000.0

    def _lose(self, text: str, proc: subprocess.Popen[str]) -> tuple[float, float]:
        proc.kill()
        proc.communicate()
        self.lost.append(text)
        print(f"  {self.label}: {text!r} not submitted within {WAIT_TIMEOUT:.0f}s", file=sys.stderr)
        if len(self.lost) >= MAX_LOST:
            raise push.BenchError(f"{self.label}: {len(self.lost)} sends never submitted")
        return float("nan"), float("nan")

    def submits_per_text(self) -> Counter[str]:
        """How often each text sent reached the member's composer, over the whole run."""
        counts: Counter[str] = Counter(dict.fromkeys(self.texts, 0))
        for event in log_events(self.log):
            if event.get("event") != "submit":
                continue
            for text in self.texts:
                if text in event.get("text", ""):
                    counts[text] += 1
        return counts

    def delivery_states(self) -> Counter[str]:
        rows = self.hosts.rows(
            "SELECT d.state FROM deliveries d WHERE d.recipient_agent_id = :member",
            member=self.member,
        )
        return Counter(str(row[0]) for row in rows)


def wait_ready(log: Path, what: str) -> None:
    push.wait_for(
        lambda: log.exists() and any(e.get("event") == "ready" for e in log_events(log)),
        what,
    )


# ---------------------------------------------------------------- the same-host rows (SQLite)


def same_host_cases(
    stack: ExitStack, impls: Sequence[push.Impl], scratch: Path, fake_bin: Path
) -> tuple[list[Row], list[push.FleetRun]]:
    """bench/push_latency.py's fleets and cases: ours into the demo agent at the cross-host
    rows' submit delay and into the fake `claude` at upstream's pause, upstream into the
    fake `claude`."""
    rows: list[Row] = []
    runs: list[push.FleetRun] = []
    for impl in impls:
        fleet = stack.enter_context(push.fleet_run(impl, scratch, "same-host", fake_bin))
        runs.append(fleet)
        fake = f"{impl.label}-fake"
        fleet.create_member(fake, ["--coding-agent", "claude"])
        push.wait_ready(push.fake_log(fleet, fake))
        store = f"{impl.label}, SQLite"
        if impl.label == "ours":
            demo = "ours-demo"
            log = fleet.log_dir / f"{demo}.jsonl"
            command = shlex.join([str(impl.python), "-m", "cafleet.demo.agent"])
            fleet.create_member(
                demo,
                ["--coding-agent", "custom", "--agent-command", command],
                extra={"CAFLEET_DEMO_LOG": str(log)},
            )
            push.wait_ready(log)
            delay = {"CAFLEET_SUBMIT_DELAY_CUSTOM": SUBMIT_DELAY}
            case = push.LatencyCase("ours same host → demo agent", "", fleet, demo, True, delay)
            rows.append(Row(case, "same host", store, f"demo agent ({SUBMIT_DELAY} s)"))
            delay = {"CAFLEET_SUBMIT_DELAY_CLAUDE": push.UPSTREAM_SUBMIT_DELAY}
            case = push.LatencyCase("ours same host → fake claude", "", fleet, fake, False, delay)
            recipient = f"fake `claude` ({push.UPSTREAM_SUBMIT_DELAY} s, set)"
            rows.append(Row(case, "same host", store, recipient))
        else:
            case = push.LatencyCase("upstream same host → fake claude", "", fleet, fake, False, {})
            recipient = f"fake `claude` ({push.UPSTREAM_SUBMIT_DELAY} s, fixed)"
            rows.append(
                Row(case, "same host", f"upstream {push.UPSTREAM_VERSION}, SQLite", recipient)
            )
    return rows, runs


# ---------------------------------------------------------------- measuring


def interleave(rows: Sequence[Row], sends: int, warmup: int) -> None:
    for index in range(warmup + sends):
        order = list(rows) if index % 2 == 0 else list(reversed(rows))
        for row in order:
            latency, wall = row.case.measure(index)
            if index >= warmup and not math.isnan(latency):  # NaN: lost, reported apart
                row.case.latency_ms.append(latency)
                row.case.wall_ms.append(wall)
        phase = "warm-up" if index < warmup else "round"
        number = index + 1 if index < warmup else index - warmup + 1
        print(f"  {phase} {number} done", file=sys.stderr)


@dataclass
class Report:
    rows: list[Row]
    store_cases: list[StoreCase]
    machine: list[str]
    postgres: str
    checks: list[str]


def benchmark(args: argparse.Namespace, scratch: Path) -> Report:
    tmux = tmux_binary()
    if tmux is None:
        raise push.BenchError("tmux is not on PATH")
    bindir = find_bindir()
    if bindir is None:
        raise push.BenchError(
            "PostgreSQL's server programs (initdb, pg_ctl, postgres, psql) are not installed"
        )
    load_at_start = os.getloadavg()[0]
    impls = build_impls(args, scratch)
    fake_bin = scratch / "fake" / "bin"
    push.write_fake_claude(fake_bin, scratch / "fake" / "logs")
    with ExitStack() as stack:
        server = stack.enter_context(PostgresServer(bindir=bindir))
        url = server.create_database("cross_host")
        postgres = server.psql("SHOW server_version")
        hosts_dir = scratch / "hosts"
        hosts_dir.mkdir()
        print("starting host A and host B ...", file=sys.stderr)
        hosts = stack.enter_context(two_hosts(hosts_dir, url, tmux))
        on_b = hosts.spawn_on_b("far")
        wait_ready(hosts.members_log, "the member on B")
        on_a = hosts.spawn_on_a("near")
        wait_ready(hosts.a_members_log, "the member on A")
        across = StoreCase("across hosts", "xh", hosts, on_b, hosts.members_log)
        near = StoreCase("same host, PostgreSQL", "sh", hosts, on_a, hosts.a_members_log)
        recipient = f"demo agent ({SUBMIT_DELAY} s)"
        rows = [
            Row(across, "A → B (B's relay types)", "ours, PostgreSQL", recipient),
            Row(near, "same host (A → A)", "ours, PostgreSQL", recipient),
        ]
        same, runs = same_host_cases(stack, impls, scratch, fake_bin)
        rows += same
        print(f"measuring {args.sends} sends per row ...", file=sys.stderr)
        interleave(rows, args.sends, args.warmup)
        time.sleep(SETTLE)  # a late second delivery would show up meanwhile
        checks = delivery_checks([across, near])
        machine = [
            line.replace("(probe's Python)", "(ours' Python)")
            for line in push.machine_lines(runs, load_at_start)
        ]
    return Report(rows, [across, near], machine, postgres, checks)


def delivery_checks(cases: Sequence[StoreCase]) -> list[str]:
    lines = []
    for case in cases:
        counts = case.submits_per_text()
        once = sum(1 for n in counts.values() if n == 1)
        doubled = {text: n for text, n in counts.items() if n > 1}
        never = [text for text, n in counts.items() if n == 0]
        states = ", ".join(f"{state} {n}" for state, n in sorted(case.delivery_states().items()))
        lines.append(
            f"- {case.label}: {once} of {len(counts)} sends (warm-ups included) submitted"
            f" once, {len(doubled)} more than once, {len(never)} never; deliveries in the"
            f" store: {states}"
        )
        for text, n in doubled.items():
            print(f"  {case.label}: {text!r} submitted {n} times", file=sys.stderr)
        for text in never:
            print(f"  {case.label}: {text!r} never submitted", file=sys.stderr)
    return lines


def build_impls(args: argparse.Namespace, scratch: Path) -> list[push.Impl]:
    ours = BIN / "cafleet"
    made = [push.Impl("ours", ours, push.interpreter_of(ours))]
    upstream = args.upstream_cafleet
    if upstream is None and args.upstream_python is not None:
        build = scratch / "upstream-build"
        build.mkdir()
        env = cli_latency.scratch_env(build)
        upstream = cli_latency.make_upstream_venv(args.upstream_python, scratch, env)
    if upstream is not None:
        executable = Path(upstream).absolute()
        if not executable.is_file():
            raise push.BenchError(f"upstream: no executable at {executable}")
        made.append(push.Impl("upstream", executable, push.interpreter_of(executable)))
    return made


# ---------------------------------------------------------------- reporting


def p90(values: Sequence[float]) -> float:
    if len(values) < 2:
        return values[0]
    return statistics.quantiles(values, n=10, method="inclusive")[-1]


def median(case: Case) -> float:
    return statistics.median(case.latency_ms)


def table(rows: Sequence[Row]) -> str:
    lines = [
        "| Path | Sender, store | Recipient (submit delay) | send → submit median ms | p90 ms"
        " | min ms | max ms | send process wall median ms | p90 ms |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        lat, wall = row.case.latency_ms, row.case.wall_ms
        lines.append(
            f"| {row.path} | {row.store} | {row.recipient} | {statistics.median(lat):.0f}"
            f" | {p90(lat):.0f} | {min(lat):.0f} | {max(lat):.0f}"
            f" | {statistics.median(wall):.0f} | {p90(wall):.0f} |"
        )
    return "\n".join(lines)


def ratio_lines(rows: Sequence[Row]) -> list[str]:
    across, near, *same = (row.case for row in rows)
    x = median(across)
    lines = [f"- Across hosts / same host on PostgreSQL: {x / median(near):.2f}×"]
    by_label = {case.label: case for case in same}
    demo = by_label.get("ours same host → demo agent")
    if demo is not None:
        lines.append(
            f"- Across hosts / same host on SQLite (ours, demo agent): {x / median(demo):.2f}×"
        )
    upstream = by_label.get("upstream same host → fake claude")
    fake = by_label.get("ours same host → fake claude")
    if upstream is not None:
        lines.append(
            f"- Across hosts / same host (upstream {push.UPSTREAM_VERSION}, SQLite, fake"
            f" `claude`): {x / median(upstream):.2f}×"
        )
        if fake is not None:
            lines.append(
                "- Same host at the same submit delay, ours / upstream (fake `claude`):"
                f" {median(fake) / median(upstream):.2f}×"
            )
    return lines


def summary_line(rows: Sequence[Row]) -> str:
    by_label = {row.case.label: row.case for row in rows}
    parts = [f"across hosts (ours, PostgreSQL + relays) {median(by_label['across hosts']):.0f} ms"]
    parts.append(f"same host on PostgreSQL {median(by_label['same host, PostgreSQL']):.0f} ms")
    if (demo := by_label.get("ours same host → demo agent")) is not None:
        parts.append(f"same host (ours, SQLite) {median(demo):.0f} ms")
    if (upstream := by_label.get("upstream same host → fake claude")) is not None:
        parts.append(
            f"same host (upstream {push.UPSTREAM_VERSION}, SQLite) {median(upstream):.0f} ms"
        )
    return "Medians, send → submit: " + "; ".join(parts) + "."


def reproduce_command(args: argparse.Namespace) -> str:
    compared = args.upstream_cafleet or args.upstream_python  # without either: ours only
    parts = [".venv/bin/python", "bench/cross_host.py"]
    parts += cli_latency.upstream_option(args) if compared else []
    parts += ["--sends", str(args.sends), "--warmup", str(args.warmup), "--write"]
    return " ".join(parts)


PAUSE, UPSTREAM = push.UPSTREAM_SUBMIT_DELAY, push.UPSTREAM_VERSION
METHOD = f"""## Send → delivered across hosts

Script: [`bench/cross_host.py`](../bench/cross_host.py) (it runs the two-host harness of the
tests, `tests/support/two_hosts.py`, and reuses the same-host rows of
`bench/push_latency.py`); run it with this repository's virtualenv.

**Across hosts.** Two hosts simulated on one machine, sharing one database of a private
PostgreSQL server (unix socket, durability off as in the tests). Host A has a private tmux
server with the Director's pane and a `cafleet relay` (`CAFLEET_HOST=host-a`); host B has a
private tmux server of its own whose first pane runs B's relay (`CAFLEET_HOST=host-b`),
beside which a demo-agent member was spawned from A (`member create --host host-b`). Nothing
on A can reach B's tmux: the send on A stores the message and notifies B's relay
(PostgreSQL's NOTIFY; relays started with `--poll 1`), and B's relay, a running process with
its own connection, types the preview into the member's pane (submit delay {SUBMIT_DELAY} s,
`CAFLEET_SUBMIT_DELAY_CUSTOM`). There is no network between the hosts: the figure is the
relay hop without a network's round trips.

**What is measured.** `time.monotonic()` is taken, then `cafleet message send` is started on
A; the latency ends when the member's `CAFLEET_DEMO_LOG` shows the `submit` whose text holds
that send's unique text (the log is polled every millisecond), and the send process's own
wall time is shown next to it. The texts (`bench note <n> <token>`) are ones the demo agent
does not answer, so no replies travel back; it still polls and acknowledges each message,
which runs CLI processes on its host, and the next send waits for that ACK (then 0.2 s).

**Next to it, in the same run**, interleaved send by send (the order reversed every other
round): a demo-agent member beside the Director on A (same store, no relay: the send process
types the preview itself), and the same-host rows of the push-latency section on SQLite
files: ours into the demo agent at the same submit delay, ours into the fake `claude` at
upstream's pause ({PAUSE} s), and upstream `cafleet=={UPSTREAM}` into the fake `claude`
(upstream's members can only be claude, codex or opencode). Upstream has no cross-host
mode at all (no relay, no PostgreSQL store: a member's pane is always on the sender's
machine), so only its same-host figure is shown. On PostgreSQL every CLI process also
imports SQLAlchemy and psycopg (see the PostgreSQL-store section). After the run, the
members' logs and the store are checked: each text sent (warm-ups included) must have been
submitted exactly once.

**Caveat.** The machine is shared: absolute milliseconds include whatever else it was doing
(the load average is printed). Compare rows of the same run, not runs.
"""


def render(report: Report, args: argparse.Namespace) -> str:
    upstream_note = (
        f"upstream cafleet {push.UPSTREAM_VERSION} measured in the same run"
        if any(row.case.label.startswith("upstream") for row in report.rows)
        else "upstream not measured in this run (no --upstream-cafleet or --upstream-python)"
    )
    lost = sum(len(case.lost) for case in report.store_cases)
    return "\n".join(
        [
            METHOD,
            "### Results",
            "",
            *report.machine,
            f"- PostgreSQL: {report.postgres} (private server, unix socket)",
            f"- {args.sends} timed sends per row after {args.warmup} warm-up rounds, rows"
            f" interleaved send by send; {upstream_note}",
            "",
            table(report.rows),
            "",
            summary_line(report.rows),
            "",
            *ratio_lines(report.rows),
            "",
            "Delivery check (members' logs and the store, after the run):",
            "",
            *report.checks,
            *(
                [f"- Timed sends lost (not submitted within {WAIT_TIMEOUT:.0f} s): {lost}"]
                if lost
                else []
            ),
            "",
            *reproduce_lines(reproduce_command(args)),
        ]
    )


# ---------------------------------------------------------------- main


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    cli_latency.add_upstream_options(parser)
    parser.add_argument("--sends", type=int, default=30, help="timed sends per row (30)")
    parser.add_argument("--warmup", type=int, default=3, help="untimed sends per row first (3)")
    parser.add_argument("--write", action="store_true", help="update the marked docs section")
    parser.add_argument(
        "--docs", type=Path, default=push.DEFAULT_DOCS, help="the file --write edits"
    )
    parser.add_argument("--raw-json", type=Path, help="also dump every sample here as JSON")
    args = parser.parse_args(argv)
    if args.sends < 2 or args.warmup < 0:
        parser.error("--sends >= 2, --warmup >= 0")
    return args


def _stop(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)  # unwinds every context: servers stopped, tmux killed


@contextmanager
def stopped_on_signals() -> Iterator[None]:
    saved = {sig: signal.signal(sig, _stop) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if not (BIN / "cafleet").is_file() or not (BIN / "cafleet-demo-agent").is_file():
        print(
            f"error: no cafleet beside {sys.executable};"
            " run this with the repository's virtualenv (.venv/bin/python)",
            file=sys.stderr,
        )
        return 1
    try:
        with stopped_on_signals(), tempfile.TemporaryDirectory(prefix="cafleet-xhost-") as tmp:
            report = benchmark(args, Path(tmp))
    except (push.BenchError, cli_latency.BenchError, PostgresError, AssertionError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    body = render(report, args)
    print(body)
    if args.raw_json:
        args.raw_json.parent.mkdir(parents=True, exist_ok=True)
        raw = {
            row.case.label: {"send_to_submit_ms": row.case.latency_ms, "wall_ms": row.case.wall_ms}
            for row in report.rows
        }
        args.raw_json.write_text(json.dumps(raw, indent=2) + "\n")
    if args.write:
        section = f"{START_MARK}\n{body}\n{END_MARK}"
        replace_marked(args.docs, START_MARK, END_MARK, section, "# Benchmarks\n\n")
        print(f"updated {args.docs}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Wake latency of the delivery ladder with the real Claude Code, Codex and OpenCode TUIs.

For each agent (claude, codex, opencode) and each channel (``native``: ``claude-hook`` /
``codex-queue`` / ``opencode-http``; ``keys``: typing into the pane, the native channel
switched off with ``CAFLEET_CHANNELS_<AGENT>=keys``) it measures the time from the start of a
``cafleet message send`` process (run as the Director) to the moment the scripted model server
receives the model request that carries that message's text, i.e. the member woke and handed
the message to its model. The send process's own wall time is reported next to it, and the
ledger (``message show --full``) of every timed send is read to count which channel really
delivered it.

The agents are the pinned CLIs (``scripts/agents``), pointed at the repository's scripted
model server (tests/realagents/model_server.py), with a scratch HOME seeded by
tests/realagents/homes.py, in a private tmux server (``tmux -L <unique> -f /dev/null``). One
fresh member per (agent, channel); the two members of an agent live side by side and their
sends are interleaved send by send. Before every send the member must be idle: the previous
message's turn finished (the model's last answer was plain text), the model server has been
quiet for a moment and ``member list`` says ``idle``.

Standard library plus the repository's own test helpers. Usage (from the repository root)::

    .venv/bin/python bench/channel_latency.py [--sends 20] [--warmup 1]
                                              [--agents claude,codex,opencode] [--write]

(run with another Python it re-executes itself with ``.venv/bin/python``: the helpers and the
members' tool calls need this repository's ``cafleet``). Nothing here asserts on timings: it
measures and reports. The tmux server, the model server and every process left with the
scratch HOME are always ended.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import platform
import re
import secrets
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from docs_section import replace_marked

REPO_ROOT = Path(__file__).resolve().parent.parent
VENV_PYTHON = REPO_ROOT / ".venv" / "bin" / "python"
DEFAULT_OURS = REPO_ROOT / ".venv" / "bin" / "cafleet"
DEFAULT_DOCS = REPO_ROOT / "docs" / "benchmarks.md"
START_MARK = "<!-- channel-latency:start -->"
END_MARK = "<!-- channel-latency:end -->"
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
NATIVE = {"claude": "claude-hook", "codex": "codex-queue", "opencode": "opencode-http"}
PROMPT = (
    "You are w. FLEET ID: {fleet_id}. YOUR MEMBER ID: {agent_id}."
    " DIRECTOR ID: {director_agent_id}. Wait for messages."
)
TASK_LINE = re.compile(r"^\[(\d+) \|", re.MULTILINE)
FLEET_LINE = re.compile(r"^(\d+) director=(\d+)", re.MULTILINE)
CLI_TIMEOUT = 180.0
WAKE_TIMEOUT = 120.0  # send -> model request
SETTLE_TIMEOUT = 180.0  # previous turn over, member idle
QUIET = 1.0  # seconds without a model request before a member counts as settled


class BenchError(RuntimeError):
    """A preparation or measurement step failed; the benchmark cannot continue."""


def _reexec_with_venv() -> None:
    """The helpers import pytest and cafleet, and members run `cafleet`: use the venv."""
    if Path(sys.prefix).resolve() != (REPO_ROOT / ".venv").resolve() and VENV_PYTHON.exists():
        os.execv(str(VENV_PYTHON), [str(VENV_PYTHON), str(Path(__file__).resolve()), *sys.argv[1:]])


# ---------------------------------------------------------------- the environment


def run(
    argv: Sequence[str | Path],
    env: Mapping[str, str],
    *,
    cwd: Path | None = None,
    check: bool = True,
) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [str(a) for a in argv],
        env=dict(env),
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT,
        check=False,
    )
    if check and proc.returncode != 0:
        shown = " ".join(str(a) for a in argv)
        raise BenchError(f"`{shown}` exited {proc.returncode}: {proc.stderr.strip()}{proc.stdout}")
    return proc


def processes_with_home(home: Path) -> dict[int, str]:
    """pid -> command line of every process whose HOME is the scratch home."""
    needle = f"HOME={home}".encode()
    found = {}
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            if needle in (proc / "environ").read_bytes().split(b"\0"):
                cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ")
                found[int(proc.name)] = cmd.decode(errors="replace").strip()
        except OSError:
            continue
    return found


@dataclass
class Bench:
    """Scratch HOME, model server, private tmux server and a fleet; `close` ends them all."""

    scratch: Path
    cafleet: Path
    env: dict[str, str] = field(default_factory=dict)
    workdir: Path = Path()
    home: Path = Path()
    tmux: list[str] = field(default_factory=list)
    socket: str = ""
    own_pids: set[int] = field(default_factory=set)
    fleet_id: int = 0
    director: int = 0
    server: Any = None

    def start(self) -> None:
        from realagents.homes import seed_agent_home
        from realagents.installed import agent_bin_dir
        from realagents.model_server import ScriptedModelServer

        bins = agent_bin_dir()
        if bins is None:
            raise BenchError("the pinned agent CLIs are not installed (run scripts/agents)")
        for name in NATIVE:
            if not os.access(bins / name, os.X_OK):
                raise BenchError(f"{bins / name} is missing (run scripts/agents)")
        self.server = ScriptedModelServer(log_path=self.scratch / "model-requests.jsonl").start()
        self.workdir = self.scratch / "work"
        seeded = seed_agent_home(self.scratch, self.workdir, self.server.url)
        self.home = Path(seeded["HOME"])
        path = [str(bins), str(self.cafleet.parent), SYSTEM_PATH]
        # the members' `cafleet` runs this checkout's code, as the script does
        source = str(REPO_ROOT / "src")
        self.env = {"PATH": os.pathsep.join(path), "PYTHONPATH": source, **seeded}
        tmux = shutil.which("tmux")
        if tmux is None:
            raise BenchError("tmux is not on PATH")
        self.tmux = [
            tmux,
            "-L",
            f"cafleet-bench-chan-{os.getpid()}-{secrets.token_hex(4)}",
            "-f",
            "/dev/null",
        ]
        # A placeholder window (the Director's pane) keeps the server alive.
        self.tmuxcmd("new-session", "-d", "-s", "main", "-x", "160", "-y", "50", "cat")
        self.socket = self.tmuxcmd("display-message", "-p", "#{socket_path}")
        self.own_pids = {
            int(self.tmuxcmd("display-message", "-p", "#{pid}")),
            int(self.tmuxcmd("display-message", "-p", "-t", "main", "#{pane_pid}")),
        }
        self.env.update(
            CAFLEET_DATABASE_URL=f"sqlite:///{self.scratch / 'cafleet.db'}",
            TMUX=f"{self.socket},0,0",
            TMUX_PANE=self.tmuxcmd("display-message", "-p", "-t", "main", "#{pane_id}"),
        )
        self.cli("setup", "db")
        self.cli("setup", "skill", *(word for name in NATIVE for word in ("--agent", name)))
        out = self.cli("fleet", "create", "--name", "bench")
        found = FLEET_LINE.search(out)
        if found is None:
            raise BenchError(f"unexpected `fleet create` output: {out!r}")
        self.fleet_id, self.director = int(found.group(1)), int(found.group(2))

    def tmuxcmd(self, *args: str) -> str:
        return run([*self.tmux, *args], self.env).stdout.strip()

    def cli(self, *args: str, extra: Mapping[str, str] | None = None) -> str:
        return run([self.cafleet, *args], {**self.env, **(extra or {})}, cwd=self.workdir).stdout

    def json(self, *args: str) -> Any:
        return json.loads(self.cli("--json", *args))

    def close(self) -> None:
        if self.tmux:
            subprocess.run(
                [*self.tmux, "kill-server"],
                env=self.env,
                capture_output=True,
                timeout=15,
                check=False,
            )
            if self.socket:
                Path(self.socket).unlink(missing_ok=True)
        if self.home != Path():
            # Whatever outlived the server (hooks, agent daemons) was started by this run.
            deadline = time.monotonic() + 5
            while self._leftovers() and time.monotonic() < deadline:
                time.sleep(0.2)
            for pid in self._leftovers():
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
        if self.server is not None:
            self.server.stop()
            self.server = None

    def _leftovers(self) -> dict[int, str]:
        mine = {os.getpid(), *self.own_pids}
        return {p: c for p, c in processes_with_home(self.home).items() if p not in mine}


# ---------------------------------------------------------------- one member, one channel


def percentile(values: Sequence[float], q: int) -> float:
    if len(values) < 2:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


@dataclass
class Case:
    agent: str
    channel: str  # "native" or "keys"
    bench: Bench
    member: int = 0
    pane: str = ""
    latency_ms: list[float] = field(default_factory=list)
    wall_ms: list[float] = field(default_factory=list)
    delivered_by: list[str] = field(default_factory=list)  # ledger channel of each timed send
    warm: int = 0

    @property
    def extra(self) -> dict[str, str]:
        return {f"CAFLEET_CHANNELS_{self.agent.upper()}": "keys"} if self.channel == "keys" else {}

    @property
    def label(self) -> str:
        return NATIVE[self.agent] if self.channel == "native" else "keys"

    def create(self) -> None:
        out = self.bench.cli(
            *("member", "create", "--fleet-id", str(self.bench.fleet_id)),
            *("--agent-id", str(self.bench.director), "--name", f"{self.agent}-{self.channel}"),
            *("--description", f"bench {self.agent} {self.channel}"),
            *("--coding-agent", self.agent, "--text", PROMPT),
            extra=self.extra,
        )
        words = out.split()
        if len(words) < 4 or not words[0].isdigit():
            raise BenchError(f"unexpected `member create` output: {out!r}")
        self.member, self.pane = int(words[0]), words[3].removeprefix("pane=")

    def status(self) -> str:
        rows = self.bench.json("member", "list", "--fleet-id", str(self.bench.fleet_id))
        return next((str(r["agent_status"]) for r in rows if r["agent_id"] == self.member), "?")

    def settle(self) -> None:
        """Wait until the member's turn is over: last answer plain text, a quiet model server
        (no request for QUIET s) and `member list` saying idle."""
        server = self.bench.server
        deadline = time.monotonic() + SETTLE_TIMEOUT
        while True:
            calls = server.model_requests()
            last = calls[-1] if calls else None
            done = last is None or last["decision"]["rule"] in ("done", "title")
            quiet = last is None or time.time() - last["time"] >= QUIET
            # settled, and nothing started while `member list` ran
            if done and quiet and self.status() == "idle" and server.model_requests() == calls:
                return
            if time.monotonic() > deadline:
                screen = self.bench.tmuxcmd("capture-pane", "-p", "-t", self.pane)
                raise BenchError(
                    f"{self.agent}/{self.channel} did not settle in {SETTLE_TIMEOUT}s "
                    f"(status {self.status()}, last call {last and last['decision']}):\n{screen}"
                )
            time.sleep(0.3)

    def measure(self, index: int, keep: bool) -> None:
        self.settle()
        bench = self.bench
        token = f"bench {index} {secrets.token_hex(4)}"
        argv = [
            str(bench.cafleet), "message", "send", "--fleet-id", str(bench.fleet_id),
            "--agent-id", str(bench.director), "--to", str(self.member), "--text", token,
        ]  # fmt: skip
        since = len(bench.server.requests)
        env = {**bench.env, **self.extra}
        started = time.time()
        t0 = time.perf_counter()
        proc = subprocess.run(
            argv,
            env=env,
            cwd=bench.workdir,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=CLI_TIMEOUT,
            check=False,
        )
        wall = time.perf_counter() - t0
        if proc.returncode != 0:
            raise BenchError(f"`message send` exited {proc.returncode}: {proc.stderr}")
        try:
            hit = bench.server.wait_for(
                lambda r: (
                    r["decision"]["rule"] != "title"
                    and any(token in item.get("text", "") for item in r.get("new", []))
                ),
                timeout=WAKE_TIMEOUT,
                since=since,
            )
        except AssertionError:
            screen = bench.tmuxcmd("capture-pane", "-p", "-t", self.pane)
            raise BenchError(
                f"{self.agent}/{self.channel}: no model request with {token!r} "
                f"within {WAKE_TIMEOUT}s:\n{screen}"
            ) from None
        latency = hit["time"] - started
        found = TASK_LINE.search(proc.stdout)
        channel = "?"
        if found:
            self.settle()  # the ledger row is final once the turn is over
            shown = bench.json(
                *("message", "show", "--fleet-id", str(bench.fleet_id)),
                *("--agent-id", str(bench.director), "--task-id", found.group(1), "--full"),
            )
            task = shown.get("task", shown)
            rows = task.get("deliveries") or shown.get("deliveries") or []
            sent = [d["channel"] for d in rows if d.get("state") == "sent"]
            channel = (
                "+".join(sent)
                if sent
                else "none:" + ",".join(f"{d['channel']}={d['state']}" for d in rows)
            )
        if keep:
            self.latency_ms.append(latency * 1000)
            self.wall_ms.append(wall * 1000)
            self.delivered_by.append(channel)
        else:
            self.warm += 1
        print(
            f"  {self.agent:8} {self.channel:6} #{index:<3} {'timed' if keep else 'warm-up'}:"
            f" send->model {latency * 1000:7.0f} ms, send wall {wall * 1000:5.0f} ms,"
            f" via {channel}",
            file=sys.stderr,
            flush=True,
        )

    def delete(self) -> None:
        run(
            [
                self.bench.cafleet,
                "member",
                "delete",
                "--fleet-id",
                str(self.bench.fleet_id),
                "--member-id",
                str(self.member),
                "--timeout",
                "10",
            ],
            {**self.bench.env, **self.extra},
            cwd=self.bench.workdir,
            check=False,
        )


# ---------------------------------------------------------------- report


def fmt(values: Sequence[float]) -> list[str]:
    return [
        f"{statistics.median(values):.0f}",
        f"{percentile(values, 90):.0f}",
        f"{min(values):.0f}",
        f"{max(values):.0f}",
    ]


def table(cases: Sequence[Case]) -> str:
    rows = [
        "| Agent | Channel | sends | delivered by (ledger) | send → model request median ms "
        "| p90 ms | min ms | max ms | send process wall median ms | p90 ms | min ms | max ms |",
        "|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for c in cases:
        counts: dict[str, int] = {}
        for ch in c.delivered_by:
            counts[ch] = counts.get(ch, 0) + 1
        by = ", ".join(f"`{k}` {v}" for k, v in sorted(counts.items()))
        rows.append(
            "| "
            + " | ".join(
                [
                    c.agent,
                    f"`{c.label}`",
                    str(len(c.latency_ms)),
                    by,
                    *fmt(c.latency_ms),
                    *fmt(c.wall_ms),
                ]
            )
            + " |"
        )
    return "\n".join(rows)


def ratios(cases: Sequence[Case]) -> list[str]:
    lines = []
    for agent, name in NATIVE.items():
        native = next((c for c in cases if c.agent == agent and c.channel == "native"), None)
        keys = next((c for c in cases if c.agent == agent and c.channel == "keys"), None)
        if native and keys and native.latency_ms and keys.latency_ms:
            lat = statistics.median(native.latency_ms) / statistics.median(keys.latency_ms)
            wall = statistics.median(native.wall_ms) / statistics.median(keys.wall_ms)
            lines.append(
                f"- {agent}: `{name}` / `keys` (medians): send → model request "
                f"{lat:.2f}×, send process wall {wall:.2f}×"
            )
    return lines


def versions(bench: Bench) -> list[str]:
    from realagents.installed import PINNED

    ours = run([bench.cafleet, "--version"], bench.env, check=False).stdout.strip()
    tmux = run([bench.tmux[0], "-V"], bench.env, check=False).stdout.strip()
    cpu = ""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return [
        f"- Machine: {platform.system()} {platform.release()} ({platform.machine()}), "
        f"nproc {os.cpu_count()}, {cpu or 'unknown CPU'}; {tmux}",
        f"- ours: {ours} on Python {platform.python_version()}; agents: "
        + ", ".join(f"{name} {PINNED[name]}" for name in NATIVE)
        + " (pinned, `scripts/agents`)",
    ]


def render(
    args: argparse.Namespace,
    machine: Sequence[str],
    cases: Sequence[Case],
    load: tuple[float, float],
) -> str:
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    return "\n".join(
        [
            "### Results",
            "",
            f"- Date: {now}",
            *machine,
            f"- Load: 1-minute load average {load[0]:.1f} at the start, {load[1]:.1f} at the end"
            " (shared machine, busy with other work)",
            f"- Runs: {args.sends} timed sends per row after {args.warmup} warm-up send(s); the"
            " two rows of an agent interleaved send by send (which goes first alternates);"
            " one fresh member per row; upstream not measured (see above)",
            "",
            table(cases),
            "",
            *ratios(cases),
            "",
            "Reproduce (from the repository root):",
            "",
            "```bash",
            f".venv/bin/python bench/channel_latency.py --sends {args.sends} --warmup "
            f"{args.warmup} --agents {','.join(args.agents)} --write",
            "```",
        ]
    )


def write_section(docs: Path, body: str) -> None:
    """Replace the marked results block (appended at the end when absent)."""
    replace_marked(
        docs, START_MARK, END_MARK, f"{START_MARK}\n{body}\n{END_MARK}", "# Benchmarks\n\n"
    )


# ---------------------------------------------------------------- main


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--ours", type=Path, default=DEFAULT_OURS, help="our cafleet executable")
    parser.add_argument("--sends", type=int, default=20, help="timed sends per row (20)")
    parser.add_argument("--warmup", type=int, default=1, help="untimed sends per row first (1)")
    parser.add_argument("--agents", default=",".join(NATIVE), help=",".join(NATIVE))
    parser.add_argument("--write", action="store_true", help="update the marked docs block")
    parser.add_argument("--docs", type=Path, default=DEFAULT_DOCS, help="the file --write edits")
    parser.add_argument("--raw-json", type=Path, help="also dump every sample here as JSON")
    args = parser.parse_args(argv)
    args.agents = [a.strip() for a in args.agents.split(",") if a.strip()]
    if args.sends < 1 or args.warmup < 0 or not args.agents or set(args.agents) - set(NATIVE):
        parser.error(f"--sends >= 1, --warmup >= 0, --agents from {','.join(NATIVE)}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    _reexec_with_venv()
    sys.path.insert(0, str(REPO_ROOT / "tests"))
    args = parse_args(argv)
    load_start = os.getloadavg()[0]
    cases: list[Case] = []
    machine: list[str] = []
    with tempfile.TemporaryDirectory(prefix="cafleet-chan-bench-") as tmp:
        bench = Bench(Path(tmp), args.ours.absolute())
        try:
            bench.start()
            machine = versions(bench)
            for agent in args.agents:
                pair = [Case(agent, "native", bench), Case(agent, "keys", bench)]
                print(f"{agent}: starting two members ...", file=sys.stderr, flush=True)
                for case in pair:
                    case.create()
                for case in pair:
                    case.settle()  # its first turn (the spawn prompt) is over
                for index in range(args.warmup + args.sends):
                    order = pair if index % 2 == 0 else pair[::-1]
                    for case in order:
                        case.measure(index, keep=index >= args.warmup)
                for case in pair:
                    case.delete()
                cases.extend(pair)
        except BenchError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        finally:
            bench.close()
    body = render(args, machine, cases, (load_start, os.getloadavg()[0]))
    print(body)
    if args.raw_json:
        args.raw_json.parent.mkdir(parents=True, exist_ok=True)
        raw = {
            f"{c.agent} {c.label}": {
                "send_to_model_ms": c.latency_ms,
                "send_wall_ms": c.wall_ms,
                "delivered_by": c.delivered_by,
            }
            for c in cases
        }
        args.raw_json.write_text(json.dumps(raw, indent=2) + "\n")
    if args.write:
        write_section(args.docs, body)
        print(f"updated {args.docs}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

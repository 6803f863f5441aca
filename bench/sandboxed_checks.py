"""Pane checks and message sends from inside a Codex tool sandbox, next to outside.

A Codex tool call runs in a pid namespace of its own: its /proc does not show the panes'
processes, so the agent check's read of a runtime's command line (node, python... in front)
is made by the tmux server instead (`run-shell` + a buffer, one extra client call). Measured
on a private tmux server with a demo-agent member (a custom member: python in front, so its
command line is read on every check):

(a) the check's pane read, `TmuxPaneDriver.panes_of([pane])`, timed in-process N times per
    row: outside a sandbox (this process's /proc) and inside the pinned Codex's sandbox
    (`codex sandbox` with the sandbox settings `cafleet doctor` shows for a Codex member);
    this tree and a baseline tree (`--baseline-src`, e.g. main's `src`: `git archive main
    src | tar -x -C /tmp/base`), whose read from the sandbox cannot tell (`argv: None`).
(b) `cafleet message send` to the member: the send process's wall time, measured by a
    wrapper in the sender's own namespace (the sandbox's start-up is not counted), rows
    interleaved send by send, with what became of each preview.

Nothing here asserts on timings. Usage (from the repository root)::

    .venv/bin/python bench/sandboxed_checks.py [--baseline-src DIR] [--reads 200] [--sends 15]
                                               [--write]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from docs_section import replace_marked, reproduce_lines

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT / "tests"))
from realagents.sandbox import sandbox_settings  # noqa: E402  (tests/ is not a package path)

CODEX = REPO_ROOT / ".cache/agents/node_modules/.bin/codex"
DOCS = REPO_ROOT / "docs" / "benchmarks.md"
START_MARK = "<!-- sandboxed-checks:start -->"
END_MARK = "<!-- sandboxed-checks:end -->"
READ_ROUNDS = 10
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

READ = """
import json, sys, time
from cafleet.adapters.tmux.driver import TmuxPaneDriver
driver, pane, n = TmuxPaneDriver(sys.argv[1]), sys.argv[2], int(sys.argv[3])
times, info = [], None
for _ in range(n):
    started = time.perf_counter()
    info = driver.panes_of([pane])[pane]
    times.append(time.perf_counter() - started)
print(json.dumps({"times": times, "argv": None if info is None else info.argv}))
"""
TIMED = """
import json, subprocess, sys, time
started = time.perf_counter()
done = subprocess.run(sys.argv[1:], capture_output=True, text=True)
print(json.dumps({"wall": time.perf_counter() - started, "out": done.stdout + done.stderr}))
"""


class BenchError(RuntimeError):
    pass


@dataclass
class Tree:
    label: str
    src: Path
    sandbox: list[str] = field(default_factory=list)  # `codex sandbox` options


@dataclass
class Row:
    label: str
    tree: Tree
    inside: bool
    samples: list[float] = field(default_factory=list)
    outcomes: dict[str, int] = field(default_factory=dict)


@dataclass
class Setup:
    scratch: Path
    env: dict[str, str]
    tmux: str
    socket: str
    fleet: int
    director: int
    member: int
    pane: str
    log: Path

    def cli(self, tree: Tree, *args: str, check: bool = True) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "cafleet", *args], env=self.env_of(tree),
            cwd=self.scratch / "work", capture_output=True, text=True, timeout=120,
            check=False,
        )  # fmt: skip
        if check and done.returncode != 0:
            raise BenchError(f"cafleet {' '.join(args)}: {done.stderr.strip()}")
        return done.stdout

    def env_of(self, tree: Tree) -> dict[str, str]:
        return {**self.env, "PYTHONPATH": str(tree.src)}

    def run_python(self, tree: Tree, inside: bool, code: str, *args: str) -> dict[str, object]:
        command = [sys.executable, "-c", code, *args]
        if inside:
            command = [str(CODEX), "sandbox", *tree.sandbox, "--", *command]
        done = subprocess.run(
            command, env=self.env_of(tree), cwd=self.scratch / "work", capture_output=True,
            text=True, timeout=300, check=False,
        )  # fmt: skip
        try:
            answer: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            raise BenchError(f"{' '.join(command[:3])}: {done.stderr.strip()}") from None
        return answer


def tmux_call(binary: str, socket: str, *args: str) -> str:
    done = subprocess.run(
        [binary, "-S", socket, *args], capture_output=True, text=True, timeout=30, check=True
    )
    return done.stdout.strip()


@contextmanager
def setup(tree: Tree) -> Iterator[Setup]:
    """Scratch HOME, runtime directory and database, a private tmux server (always killed),
    a fleet and its demo-agent member."""
    tmux = shutil.which("tmux")
    if tmux is None:
        raise BenchError("tmux is not installed")
    scratch = Path(tempfile.mkdtemp(prefix="cafleet-sandboxed-"))
    for name in ("home", "work", "db"):
        (scratch / name).mkdir()
    (scratch / "run").mkdir(mode=0o700)
    socket = str(scratch / "tmux.sock")
    base = {
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), SYSTEM_PATH]),
        "HOME": str(scratch / "home"),
        "XDG_RUNTIME_DIR": str(scratch / "run"),
        "CAFLEET_DATABASE_URL": f"sqlite:///{scratch / 'db' / 'cafleet.db'}",
        "LANG": "C.UTF-8",
    }
    subprocess.run(
        [tmux, "-S", socket, "-f", "/dev/null", "new-session", "-d", "-s", "main", "cat"],
        env=base, check=True, timeout=30,
    )  # fmt: skip
    try:
        director_pane = tmux_call(tmux, socket, "display-message", "-p", "-t", "main", "#{pane_id}")
        env = {**base, "TMUX": f"{socket},0,0", "TMUX_PANE": director_pane}
        made = Setup(scratch, env, tmux, socket, 0, 0, 0, "", scratch / "demo.jsonl")
        made.cli(tree, "setup", "db")
        made.cli(tree, "setup", "skill", "--agent", "claude")
        created = made.cli(tree, "fleet", "create", "--name", "bench").split()
        made.fleet, made.director = int(created[0]), int(created[1].split("=")[1])
        demo = shlex.join([sys.executable, "-m", "cafleet.demo.agent"])
        made.env["CAFLEET_DEMO_LOG"] = str(made.log)
        out = made.cli(
            tree, "member", "create", "--fleet-id", str(made.fleet), "--agent-id",
            str(made.director), "--name", "sink", "--description", "demo agent",
            "--coding-agent", "custom", "--agent-command", demo, "--text", "bench",
        ).split()  # fmt: skip
        made.member, made.pane = int(out[0]), out[3].removeprefix("pane=")
        yield made
    finally:
        subprocess.run([tmux, "-S", socket, "kill-server"], capture_output=True, check=False)
        shutil.rmtree(scratch, ignore_errors=True)


def doctor_sandbox(made: Setup, tree: Tree) -> list[str]:
    agents = json.loads(made.cli(tree, "--json", "doctor", check=False))["agents"]
    return sandbox_settings(next(a["argv"] for a in agents if a["coding_agent"] == "codex"))


def acks(made: Setup) -> int:
    try:
        return made.log.read_text(encoding="utf-8").count('"event":"ack"')
    except OSError:
        return 0


def send_once(made: Setup, row: Row, n: int) -> None:
    before = acks(made)
    answer = made.run_python(
        row.tree, row.inside, TIMED, sys.executable, "-m", "cafleet", "message", "send",
        "--fleet-id", str(made.fleet), "--agent-id", str(made.director), "--to",
        str(made.member), "--text", f"bench {n}",
    )  # fmt: skip
    out = str(answer["out"])
    skipped = next((ln for ln in out.splitlines() if "skipped" in ln), "")
    outcome = skipped.strip() or ("sent" if "Message sent." in out else out.strip()[:80])
    row.outcomes[outcome] = row.outcomes.get(outcome, 0) + 1
    row.samples.append(float(str(answer["wall"])) * 1000)
    task = next((ln.split("|")[0].strip("[ ") for ln in out.splitlines() if ln.startswith("[")), "")
    if outcome == "sent":  # let the demo agent poll and ACK, so the next send finds it idle
        deadline = time.monotonic() + 15
        while acks(made) <= before and time.monotonic() < deadline:
            time.sleep(0.05)
    elif task:  # nothing was typed: take it in as the agent would have
        made.cli(row.tree, "message", "ack", "--fleet-id", str(made.fleet), "--agent-id",
                 str(made.member), "--task-id", task, check=False)  # fmt: skip


def where(inside: bool) -> str:
    return "inside the Codex sandbox" if inside else "outside"


def median_ms(values: Sequence[float]) -> str:
    return f"{statistics.median(values):.1f}" if values else "-"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--baseline-src", type=Path, default=None)
    parser.add_argument("--reads", type=int, default=200)
    parser.add_argument("--sends", type=int, default=15)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    if not os.access(CODEX, os.X_OK):
        raise BenchError(f"{CODEX} is missing: run scripts/agents")
    trees = [Tree("this tree", REPO_ROOT / "src")]
    if args.baseline_src:
        trees.append(Tree("baseline", args.baseline_src.resolve()))
    load = os.getloadavg()[0]
    with setup(trees[0]) as made:
        for tree in trees:
            tree.sandbox = doctor_sandbox(made, trees[0])  # the member's grants, this tree's
        deadline = time.monotonic() + 30
        while acks(made) == 0 and time.monotonic() < deadline:  # its spawn prompt, taken
            time.sleep(0.1)
        reads: dict[tuple[str, bool], tuple[list[float], object]] = {}
        for _ in range(READ_ROUNDS):  # rows interleaved, so that load falls on all alike
            for tree in trees:
                for inside in (False, True):
                    read = (made.socket, made.pane, str(max(1, args.reads // READ_ROUNDS)))
                    answer = made.run_python(tree, inside, READ, *read)
                    times = reads.get((tree.label, inside), ([], None))[0]
                    times += answer["times"]  # type: ignore[arg-type]
                    reads[tree.label, inside] = (times, answer["argv"])
        rows = [
            Row(f"{tree.label}, {where(inside)}", tree, inside)
            for tree in trees
            for inside in (False, True)
        ]
        for n in range(args.sends + 1):  # the first round warms up
            for row in rows:
                send_once(made, row, n)
                if n == 0:
                    row.samples.clear()
                    row.outcomes.clear()
    versions = [
        subprocess.run(argv, capture_output=True, text=True, check=False).stdout.strip()
        for argv in (["tmux", "-V"], [str(CODEX), "--version"])
    ]
    lines = [
        START_MARK,
        "### Results",
        "",
        f"- Date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
        f"- Machine: {platform.system()} {platform.release()} ({platform.machine()}), nproc"
        f" {os.cpu_count()}; {versions[0]}; {versions[1]}; 1-minute load average {load:.1f} at"
        f" the start, {os.getloadavg()[0]:.1f} at the end",
        f"- (a) {args.reads} pane reads per row in {READ_ROUNDS} rounds, rows interleaved;"
        f" (b) {args.sends} timed sends per row after one"
        " warm-up round, rows interleaved send by send",
        "",
        "**(a) The agent check's pane read** (`panes_of([pane])`, python in front):",
        "",
        "| Tree | Where | median ms | p95 ms | argv read |",
        "|---|---|---:|---:|---|",
    ]
    for (label, inside), (seconds, argv) in reads.items():
        times = sorted(t * 1000 for t in seconds)
        p95 = times[int(len(times) * 0.95) - 1]
        told = "yes" if argv else "no (cannot tell: not the agent)"
        lines.append(f"| {label} | {where(inside)} | {median_ms(times)} | {p95:.1f} | {told} |")
    lines += [
        "",
        "**(b) `message send` to the member** (wall time of the send process):",
        "",
        "| Sender | median ms | min ms | max ms | preview |",
        "|---|---:|---:|---:|---|",
    ]
    for row in rows:
        outcome = ", ".join(f"{k} ×{v}" for k, v in sorted(row.outcomes.items()))
        lines.append(
            f"| {row.label} | {median_ms(row.samples)} | {min(row.samples):.1f} |"
            f" {max(row.samples):.1f} | {outcome} |"
        )
    baseline = " --baseline-src <main's src>" if args.baseline_src else ""
    command = (
        f".venv/bin/python bench/sandboxed_checks.py{baseline} --reads {args.reads}"
        f" --sends {args.sends} --write"
    )
    lines += ["", *reproduce_lines(command), END_MARK]
    report = "\n".join(lines)
    print(report)
    if args.write:
        replace_marked(DOCS, START_MARK, END_MARK, report, "# Benchmarks\n\n")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(1)

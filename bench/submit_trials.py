"""Previews typed into the real Claude Code, Codex and OpenCode TUIs: lost and doubled submits.

Runs ``tests/realagents/test_submits.py`` (the real agent CLIs from the cache, offline against
the scripted model server, in a private tmux server) with N previews per agent and the
shipped submit delays, or with the delays given, and writes what each agent did to
``docs/benchmarks.md``. Needs the pinned agents installed (``scripts/agents``).

Usage (from the repository root)::

    .venv/bin/python bench/submit_trials.py [--trials 100] [--delay SECONDS] [--write]

Nothing here asserts on timings: it measures and reports (the test itself fails on a lost or
doubled submit, which the table then shows).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from docs_section import replace_marked

ROOT = Path(__file__).resolve().parents[1]
START_MARK = "<!-- submit-trials:start -->"
END_MARK = "<!-- submit-trials:end -->"
AGENTS = ("claude", "codex", "opencode")

METHOD = """\
## Previews typed into the real agents

Script: [`bench/submit_trials.py`](../bench/submit_trials.py); it runs
[`tests/realagents/test_submits.py`](../tests/realagents/test_submits.py) with N previews
per agent.

**What is measured.** Each pinned agent CLI runs as a member in a private tmux server,
offline against the scripted model server, with its native channel switched off
(`CAFLEET_CHANNELS_<AGENT>=keys`), so every message reaches it as a typed preview. Each
trial waits until the member is idle, sends one message with `cafleet message send`, and
waits (up to 30 s) until the model server receives the preview. A preview never received
stayed in the composer (lost); one received twice was submitted twice. "send → received"
runs from just before `message send` starts to the model server's receipt: the CLI call, the
pane checks, the paste, the submit delay, Enter (and, where the profile knows the composer,
the check that the text left it), then the agent's own work until its request arrives, so
it bounds the submit from above. Upstream 0.17.1 has no switch to its keys path alone and
is not run here (see the push-latency section for it on a fake agent).
"""


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=100, help="previews per agent (100)")
    parser.add_argument("--delay", type=float, help="submit delay for every agent (shipped)")
    parser.add_argument("--write", action="store_true", help="update docs/benchmarks.md")
    parser.add_argument("--docs", type=Path, default=ROOT / "docs" / "benchmarks.md")
    return parser.parse_args(argv)


def run_trials(args: argparse.Namespace, report: Path) -> int:
    env = {**os.environ, "CAFLEET_SUBMIT_TRIALS": str(args.trials)}
    env["CAFLEET_SUBMIT_REPORT"] = str(report)
    if args.delay is not None:
        env.update({f"CAFLEET_SUBMIT_DELAY_{agent.upper()}": str(args.delay) for agent in AGENTS})
    test = ROOT / "tests" / "realagents" / "test_submits.py"
    argv = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", str(test)]
    return subprocess.run(argv, cwd=ROOT, env=env, check=False).returncode


def shipped_delays() -> dict[str, float]:
    sys.path.insert(0, str(ROOT / "src"))
    from cafleet.domain.agents.registry import PROFILES
    from cafleet.domain.placement import CodingAgent

    return {agent: PROFILES[CodingAgent(agent)].submit_delay for agent in AGENTS}


def ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1000:.0f}"


def render(rows: list[dict[str, object]], args: argparse.Namespace) -> str:
    delays = shipped_delays()
    table = [
        "| Agent | submit delay | previews | lost | submitted twice"
        " | send → received median ms | p90 ms | max ms |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        agent = str(row["agent"])
        delay = row["submit_delay"] or f"{delays[agent]:g} (shipped)"
        table.append(
            f"| {agent} | {delay} s | {row['previews']} | {row['lost']} | {row['twice']}"
            f" | {ms(row['median_s'])} | {ms(row['p90_s'])} | {ms(row['max_s'])} |"  # type: ignore[arg-type]
        )
    command = f".venv/bin/python bench/submit_trials.py --trials {args.trials}"
    if args.delay is not None:
        command += f" --delay {args.delay:g}"
    return "\n".join(
        [
            START_MARK,
            METHOD,
            "### Results",
            "",
            f"- Date: {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC",
            f"- Machine: {platform.system()} {platform.release()} ({platform.machine()}),"
            f" nproc {len(os.sched_getaffinity(0))}; 1-minute load average"
            f" {os.getloadavg()[0]:.1f} at the end",
            "",
            *table,
            "",
            "Reproduce (from the repository root):",
            "",
            "```bash",
            f"{command} --write",
            "```",
            END_MARK,
        ]
    )


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="cafleet-bench-submits-") as tmp:
        report = Path(tmp) / "report.jsonl"
        code = run_trials(args, report)
        rows = (
            [json.loads(line) for line in report.read_text().splitlines()]
            if report.exists()
            else []
        )
    if not rows:
        print(f"benchmark failed: no agent ran (pytest exited {code})", file=sys.stderr)
        return 1
    body = render(rows, args)
    print(body)
    if args.write:
        replace_marked(args.docs, START_MARK, END_MARK, body, "# Benchmarks\n\n")
    return 0 if code == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())

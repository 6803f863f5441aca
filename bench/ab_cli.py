"""Two cafleet executables timed on the same commands, in turn (A B A B ...), whole process.

For a before/after comparison of one change: run it with the environment of a prepared fleet
(CAFLEET_DATABASE_URL, TMUX and TMUX_PANE of a pane, HOME and XDG_RUNTIME_DIR), e.g.

    python3 bench/ab_cli.py --a .venv/bin/cafleet --b <other tree>/.venv/bin/cafleet \\
        --runs 25 --command "message poll --fleet-id 1 --agent-id 2" --command "--version"

Each command runs `--warmup` times per side untimed, then `--runs` pairs; the report gives each
side's median wall time and the median of the per-pair ratios A/B (pairing keeps the ratio
meaningful while the machine's speed drifts). Standard library only; it measures, never judges.
"""

from __future__ import annotations

import argparse
import shlex
import statistics
import subprocess
import time


def wall(argv: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, check=False)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--a", required=True, help="the cafleet executable measured")
    parser.add_argument("--b", required=True, help="the cafleet executable compared against")
    parser.add_argument("--command", action="append", required=True, help="arguments, quoted")
    parser.add_argument("--runs", type=int, default=25)
    parser.add_argument("--warmup", type=int, default=2)
    args = parser.parse_args()
    print("| Command | A median ms | B median ms | A/B (median of pairs) |")
    print("|---|---:|---:|---:|")
    for command in args.command:
        words = shlex.split(command)
        a, b = [args.a, *words], [args.b, *words]
        for _ in range(args.warmup):
            wall(a), wall(b)
        pairs = [(wall(a), wall(b)) for _ in range(args.runs)]
        a_ms = statistics.median(x for x, _ in pairs) * 1000
        b_ms = statistics.median(y for _, y in pairs) * 1000
        ratio = statistics.median(x / y for x, y in pairs)
        print(f"| `cafleet {command}` | {a_ms:.0f} | {b_ms:.0f} | {ratio:.2f} |")


if __name__ == "__main__":
    main()

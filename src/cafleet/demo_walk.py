"""A scripted walk through a fleet: create it, exchange messages, print the timeline.

Runs the installed CLI as separate processes, the way agents do, against a
scratch database inside a private tmux server, and removes both at the end.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path


def main() -> int:
    if shutil.which("tmux") is None:
        print("cafleet demo: tmux is not installed", file=sys.stderr)
        return 1
    server = f"cafleet-demo-{uuid.uuid4().hex[:8]}"
    with tempfile.TemporaryDirectory(prefix="cafleet-demo-") as scratch:
        env = dict(
            os.environ, HOME=scratch, CAFLEET_DATABASE_URL=f"sqlite:///{Path(scratch, 'demo.db')}"
        )
        tmux = ["tmux", "-L", server, "-f", os.devnull]
        subprocess.run(
            [*tmux, "new-session", "-d", "-s", "demo", "-x", "160", "-y", "40"], check=True
        )
        try:
            socket = _tmux_out(tmux, "display-message", "-p", "#{socket_path}")
            env["TMUX"] = f"{socket},0,0"
            env["TMUX_PANE"] = _tmux_out(tmux, "display-message", "-p", "-t", "demo", "#{pane_id}")
            _walk(env)
        finally:
            subprocess.run([*tmux, "kill-server"], check=False, capture_output=True)
    return 0


def _walk(env: dict[str, str]) -> None:
    cli = [sys.executable, "-m", "cafleet"]

    def run(*args: str) -> str:
        print(f"$ cafleet {shlex.join(args)}")
        done = subprocess.run([*cli, *args], env=env, capture_output=True, text=True, check=False)
        output = (done.stdout + done.stderr).rstrip()
        if output:
            print(output)
        if done.returncode != 0:
            raise SystemExit(done.returncode)
        return done.stdout.strip()

    run("setup", "db")
    created = run("fleet", "create", "--name", "demo", "--coding-agent", "custom")
    fleet_id, director, admin = (part.split("=")[-1] for part in created.split())
    fleet = ("--fleet-id", fleet_id)
    run(
        "message",
        "send",
        *fleet,
        "--agent-id",
        admin,
        "--to",
        director,
        "--text",
        "ping 1: the build is green, please review",
    )
    run("message", "poll", *fleet, "--agent-id", director)
    task = run("--json", "message", "poll", *fleet, "--agent-id", director, "--limit", "1")
    task_id = task.split('"id":', 1)[1].split(",", 1)[0]
    run("message", "ack", *fleet, "--agent-id", director, "--task-id", task_id)
    run("message", "send", *fleet, "--agent-id", director, "--to", admin, "--text", "pong 1")
    run("message", "broadcast", *fleet, "--agent-id", director, "--text", "standup in 5")
    run("member", "list", *fleet, "--all")
    run("member", "list", *fleet, "--activity")
    run("message", "show", *fleet, "--agent-id", director, "--task-id", task_id, "--full")
    run("fleet", "delete", *fleet)


def _tmux_out(tmux: list[str], *args: str) -> str:
    return subprocess.run([*tmux, *args], check=True, capture_output=True, text=True).stdout.strip()


if __name__ == "__main__":
    raise SystemExit(main())

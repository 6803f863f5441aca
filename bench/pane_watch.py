"""Live panes over the event stream: captures a real `cafleet server` makes for N watchers.

One fleet on a private tmux server: the Director's pane and one demo-agent member. A real
`cafleet server` (uvicorn) runs with a `tmux` wrapper first on its PATH that logs every tmux
call it makes (the verb) and execs the real tmux, so the server's `capture-pane` calls are
counted exactly. For N = 1, 4 and 16, N event-stream clients
(`GET /api/events?watch=<member>`) watch the member while the bench types one character into
its pane every second (`tmux send-keys -l`, which the demo agent echoes): k changes in the
window. Each client counts its `event: pane` events and when each one arrived.

Expected: the captures in the window do not depend on N (one per 0.5 s tick for the one
watched pane), each client gets k + 1 pane events (the frame when its watch starts, then one
per change), and nothing is captured once the last client left.

Usage (from the repository root, with this repository's virtualenv: the server is the
``cafleet`` installed beside the interpreter)::

    .venv/bin/python bench/pane_watch.py [--seconds 10] [--changes 8] [--clients 1,4,16]
                                         [--write]

Nothing here asserts on timings: it measures and reports. The tmux server and the admin
server are stopped however the script ends.
"""

from __future__ import annotations

import argparse
import datetime
import http.client
import json
import os
import platform
import secrets
import shlex
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType

import cli_latency
from cli_latency import BenchError
from docs_section import replace_marked, reproduce_lines

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from support.tmux import TmuxServer, clean_environment, private_tmux, tmux_binary

REPO_ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
CAFLEET = BIN / "cafleet"
DEFAULT_DOCS = REPO_ROOT / "docs" / "benchmarks.md"
START_MARK = "<!-- pane-watch:start -->"
END_MARK = "<!-- pane-watch:end -->"
UPSTREAM_VERSION = "0.17.1"
TICK_SECONDS = 0.5  # the server's pane tick (cafleet.application.admin.pane_watch.TICK_SECONDS)
WAIT_TIMEOUT = 60.0
IDLE_SECONDS = 3.0  # after the last client left: the captures must stop

# Logs the verb of every tmux call (`capture-pane`, `list-panes`, ...), then runs tmux itself.
TMUX_WRAPPER = """#!/bin/sh
verb=""
skip=""
for arg in "$@"; do
  if [ -n "$skip" ]; then skip=""; continue; fi
  case "$arg" in
    -S|-L|-f|-c|-T) skip=1 ;;
    -*) ;;
    *) verb="$arg"; break ;;
  esac
done
case "$verb" in
  capture-pane|list-panes|display-message|send-keys) ;;
  *) verb="other" ;;
esac
echo "$verb" >> "$CAFLEET_BENCH_TMUX_LOG"
exec {tmux} "$@"
"""


def run(argv: Sequence[str | Path], env: Mapping[str, str]) -> str:
    return cli_latency.run(argv, env).stdout


def wait_for(probe: object, what: str, timeout: float = WAIT_TIMEOUT) -> None:
    assert callable(probe)
    deadline = time.monotonic() + timeout
    while not probe():
        if time.monotonic() > deadline:
            raise BenchError(f"timed out waiting for {what}")
        time.sleep(0.01)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


# ---------------------------------------------------------------- the fleet and the server


@dataclass
class World:
    env: dict[str, str]  # the Director's pane, for the CLI
    tmux: TmuxServer
    fleet_id: int
    member: int
    member_pane: str
    port: int
    token: str
    tmux_log: Path

    def tmux_calls(self) -> list[str]:
        if not self.tmux_log.exists():
            return []
        return self.tmux_log.read_text().split()

    def type_into_member(self, text: str) -> None:
        self.tmux.run("send-keys", "-t", self.member_pane, "-l", text)


@contextmanager
def world(scratch: Path, tmux: str) -> Iterator[World]:
    home, runtime = scratch / "home", scratch / "run"
    home.mkdir()
    runtime.mkdir(mode=0o700)
    env = clean_environment(
        HOME=str(home),
        XDG_RUNTIME_DIR=str(runtime),
        CAFLEET_DATABASE_URL=f"sqlite:///{scratch / 'cafleet.db'}",
        CAFLEET_SUBMIT_DELAY_CUSTOM="0.05",
    )
    wrapper_dir = scratch / "wrap"
    wrapper_dir.mkdir()
    wrapper = wrapper_dir / "tmux"
    wrapper.write_text(TMUX_WRAPPER.format(tmux=shlex.quote(tmux)))
    wrapper.chmod(0o755)
    with ExitStack() as stack:
        server = stack.enter_context(private_tmux(tmux, "cafleet-bench-watch", (200, 50)))
        pane_env = {**env, **server.env}
        run([CAFLEET, "setup", "db"], env)
        run([CAFLEET, "setup", "skill", "--agent", "claude"], env)
        made = json.loads(run([CAFLEET, "--json", "fleet", "create", "--name", "watch"], pane_env))
        fleet_id, director = made["fleet_id"], made["director"]["agent_id"]
        agent = shlex.join([sys.executable, "-m", "cafleet.demo.agent"])
        create = [
            CAFLEET, "--json", "member", "create",
            "--fleet-id", str(fleet_id), "--agent-id", str(director),
            "--name", "watched", "--description", "the pane the clients watch",
            "--coding-agent", "custom", "--agent-command", agent,
            "--text", "You are watched.",
        ]  # fmt: skip
        member = json.loads(run(create, pane_env))["agent_id"]
        show = [
            CAFLEET, "--json", "member", "show",
            "--fleet-id", str(fleet_id), "--member-id", str(member),
        ]  # fmt: skip
        shown = json.loads(run(show, pane_env))
        token = secrets.token_urlsafe(24)
        port = free_port()
        tmux_log = scratch / "tmux-calls.log"
        server_env = {
            **env,
            "PATH": os.pathsep.join([str(wrapper_dir), env.get("PATH", "")]),
            "CAFLEET_WEBUI_TOKEN": token,
            "CAFLEET_BENCH_TMUX_LOG": str(tmux_log),
        }
        log = (scratch / "server.log").open("wb")
        stack.callback(log.close)
        process = subprocess.Popen(
            [CAFLEET, "server", "--host", "127.0.0.1", "--port", str(port)],
            env=server_env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        stack.callback(stop_process, process)
        built = World(
            pane_env,
            server,
            fleet_id,
            member,
            shown["placement"]["mux_pane_id"],
            port,
            token,
            tmux_log,
        )
        wait_for(lambda: answers(built), "the admin server")
        yield built


def stop_process(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)


def answers(w: World) -> bool:
    try:
        conn = http.client.HTTPConnection("127.0.0.1", w.port, timeout=2)
        conn.request("GET", "/api/fleets", headers={"Authorization": f"Bearer {w.token}"})
        ok = conn.getresponse().status == 200
        conn.close()
        return ok
    except OSError:
        return False


# ---------------------------------------------------------------- the clients


@dataclass
class Client:
    """One event stream watching the member; it records when each pane event arrived."""

    w: World
    frames: list[tuple[float, str]] = field(default_factory=list)  # (arrival, screen)
    failure: str | None = None
    _conn: http.client.HTTPConnection | None = None
    _thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        w = self.w
        try:
            conn = self._conn = http.client.HTTPConnection("127.0.0.1", w.port, timeout=60)
            conn.request(
                "GET",
                f"/api/events?watch={w.member}",
                headers={
                    "Authorization": f"Bearer {w.token}",
                    "X-Fleet-Id": str(w.fleet_id),
                    "Accept": "text/event-stream",
                },
            )
            response = conn.getresponse()
            if response.status != 200:
                self.failure = f"HTTP {response.status}: {response.read()[:200]!r}"
                return
            event = ""
            while True:
                line = response.readline()
                if not line:
                    return
                text = line.decode().rstrip("\n")
                if text.startswith("event: "):
                    event = text.removeprefix("event: ")
                elif text.startswith("data: ") and event == "pane":
                    payload = json.loads(text.removeprefix("data: "))
                    self.frames.append((time.monotonic(), payload.get("ansi") or ""))
                elif text == "":
                    event = ""
        except (OSError, ValueError, http.client.HTTPException) as exc:
            if self._conn is not None and self._conn.sock is not None:
                self.failure = f"{type(exc).__name__}: {exc}"

    def stop(self) -> None:
        conn = self._conn
        if conn is not None and conn.sock is not None:
            with suppress(OSError):
                conn.sock.shutdown(socket.SHUT_RDWR)
            conn.close()
        if self._thread is not None:
            self._thread.join(timeout=10)


@dataclass
class Round:
    clients: int
    seconds: float
    changes: int
    captures: int
    tmux_calls: int
    idle_captures: int
    events: list[int]  # pane events per client, the initial one included
    latencies_ms: list[float]  # keystroke -> the client's next pane event
    failures: list[str]


def one_round(w: World, n: int, seconds: float, changes: int) -> Round:
    clients = [Client(w) for _ in range(n)]
    for client in clients:
        client.start()
    wait_for(lambda: all(c.frames or c.failure for c in clients), f"{n} clients' first pane event")
    time.sleep(2 * TICK_SECONDS)  # every watch is joined and settled
    start_calls = w.tmux_calls()
    started = time.monotonic()
    typed_at: list[float] = []
    gap = seconds / (changes + 1)
    for i in range(changes):
        pause = started + gap * (i + 1) - time.monotonic()
        if pause > 0:
            time.sleep(pause)
        typed_at.append(time.monotonic())
        w.type_into_member("abcdefghijklmnopqrstuvwxyz"[i % 26])
    time.sleep(max(0.0, started + seconds - time.monotonic()))
    window = w.tmux_calls()[len(start_calls) :]
    for client in clients:
        client.stop()
    left = len(w.tmux_calls())
    time.sleep(IDLE_SECONDS)
    idle = w.tmux_calls()[left:]
    latencies = []
    for client in clients:
        arrivals = [at for at, _ in client.frames]
        for typed in typed_at:
            later = [at for at in arrivals if at >= typed]
            if later:
                latencies.append((later[0] - typed) * 1000.0)
    return Round(
        clients=n,
        seconds=seconds,
        changes=changes,
        captures=window.count("capture-pane"),
        tmux_calls=len(window),
        idle_captures=idle.count("capture-pane"),
        events=[len(c.frames) for c in clients],
        latencies_ms=latencies,
        failures=[c.failure for c in clients if c.failure],
    )


# ---------------------------------------------------------------- reporting


def p90(values: Sequence[float]) -> float:
    if len(values) < 2:
        return values[0] if values else float("nan")
    return statistics.quantiles(values, n=10, method="inclusive")[-1]


def table(rounds: Sequence[Round]) -> str:
    lines = [
        "| Clients | captures in the window | per second | all tmux calls of the server"
        " | pane events per client (min / median / max) | expected | keystroke → event median ms"
        " | p90 ms | captures after the last client left |",
        "|---:|---:|---:|---:|---|---:|---:|---:|---:|",
    ]
    for r in rounds:
        events = sorted(r.events)
        lines.append(
            f"| {r.clients} | {r.captures} | {r.captures / r.seconds:.1f} | {r.tmux_calls}"
            f" | {events[0]} / {statistics.median(events):g} / {events[-1]} | {r.changes + 1}"
            f" | {statistics.median(r.latencies_ms):.0f} | {p90(r.latencies_ms):.0f}"
            f" | {r.idle_captures} |"
        )
    return "\n".join(lines)


def ratio_lines(rounds: Sequence[Round]) -> list[str]:
    first, last = rounds[0], rounds[-1]
    ratio = last.captures / first.captures if first.captures else float("nan")
    exact = all(e == r.changes + 1 for r in rounds for e in r.events)
    return [
        f"- Captures, {last.clients} clients / {first.clients} client: {ratio:.2f}×"
        f" (one pane watched; one tick every {TICK_SECONDS} s would be"
        f" {first.seconds / TICK_SECONDS:.0f} in {first.seconds:g} s)",
        "- Every client got exactly the changes + 1 pane events: "
        + ("yes" if exact else "no (see the table)"),
        "- Captures once the last client left (over "
        f"{IDLE_SECONDS:g} s): {sum(r.idle_captures for r in rounds)}",
    ]


def machine_lines(load_at_start: float) -> list[str]:
    tmux = run(["tmux", "-V"], os.environ).strip()
    version = run([CAFLEET, "--version"], os.environ).strip()
    cpu = "unknown CPU"
    with suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return [
        f"- Date: {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC",
        f"- Machine: {platform.system()} {platform.release()} ({platform.machine()}), nproc"
        f" {len(os.sched_getaffinity(0))}, {cpu}; {tmux}; 1-minute load average"
        f" {load_at_start:.1f} at the start, {os.getloadavg()[0]:.1f} at the end",
        f"- ours: {version} on Python {platform.python_version()}, `cafleet server` (uvicorn)",
    ]


def reproduce_command(args: argparse.Namespace) -> str:
    clients = ",".join(str(n) for n in args.clients)
    return (
        f".venv/bin/python bench/pane_watch.py --seconds {args.seconds:g}"
        f" --changes {args.changes} --clients {clients} --write"
    )


METHOD = f"""## Live panes: captures per watched pane

Script: [`bench/pane_watch.py`](../bench/pane_watch.py); run it with this repository's
virtualenv.

**Set-up.** One fleet on a private tmux server (200×50): the Director's pane and one
demo-agent member. A real `cafleet server` (uvicorn, loopback) serves it with a `tmux`
wrapper first on the server's PATH: a shell script that appends the verb of each call
(`capture-pane`, `list-panes`, ...) to a log and execs the real tmux, so every tmux process
the server starts is counted (the CLI and the members use the real tmux directly).

**What is measured.** For N = 1, 4 and 16, N clients open `GET /api/events?watch=<member>`
(plain HTTP/1.1 connections, one thread each) and wait for their first `event: pane`. Then,
for a window of the given seconds, the bench types one character into the member's pane
(`tmux send-keys -l`; the demo agent echoes it) at evenly spaced moments, k times. Counted:
the server's `capture-pane` calls in the window (and all its tmux calls: each capture also
looks up the pane once with `list-panes`, and the event stream reads the members' statuses
with one listing every 2 s whatever the number of streams), each client's pane events (the
one when its watch started plus those in the window), the time from each keystroke to each
client's next pane event, and the captures during {IDLE_SECONDS:g} s after the last client
closed its stream.

**Expected.** One capture per 0.5 s tick for the one watched pane, whatever N (the server's
`PaneWatch` shares it between the streams), k + 1 pane events per client, nothing captured
once nobody watches. Upstream `cafleet=={UPSTREAM_VERSION}` (PyPI) has no live pane, no event
stream and no admin server to compare with: there is no upstream row.

**Caveat.** The machine is shared: the keystroke → event times include whatever else it was
doing (the load average is printed); the counts do not depend on it.
"""


def render(rounds: Sequence[Round], machine: Sequence[str], args: argparse.Namespace) -> str:
    failures = [f for r in rounds for f in r.failures]
    return "\n".join(
        [
            METHOD,
            "### Results",
            "",
            *machine,
            f"- Window: {args.seconds:g} s per row, {args.changes} changes of the pane;"
            f" upstream {UPSTREAM_VERSION}: no live pane (not measured)",
            "",
            table(rounds),
            "",
            *ratio_lines(rounds),
            *([f"- Client failures: {'; '.join(failures)}"] if failures else []),
            "",
            *reproduce_lines(reproduce_command(args)),
        ]
    )


# ---------------------------------------------------------------- main


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="window per row (10)")
    parser.add_argument("--changes", type=int, default=8, help="pane changes per window (8)")
    parser.add_argument(
        "--clients",
        type=lambda raw: [int(n) for n in raw.split(",")],
        default=[1, 4, 16],
        help="watchers per row, comma-separated (1,4,16; at most 16: the server's stream cap)",
    )
    parser.add_argument("--write", action="store_true", help="update the marked docs section")
    parser.add_argument("--docs", type=Path, default=DEFAULT_DOCS, help="the file --write edits")
    args = parser.parse_args(argv)
    if args.seconds < 2 or args.changes < 1 or args.changes > args.seconds / 0.75:
        parser.error("--seconds >= 2 and 1 <= --changes <= seconds / 0.75 (a change per tick)")
    if not args.clients or any(n < 1 or n > 16 for n in args.clients):
        parser.error("--clients: 1 to 16 each")
    return args


def _stop(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)  # unwinds every context: servers stopped, tmux killed


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if not CAFLEET.is_file():
        print(
            f"error: no cafleet beside {sys.executable};"
            " run this with the repository's virtualenv (.venv/bin/python)",
            file=sys.stderr,
        )
        return 1
    tmux = tmux_binary()
    if tmux is None:
        print("error: tmux is not on PATH", file=sys.stderr)
        return 1
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _stop)
    load_at_start = os.getloadavg()[0]
    rounds = []
    try:
        with (
            tempfile.TemporaryDirectory(prefix="cafleet-pane-watch-") as tmp,
            world(Path(tmp), tmux) as w,
        ):
            for n in args.clients:
                print(f"{n} client(s) ...", file=sys.stderr)
                rounds.append(one_round(w, n, args.seconds, args.changes))
    except BenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    body = render(rounds, machine_lines(load_at_start), args)
    print(body)
    if args.write:
        section = f"{START_MARK}\n{body}\n{END_MARK}"
        replace_marked(args.docs, START_MARK, END_MARK, section, "# Benchmarks\n\n")
        print(f"updated {args.docs}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

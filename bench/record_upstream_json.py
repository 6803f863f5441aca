"""Record upstream cafleet 0.17.1's ``--json`` output, one fixture per command.

Drives upstream through one scenario (a fleet, two members, messages in both directions, a
broadcast, acks, cancels, the member verbs, the monitor and doctor) on a scratch database,
with a scratch HOME and a private tmux server, and writes what each command printed to
``tests/fixtures/upstream_json/<name>.json`` as ``{"step", "argv", "output"}``.
``tests/integration/panes/test_upstream_json.py`` replays the same argv, in step order, on our
CLI and compares the shapes. Upstream's members run a stand-in ``claude`` (a shell loop that
reads what is typed and leaves on ``/exit``); the Director's pane runs an inert reader.

Standard library only. Usage (from the repository root)::

    python3 bench/record_upstream_json.py --upstream-cafleet PATH
    python3 bench/record_upstream_json.py --upstream-python PATH_TO_PYTHON3.12
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from cli_latency import (
    REPO_ROOT,
    BenchError,
    Impl,
    make_upstream_venv,
    private_tmux,
    record_skill_install,
    run,
    scratch_env,
    version_of,
)

DEFAULT_OUT = REPO_ROOT / "tests" / "fixtures" / "upstream_json"
FAKE_CLAUDE = """#!/bin/sh
# Stands in for Claude Code: shows each line typed into it and leaves on /exit.
while IFS= read -r line; do
  [ "$line" = "/exit" ] && exit 0
  echo "got: $line"
done
"""

FLEET, DIRECTOR, ALICE, BOB = "1", "1", "3", "4"
F = ("--fleet-id", FLEET)


def _as(agent: str) -> tuple[str, ...]:
    return (*F, "--agent-id", agent)


def _msg(verb: str, agent: str, *rest: str) -> tuple[str, ...]:
    return ("message", verb, *_as(agent), *rest)


def _member(name: str) -> tuple[str, ...]:
    return ("member", "create", *_as(DIRECTOR), "--name", name, "--description", f"{name} (x)")


# (fixture name, argv after `cafleet --json`). Ids follow from the order: the fleet's Director
# is 1 and its Administrator 2, alice 3, bob 4; task ids count up from the nudge (1). Only the
# Director acks and only messages to it are canceled, so an agent that acks what it is shown
# (as our test's members do) sees the same states.
SCENARIO: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("fleet_create", ("fleet", "create", "--name", "shapes")),
    ("member_create", (*_member("alice"), "--text", "You are alice.")),
    ("member_create_second", (*_member("bob"), "--text", "You are bob.")),
    ("fleet_list", ("fleet", "list")),
    ("fleet_show", ("fleet", "show", *F)),
    ("member_list", ("member", "list", *F)),
    ("member_list_all", ("member", "list", *F, "--all")),
    ("member_show", ("member", "show", *F, "--member-id", ALICE)),
    ("member_nudge", ("member", "nudge", *_as(DIRECTOR), "--member-id", ALICE, "--text", "go")),
    ("message_send", _msg("send", ALICE, "--to", DIRECTOR, "--text", "done")),
    ("message_send_full", _msg("send", BOB, "--to", DIRECTOR, "--text", "ok", "--full")),
    ("message_poll", _msg("poll", DIRECTOR)),
    ("message_poll_full", _msg("poll", DIRECTOR, "--full")),
    ("message_broadcast", _msg("broadcast", DIRECTOR, "--text", "standup")),
    ("message_broadcast_full", _msg("broadcast", DIRECTOR, "--text", "again", "--full")),
    ("message_ack", _msg("ack", DIRECTOR, "--task-id", "2")),
    ("message_ack_full", _msg("ack", DIRECTOR, "--task-id", "3", "--full")),
    ("message_show", _msg("show", DIRECTOR, "--task-id", "2")),
    ("message_show_full", _msg("show", DIRECTOR, "--task-id", "2", "--full")),
    ("message_show_broadcast", _msg("show", DIRECTOR, "--task-id", "4")),
    ("message_show_broadcast_copy", _msg("show", DIRECTOR, "--task-id", "5")),
    ("message_send_to_cancel", _msg("send", ALICE, "--to", DIRECTOR, "--text", "x")),
    ("message_cancel", _msg("cancel", ALICE, "--task-id", "10")),
    ("message_send_to_cancel_full", _msg("send", BOB, "--to", DIRECTOR, "--text", "y")),
    ("message_cancel_full", _msg("cancel", BOB, "--task-id", "11", "--full")),
    ("member_list_activity", ("member", "list", *F, "--activity")),
    ("member_capture", ("member", "capture", *F, "--member-id", ALICE, "--lines", "5")),
    ("member_ping", ("member", "ping", *F, "--member-id", ALICE)),
    ("member_exec", ("member", "exec", *F, "--member-id", ALICE, "echo hi")),
    ("monitor_status", ("monitor", "status", *F)),
    ("monitor_config", ("monitor", "config", *_as(ALICE))),
    ("monitor_config_set", ("monitor", "config", *_as(ALICE), "--interval", "600", "--disable")),
    ("doctor", ("doctor",)),
    ("member_delete", ("member", "delete", *F, "--member-id", BOB)),
)


def scrubbed(value: Any, replacements: Mapping[str, str]) -> Any:
    """The value with the scratch paths of this run replaced by placeholders."""
    if isinstance(value, str):
        for old, new in replacements.items():
            value = value.replace(old, new)
        return value
    if isinstance(value, list):
        return [scrubbed(v, replacements) for v in value]
    if isinstance(value, dict):
        return {k: scrubbed(v, replacements) for k, v in value.items()}
    return value


def record(upstream: Path, out: Path) -> list[str]:
    """Run the scenario on upstream; write one fixture per step; return the names."""
    with tempfile.TemporaryDirectory(prefix="cafleet-record-") as tmp:
        scratch = Path(tmp).resolve()
        env = scratch_env(scratch)
        bin_dir = scratch / "bin"
        bin_dir.mkdir()
        (bin_dir / "claude").write_text(FAKE_CLAUDE, encoding="utf-8")
        (bin_dir / "claude").chmod(0o755)
        env["PATH"] = os.pathsep.join([str(bin_dir), env.get("PATH", "")])
        database = scratch / "upstream.db"
        env["CAFLEET_DATABASE_URL"] = f"sqlite:///{database}"
        with private_tmux(env) as pane_env:
            env.update(pane_env)
            impl = Impl("upstream", upstream, database, env)
            run([upstream, "setup", "db"], env)
            # `setup skill` downloads upstream's skills; the row it would write is enough
            record_skill_install(database, version_of(impl))
            socket = pane_env["TMUX"].split(",", 1)[0]
            replacements = {socket: "<tmux-socket>", str(scratch): "<scratch>"}
            out.mkdir(parents=True, exist_ok=True)
            for step, (name, argv) in enumerate(SCENARIO, start=1):
                done = run([upstream, "--json", *argv], env)
                try:
                    output = json.loads(done.stdout)
                except ValueError as exc:
                    raise BenchError(f"{name}: not JSON: {done.stdout!r}") from exc
                fixture = {"step": step, "argv": list(argv), "output": output}
                text = json.dumps(scrubbed(fixture, replacements), indent=2, ensure_ascii=False)
                (out / f"{name}.json").write_text(text + "\n", encoding="utf-8")
                print(f"recorded {name}", file=sys.stderr)
    return [name for name, _ in SCENARIO]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--upstream-cafleet", type=Path, help="upstream's console script")
    source.add_argument("--upstream-python", type=Path, help="a Python 3.12 to build a venv")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="fixture directory")
    args = parser.parse_args(argv)
    try:
        if args.upstream_cafleet is not None:
            names = record(args.upstream_cafleet, args.out)
        else:
            with tempfile.TemporaryDirectory(prefix="cafleet-upstream-") as venv_dir:
                upstream = make_upstream_venv(args.upstream_python, Path(venv_dir), os.environ)
                names = record(upstream, args.out)
    except BenchError as exc:
        print(f"record_upstream_json: {exc}", file=sys.stderr)
        return 1
    print(f"{len(names)} fixtures in {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""A sender process for the contention tests (run as a script, not collected by pytest).

    python send_loop.py '<json config>'

Config keys: mode ("cli": run the `cafleet` argv as a subprocess per message; "inprocess": call
the CLI's main() in this process), cafleet (argv of the installed script, cli mode), fleet_id,
agent_id, to, count, tag. Every message body is `<tag>-<n>`. With "verb": "poll" the process
runs `message poll` as `agent_id` `count` times instead (`to` and `tag` unused).

The process prints `ready` once it has loaded what it needs, then waits for one line on stdin
so that all senders start together. At the end it prints one JSON line: a list of
{"code", "stdout", "stderr"} per message, in sending order.
"""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
import traceback
from typing import Any


def send_with_cli(argv: list[str]) -> dict[str, Any]:
    done = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=120)
    return {"code": done.returncode, "stdout": done.stdout, "stderr": done.stderr}


def send_in_process(args: list[str]) -> dict[str, Any]:
    from cafleet.entrypoints.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    code: int
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(args)
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except BaseException:
            traceback.print_exc()
            code = -1
    return {"code": code, "stdout": out.getvalue(), "stderr": err.getvalue()}


def poll_args(config: dict[str, Any]) -> list[str]:
    return ["message", "poll", "--fleet-id", str(config["fleet_id"]),
            "--agent-id", str(config["agent_id"])]  # fmt: skip


def main() -> None:
    config = json.loads(sys.argv[1])
    mode = config["mode"]
    if mode == "inprocess":
        import cafleet.entrypoints.cli.main  # noqa: F401  (loaded before the start signal)

    print("ready", flush=True)
    sys.stdin.readline()
    results = []
    for n in range(config["count"]):
        args = (
            poll_args(config)
            if config.get("verb") == "poll"
            else [
                "message",
                "send",
                "--fleet-id",
                str(config["fleet_id"]),
                "--agent-id",
                str(config["agent_id"]),
                "--to",
                str(config["to"]),
                "--text",
                f"{config['tag']}-{n}",
                "--quiet",
            ]
        )
        if mode == "cli":
            results.append(send_with_cli([*config["cafleet"], *args]))
        else:
            results.append(send_in_process(args))
    print(json.dumps(results), flush=True)


if __name__ == "__main__":
    main()

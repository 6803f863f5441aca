"""Previews typed into the real TUIs are each submitted once, with the shipped submit delays.

With the native channel switched off, every message to an idle member is typed as a
preview (bracketed paste, the profile's submit delay, Enter, and where the profile knows the
composer, a check that the text left it). The agent has submitted a preview when the model
server receives it; a preview still in the composer is never received, and one submitted
twice is received twice.

`CAFLEET_SUBMIT_TRIALS` sets the previews per agent (default 10; `bench/submit_trials.py`
runs 100), and a `CAFLEET_SUBMIT_DELAY_<AGENT>` set for the run is passed on. With
`CAFLEET_SUBMIT_REPORT=<file>` each agent's figures are appended there as a JSON line.
"""

from __future__ import annotations

import json
import os
import statistics
import time
from pathlib import Path
from typing import Any

import pytest

from realagents.fleet import AGENTS, REPLY_TIMEOUT, Fleet
from realagents.installed import require_agent
from realagents.model_server import ScriptedModelServer

pytestmark = [pytest.mark.realagent, pytest.mark.tmux, pytest.mark.slow]

TRIALS = int(os.environ.get("CAFLEET_SUBMIT_TRIALS") or 10)
SUBMIT_TIMEOUT = 30.0  # a preview not received by then stayed in the composer


def received(server: ScriptedModelServer, task: int, since: int) -> list[dict[str, Any]]:
    """The model calls, from index `since`, whose new user text carries the preview."""
    header = f"[cafleet msg {task} "
    return [
        record
        for record in server.model_requests(since)
        if any(item["kind"] == "user" and header in item["text"] for item in record["new"])
    ]


def wait_received(server: ScriptedModelServer, task: int, since: int) -> float | None:
    """When the model first received the preview (time.time()), or None within the timeout."""
    deadline = time.monotonic() + SUBMIT_TIMEOUT
    while time.monotonic() < deadline:
        if found := received(server, task, since):
            return float(found[0]["time"])
        time.sleep(0.05)
    return None


@pytest.mark.parametrize("agent", AGENTS)
def test_every_preview_typed_into_an_idle_member_is_submitted_once(
    agent: str, fleet: Fleet, agent_tmux: Any, model_server: ScriptedModelServer
) -> None:
    require_agent(agent)
    fleet.env[f"CAFLEET_CHANNELS_{agent.upper()}"] = "keys"
    delay = f"CAFLEET_SUBMIT_DELAY_{agent.upper()}"
    if os.environ.get(delay):
        fleet.env[delay] = os.environ[delay]
    member, pane = fleet.create_member(agent, "typed")
    fleet.wait_for_status(member, "idle", timeout=REPLY_TIMEOUT)
    since = len(model_server.requests)

    tasks: list[int] = []
    lost: list[int] = []
    latencies: list[float] = []
    for n in range(TRIALS):
        started = time.time()
        task = fleet.send_task(member, f"trial {n}")
        tasks.append(task)
        at = wait_received(model_server, task, since)
        if at is None:
            lost.append(task)
            break  # the composer holds it: every later preview would join it
        latencies.append(at - started)
        fleet.wait_for_status(member, "idle", timeout=REPLY_TIMEOUT)

    twice = [task for task in tasks if len(received(model_server, task, since)) > 1]
    report(agent, tasks, lost, twice, latencies)
    assert lost == [], f"never submitted: {lost}\n{agent_tmux.capture(pane)}"
    assert twice == [], f"submitted twice: {twice}"
    assert all(fleet.attempts(task) == [("keys", "sent")] for task in tasks)


def report(
    agent: str, tasks: list[int], lost: list[int], twice: list[int], latencies: list[float]
) -> None:
    target = os.environ.get("CAFLEET_SUBMIT_REPORT")
    if not target:
        return
    ordered = sorted(latencies)
    row = {
        "agent": agent,
        "submit_delay": os.environ.get(f"CAFLEET_SUBMIT_DELAY_{agent.upper()}"),
        "previews": len(tasks),
        "lost": len(lost),
        "twice": len(twice),
        "median_s": statistics.median(ordered) if ordered else None,
        "p90_s": ordered[int(0.9 * (len(ordered) - 1))] if ordered else None,
        "max_s": ordered[-1] if ordered else None,
    }
    with Path(target).open("a", encoding="utf-8") as out:
        out.write(json.dumps(row) + "\n")

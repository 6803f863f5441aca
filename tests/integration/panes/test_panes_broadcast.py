"""A broadcast types into all recipients' live panes together: each gets its preview
submitted once, a pane that went away is skipped without stopping the others, and the tmux
calls of a broadcast do not grow with the number of recipients."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from panes_support import Member, PaneFleet

pytestmark = pytest.mark.tmux

SHIM = '#!/bin/sh\necho "$*" >> "{log}"\nexec {real} "$@"\n'


def counting_path(fleet: PaneFleet) -> tuple[dict[str, str | None], Path]:
    """A PATH whose tmux logs each call before running the real one, and the log."""
    real = shutil.which("tmux")
    assert real is not None
    where, log = fleet.tmp / "shim", fleet.tmp / "tmux-calls.log"
    where.mkdir(exist_ok=True)
    (where / "tmux").write_text(SHIM.format(log=log, real=real), encoding="utf-8")
    (where / "tmux").chmod(0o755)
    return {"PATH": f"{where}:{fleet.env.get('PATH', '')}"}, log


def broadcast(fleet: PaneFleet, text: str, env: dict[str, str | None]) -> str:
    return fleet.ok(
        "message",
        "broadcast",
        *("--fleet-id", str(fleet.fleet_id), "--agent-id", str(fleet.director)),
        *("--text", text),
        env=env,
    )


def submitted_once(members: list[Member], text: str) -> None:
    for member in members:
        member.wait_for(lambda e: e["event"] == "submit" and text in e["text"], text)
        assert sum(text in submitted for submitted in member.submits()) == 1


def test_a_broadcast_costs_the_same_tmux_calls_for_3_and_for_6_recipients(
    pane_fleet: PaneFleet,
) -> None:
    fleet = pane_fleet
    env, log = counting_path(fleet)
    first = [fleet.create_member(f"m{n}") for n in range(3)]

    log.write_text("")
    assert "delivered=3" in broadcast(fleet, "round one", env)
    calls_for_3 = log.read_text().splitlines()
    submitted_once(first, "round one")

    members = first + [fleet.create_member(f"m{n}") for n in range(3, 6)]
    log.write_text("")
    assert "delivered=6" in broadcast(fleet, "round two", env)
    calls_for_6 = log.read_text().splitlines()
    submitted_once(members, "round two")

    assert len(calls_for_6) == len(calls_for_3)
    assert sum(1 for call in calls_for_6 if "send-keys" in call and "Enter" in call) == 1


def test_a_pane_gone_before_the_broadcast_does_not_stop_the_others(
    pane_fleet: PaneFleet,
) -> None:
    fleet = pane_fleet
    members = [fleet.create_member(f"m{n}") for n in range(4)]
    gone = members.pop(1)
    fleet.tmux.run("kill-pane", "-t", gone.pane)

    out = broadcast(fleet, "still there", {})

    assert "delivered=3" in out, out
    assert f"to {gone.agent_id}: task" in out
    submitted_once(members, "still there")
    [row] = fleet.rows(
        "SELECT d.state, d.error FROM deliveries d JOIN tasks t ON t.task_id = d.task_id"
        " WHERE t.to_agent_id = ? AND t.type = 'unicast'",
        gone.agent_id,
    )
    assert (row["state"], row["error"]) == ("skipped", "pane-gone")

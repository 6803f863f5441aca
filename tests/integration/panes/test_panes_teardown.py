"""Closing member panes on a real tmux server: `member delete` and `fleet delete`."""

from __future__ import annotations

import json
import sys

import pytest
from panes_support import Member, PaneFleet, wait_until

pytestmark = pytest.mark.tmux

# A custom "agent" that ignores its input: /exit never makes it leave.
SLEEPER = "import time; time.sleep(600)"


def stand_in(fleet: PaneFleet, name: str, code: str) -> list[str]:
    """A custom agent's argv: python running a script (the agent check wants to see one)."""
    script = fleet.tmp / f"{name}.py"
    script.write_text(code, encoding="utf-8")
    return [sys.executable, str(script)]


def deleted_text(member: Member, status: str, *, forced: bool = False) -> str:
    header = "Member deleted (--force)." if forced else "Member deleted."
    return f"{header}\n  agent_id:  {member.agent_id}\n  pane_id:   {member.pane} ({status})\n"


def pane_ids(fleet: PaneFleet) -> set[str]:
    return set(fleet.tmux.panes())


def assert_deregistered(fleet: PaneFleet, member: Member) -> None:
    [agent] = fleet.rows("SELECT status FROM agents WHERE agent_id = ?", member.agent_id)
    assert agent["status"] == "deregistered"
    assert fleet.rows("SELECT * FROM agent_placements WHERE agent_id = ?", member.agent_id) == []


def test_graceful_delete_types_exit_and_the_pane_closes(pane_fleet: PaneFleet) -> None:
    fleet = pane_fleet
    member = fleet.create_member("worker")

    out = fleet.ok("member", "delete", *fleet.target(member.agent_id))
    assert out == deleted_text(member, "closed")
    assert pane_ids(fleet) == {fleet.director_pane}
    member.wait_event("exit")
    assert member.submits() == ["/exit"]
    assert member.count("esc") == 0
    assert member.events()[-1] == {"event": "exit", "code": 0}
    assert_deregistered(fleet, member)
    assert fleet.ok("member", "list", "--fleet-id", str(fleet.fleet_id)) == "0 members.\n"


def test_delete_escalates_to_a_kill_when_the_agent_ignores_exit(pane_fleet: PaneFleet) -> None:
    fleet = pane_fleet
    member = fleet.create_member("sleeper", agent_argv=stand_in(fleet, "sleeper", SLEEPER))
    # What `member create` recorded as the agent's foreground name, and what tmux shows.
    [placement] = fleet.rows(
        "SELECT agent_commands FROM agent_placements WHERE agent_id = ?", member.agent_id
    )
    shown = fleet.tmux.panes()[member.pane]["command"]
    assert shown in placement["agent_commands"].split(",")

    result = fleet.run("member", "delete", *fleet.target(member.agent_id), "--timeout", "1")
    assert result.code == 0, result
    assert result.stdout == deleted_text(member, "killed after timeout")
    lines = result.stderr.split("\n")
    assert lines[0] == (
        f"Warning: pane {member.pane} did not close within 1.0s after /exit; killing it."
    )
    assert lines[1] == f"--- pane {member.pane} tail (last 80 lines) ---"
    assert "/exit" in lines[2:-2]  # the tty echoed what was typed; the program ignored it
    assert lines[-2:] == ["---", ""]
    assert pane_ids(fleet) == {fleet.director_pane}
    assert_deregistered(fleet, member)


def test_force_delete_kills_without_typing(pane_fleet: PaneFleet) -> None:
    fleet = pane_fleet
    member = fleet.create_member("worker")

    out = fleet.ok("member", "delete", *fleet.target(member.agent_id), "--force")
    assert out == deleted_text(member, "killed", forced=True)
    assert pane_ids(fleet) == {fleet.director_pane}
    assert member.submits() == []
    assert_deregistered(fleet, member)


# A custom "agent" that runs long enough to be seen ready, then turns into `sleep`.
TURNS_INTO_SLEEP = "import os, time; time.sleep(5); os.execvp('sleep', ['sleep', '600'])"


def test_graceful_delete_kills_a_pane_that_does_not_run_the_agent(pane_fleet: PaneFleet) -> None:
    fleet = pane_fleet
    member = fleet.create_member("odd", agent_argv=stand_in(fleet, "odd", TURNS_INTO_SLEEP))
    wait_until(lambda: fleet.tmux.panes()[member.pane]["command"] == "sleep", "sleep in front")

    out = fleet.ok("member", "delete", *fleet.target(member.agent_id))
    assert out == deleted_text(member, "killed: not running custom")
    assert pane_ids(fleet) == {fleet.director_pane}


def test_a_pane_that_is_already_gone_is_skipped_by_pushes_and_deleted_as_closed(
    pane_fleet: PaneFleet,
) -> None:
    fleet = pane_fleet
    member = fleet.create_member("worker")
    fleet.tmux.run("kill-pane", "-t", member.pane)  # behind CAFleet's back

    [listed] = fleet.json("member", "list", "--fleet-id", str(fleet.fleet_id))
    assert (listed["agent_id"], listed["status"], listed["pane_state"]) == (
        member.agent_id,
        "active",
        "gone",
    )
    assert fleet.ok("member", "show", *fleet.target(member.agent_id)) == (
        f"{member.agent_id} worker pane-gone\n"
    )
    sent = fleet.send(fleet.director, member.agent_id, "anyone there?")
    assert sent["notification"] == {"state": "skipped", "transport": "tmux", "reason": "pane-gone"}
    out = fleet.ok("member", "delete", *fleet.target(member.agent_id))
    assert out == deleted_text(member, "closed")
    assert_deregistered(fleet, member)


def test_fleet_delete_closes_kills_and_reports_every_member_pane(pane_fleet: PaneFleet) -> None:
    fleet = pane_fleet
    polite = fleet.create_member("polite")
    stubborn = fleet.create_member("stubborn", agent_argv=stand_in(fleet, "sleeper", SLEEPER))
    vanished = fleet.create_member("vanished")
    fleet.tmux.run("kill-pane", "-t", vanished.pane)
    assert pane_ids(fleet) == {fleet.director_pane, polite.pane, stubborn.pane}

    out = fleet.ok("fleet", "delete", "--fleet-id", str(fleet.fleet_id), "--timeout", "1")
    assert out == (
        f"Deleted fleet {fleet.fleet_id}. Deregistered 5 agents.\n"
        "  panes: 1 closed, 1 killed, 1 already gone\n"
    )
    assert pane_ids(fleet) == {fleet.director_pane}  # no member pane left behind
    polite.wait_event("exit")
    assert polite.submits() == ["/exit"]
    assert polite.count("esc") == 0
    for member in (polite, stubborn, vanished):
        assert_deregistered(fleet, member)
    [row] = fleet.rows("SELECT deleted_at FROM fleets WHERE fleet_id = ?", fleet.fleet_id)
    assert row["deleted_at"] is not None


def test_fleet_delete_with_keep_panes_leaves_the_agents_running(pane_fleet: PaneFleet) -> None:
    fleet = pane_fleet
    first = fleet.create_member("first")
    second = fleet.create_member("second")

    out = fleet.ok("fleet", "delete", "--fleet-id", str(fleet.fleet_id), "--keep-panes")
    assert out == (
        f"Deleted fleet {fleet.fleet_id}. Deregistered 4 agents.\n"
        "  panes: 2 left running (--keep-panes)\n"
    )
    assert pane_ids(fleet) == {fleet.director_pane, first.pane, second.pane}
    for member in (first, second):
        assert member.submits() == []
        assert member.count("exit") == 0
        assert_deregistered(fleet, member)


def test_fleet_delete_json_lists_each_pane(pane_fleet: PaneFleet) -> None:
    fleet = pane_fleet
    member = fleet.create_member("worker")

    out = fleet.ok("fleet", "delete", "--fleet-id", str(fleet.fleet_id), "--json")
    assert json.loads(out) == {
        "fleet_id": fleet.fleet_id,
        "deregistered": 3,
        "panes": [{"agent_id": member.agent_id, "pane_id": member.pane, "status": "closed"}],
    }
    assert pane_ids(fleet) == {fleet.director_pane}


def assert_no_member_pane(fleet: PaneFleet) -> None:
    assert set(fleet.tmux.panes()) == {fleet.director_pane}


def test_graceful_delete_leaves_no_dead_pane_with_remain_on_exit(pane_fleet: PaneFleet) -> None:
    fleet = pane_fleet
    fleet.tmux.run("set-option", "-g", "remain-on-exit", "on")  # a common user setting
    member = fleet.create_member("worker")

    out = fleet.ok("member", "delete", *fleet.target(member.agent_id))
    member.wait_event("exit")  # the agent did leave on /exit
    assert out == deleted_text(member, "closed")
    assert_no_member_pane(fleet)


def test_fleet_delete_leaves_no_dead_pane_with_remain_on_exit(pane_fleet: PaneFleet) -> None:
    fleet = pane_fleet
    fleet.tmux.run("set-option", "-g", "remain-on-exit", "on")
    member = fleet.create_member("worker")

    out = fleet.ok("fleet", "delete", "--fleet-id", str(fleet.fleet_id))
    member.wait_event("exit")
    assert out.endswith("  panes: 1 closed, 0 killed, 0 already gone\n")
    assert_no_member_pane(fleet)

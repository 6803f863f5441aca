"""Placements record their host (`CAFLEET_HOST`, else the machine's name); a command run as
another host never touches those panes (their ids mean nothing there) and says so in one
line. Two hosts are simulated on one machine by CAFLEET_HOST alone."""

from __future__ import annotations

import os

import pytest
from panes_support import PaneFleet

pytestmark = pytest.mark.tmux

OTHER = {"CAFLEET_HOST": "build-server"}


def test_members_record_the_director_s_host_and_list_it(pane_fleet: PaneFleet) -> None:
    fleet = pane_fleet
    member = fleet.create_member("worker")

    listed = fleet.json("member", "list", "--fleet-id", str(fleet.fleet_id))
    [row] = [m for m in listed if m["agent_id"] == member.agent_id]
    assert row["placement"]["host"] == os.uname().nodename
    hosts = fleet.rows("SELECT agent_id, host FROM agent_placements ORDER BY agent_id")
    assert {r["agent_id"]: r["host"] for r in hosts} == {
        fleet.director: os.uname().nodename,
        member.agent_id: os.uname().nodename,
    }


def test_pane_verbs_from_another_host_with_no_relay_there_are_one_line_and_type_nothing(
    pane_fleet: PaneFleet,
) -> None:
    fleet = pane_fleet
    member = fleet.create_member("worker")
    before = fleet.tmux.capture(member.pane)

    for verb in (("exec", "touch should-not-exist"), ("ping",), ("capture",)):
        result = fleet.run("member", verb[0], *fleet.target(member.agent_id), *verb[1:],
                           env=OTHER)  # fmt: skip
        assert result.code != 0, result
        assert result.stdout == ""
        assert result.stderr == (
            f"Error: no relay of host {os.uname().nodename!r} is alive (never seen);"
            " start `cafleet relay` on that host\n"
        ), result

    assert not (fleet.tmp / "should-not-exist").exists()
    assert fleet.tmux.capture(member.pane) == before
    # from the member's own host the same verbs work as ever
    assert "worker" in fleet.ok("member", "ping", *fleet.target(member.agent_id))


def test_a_message_sent_from_another_host_is_stored_and_left_for_the_relay(
    pane_fleet: PaneFleet,
) -> None:
    fleet = pane_fleet
    member = fleet.create_member("worker")

    out = fleet.ok("message", "send", "--fleet-id", str(fleet.fleet_id), "--agent-id",
                   str(fleet.director), "--to", str(member.agent_id), "--text", "hello there",
                   env=OTHER)  # fmt: skip

    assert out.endswith(
        f"preview queued for host {os.uname().nodename!r}: its relay (`cafleet relay` there)"
        " delivers it (`message show --full` tells the outcome)\n"
    ), out
    [task] = fleet.rows("SELECT * FROM tasks WHERE text = 'hello there'")
    assert task["to_agent_id"] == member.agent_id
    assert "hello there" not in fleet.tmux.capture(member.pane)


def test_a_bad_cafleet_host_is_one_line(pane_fleet: PaneFleet) -> None:
    fleet = pane_fleet
    member = fleet.create_member("worker")

    result = fleet.run("member", "ping", *fleet.target(member.agent_id),
                       env={"CAFLEET_HOST": "not a host"})  # fmt: skip

    assert result.code != 0
    assert result.stderr.startswith("Error: CAFLEET_HOST must be 1-63 letters")
    assert result.stderr.count("\n") == 1


def test_member_create_for_a_host_with_no_relay_is_one_line_and_stores_nothing(
    pane_fleet: PaneFleet,
) -> None:
    fleet = pane_fleet
    before = fleet.rows("SELECT agent_id FROM agents")

    # from another host, beside the Director: its host's relay would open the pane
    beside = fleet.member_create("remote", *fleet.custom_options(["sleep", "60"]), env=OTHER)
    # from the Director's host, on a host nobody runs a relay on
    elsewhere = fleet.member_create("far", *fleet.custom_options(["sleep", "60"]),
                                    "--host", "build-server")  # fmt: skip
    bad_name = fleet.member_create("bad", *fleet.custom_options(["sleep", "60"]),
                                   "--host", "no such host")  # fmt: skip

    assert beside.code == elsewhere.code == 1, (beside, elsewhere)
    assert beside.stderr == (
        f"Error: no relay of host {os.uname().nodename!r} is alive (never seen);"
        " start `cafleet relay` on that host\n"
    ), beside
    assert elsewhere.stderr == (
        "Error: no relay of host 'build-server' is alive (never seen);"
        " start `cafleet relay` on that host\n"
    ), elsewhere
    assert bad_name.code == 2 and "'no such host' is not a host name" in bad_name.stderr
    assert fleet.rows("SELECT agent_id FROM agents") == before

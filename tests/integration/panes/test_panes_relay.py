"""`cafleet relay`: the member's host carries out what commands on another host leave for
its panes. Two hosts are simulated on one machine: the fleet and its member are recorded on
this machine's name, and the "other host" is CAFLEET_HOST=build-server on the same store."""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Iterator

import pytest
from panes_support import PaneFleet, wait_until

pytestmark = pytest.mark.tmux

OTHER = {"CAFLEET_HOST": "build-server"}
HERE = os.uname().nodename


class Relay:
    """A `cafleet relay` of the member's host, started and stopped by the test."""

    def __init__(self, fleet: PaneFleet) -> None:
        self._fleet = fleet
        self.proc: subprocess.Popen[str] | None = None

    def start(self) -> None:
        self.proc = self._fleet.popen("relay", "--poll", "0.1")
        pid = self.proc.pid
        wait_until(
            lambda: self._fleet.rows("SELECT pid FROM relays WHERE pid = ?", pid) or None,
            "the relay's beat",
        )

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.kill()
        self.proc.wait(10)

    def stop(self) -> tuple[int, str]:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGTERM)
        out, _ = self.proc.communicate(timeout=20)
        return self.proc.returncode, out


@pytest.fixture
def relay(pane_fleet: PaneFleet) -> Iterator[Relay]:
    relay = Relay(pane_fleet)
    yield relay
    if relay.proc is not None and relay.proc.poll() is None:
        relay.kill()


def _send(fleet: PaneFleet, to: int, text: str) -> str:
    return fleet.ok("message", "send", "--fleet-id", str(fleet.fleet_id), "--agent-id",
                    str(fleet.director), "--to", str(to), "--text", text,
                    env=OTHER)  # fmt: skip


def test_messages_from_another_host_wait_for_the_relay_and_each_reaches_the_pane_once(
    pane_fleet: PaneFleet, relay: Relay
) -> None:
    fleet = pane_fleet
    member = fleet.create_member("worker")

    out = _send(fleet, member.agent_id, "sent while no relay ran")
    assert out.endswith(
        f"preview queued for host {HERE!r}: its relay (`cafleet relay` there) delivers it"
        " (`message show --full` tells the outcome)\n"
    ), out
    [first] = fleet.rows("SELECT task_id FROM tasks WHERE text = 'sent while no relay ran'")
    assert fleet.delivery(first["task_id"])["state"] == "pending"
    assert member.submits() == []

    relay.start()  # catches up on what waited
    member.wait_for(lambda e: e["event"] == "submit", "the first preview")
    assert fleet.delivery(first["task_id"])["state"] == "sent"

    relay.kill()  # down without leaving: its beat goes stale
    _send(fleet, member.agent_id, "sent while the relay was down")
    relay.start()
    member.wait_for(lambda e: e["event"] == "submit", "the second preview", count=2)

    code, out = relay.stop()
    assert code == 0
    assert out.rstrip().endswith("relay stopped")
    submits = member.submits()
    assert len(submits) == 2, submits
    assert submits[0].endswith("sent while no relay ran")
    assert submits[1].endswith("sent while the relay was down")
    states = fleet.rows("SELECT state FROM deliveries WHERE recipient_agent_id = ?",
                        member.agent_id)  # fmt: skip
    assert [r["state"] for r in states] == ["sent", "sent"]
    assert fleet.rows("SELECT * FROM relays") == []  # a relay that stops leaves


def test_pane_verbs_from_another_host_are_run_by_the_member_s_relay(
    pane_fleet: PaneFleet, relay: Relay
) -> None:
    fleet = pane_fleet
    member = fleet.create_member("worker")
    relay.start()
    target = fleet.target(member.agent_id)

    local = fleet.ok("member", "capture", *target, "--lines", "20")
    remote = fleet.ok("member", "capture", *target, "--lines", "20", env=OTHER)
    assert remote == local

    fleet.ok("member", "ping", *target, env=OTHER)
    member.wait_for(lambda e: e["event"] == "submit", "the poll trigger")

    fleet.ok("member", "exec", *target, "touch made-by-the-relay", env=OTHER)
    made = fleet.tmp / "made-by-the-relay"
    wait_until(made.exists, "the file of the command the relay ran")

    missing = fleet.run("member", "capture", "--fleet-id", str(fleet.fleet_id),
                        "--member-id", "999", env=OTHER)  # fmt: skip
    assert missing.code != 0 and missing.stderr.count("\n") == 1, missing


def test_a_second_relay_of_one_host_is_refused_in_one_line(
    pane_fleet: PaneFleet, relay: Relay
) -> None:
    relay.start()
    assert relay.proc is not None

    second = pane_fleet.run("relay")

    assert second.code != 0
    assert second.stderr == (
        f"Error: a relay for host {HERE!r} is already running (pid {relay.proc.pid})\n"
    ), second

"""A fleet over two hosts sharing one PostgreSQL store (tests/support/two_hosts.py): the
Director on host A spawns a member on host B, messages it, gets its reply in its own pane,
captures it across, a relay of B killed and started again delivers what was sent meanwhile
(each message once), the monitor on A wakes its watcher on B, and `member delete` and
`fleet delete` on A close the panes on B. Two private tmux servers, two relays, one real
PostgreSQL server."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from support.cli import CAFLEET
from support.tmux import tmux_binary
from support.two_hosts import (
    DEMO_AGENT,
    HOST_A,
    HOST_B,
    TwoHosts,
    two_hosts,
    wait_until,
)

pytestmark = [pytest.mark.postgres, pytest.mark.tmux, pytest.mark.slow]


@pytest.fixture
def hosts(tmp_path: Path, postgres_url: str) -> Iterator[TwoHosts]:
    binary = tmux_binary()
    if binary is None:
        pytest.skip("tmux is not installed")
    with two_hosts(tmp_path, postgres_url, binary) as made:
        yield made


def pongs_to_director(hosts: TwoHosts) -> list[str]:
    """The replies shown in the Director's pane (its agent holds each preview)."""
    return [e["text"] for e in hosts.director_events("submit") if "pong" in e["text"]]


def listed(hosts: TwoHosts, member: int, pane_state: str | None) -> dict[str, Any] | None:
    """The member as `member list --json` on A shows it, once its pane state is this."""
    rows = hosts.a.json("member", "list", "--fleet-id", str(hosts.fleet_id))
    [row] = [m for m in rows if m["agent_id"] == member]
    return row if row["pane_state"] == pane_state else None


def ping_and_capture(hosts: TwoHosts, member: int) -> str:
    """`ping 1` from A's Director to the member on B (B's relay types the preview, A's relay
    the reply), then the member's screen as A captures it through B's relay."""
    sent = hosts.send(hosts.a, hosts.director, member, "ping 1")
    assert sent["notification"]["state"] == "pending"
    wait_until(lambda: pongs_to_director(hosts), "pong 1 in the Director's pane")
    captured: str = hosts.a.ok("member", "capture", "--fleet-id", str(hosts.fleet_id),
                               "--member-id", str(member), "--lines", "40")  # fmt: skip
    return captured


def pings_taken(hosts: TwoHosts) -> list[str]:
    return [e["text"] for e in hosts.member_events("submit") if "ping" in e["text"]]


def test_a_fleet_over_two_hosts_spawns_talks_captures_survives_a_relay_crash_and_deletes(
    hosts: TwoHosts,
) -> None:
    a, b = hosts.a, hosts.b
    member = hosts.spawn_on_b("builder")

    # the member's pane is in B's tmux server, beside B's relay, and is recorded on B
    b_panes = b_pane_ids(hosts)
    row = wait_until(lambda: listed(hosts, member, "running"), "B's relay to report the pane")
    placement = row["placement"]
    assert placement["host"] == HOST_B
    assert placement["mux_pane_id"] in b_panes and placement["mux_pane_id"] != hosts.relay_b_pane
    assert placement["relay"]["alive"] is True
    wait_until(lambda: hosts.member_events("ready"), "the member's agent")

    captured = ping_and_capture(hosts, member)
    assert "SUBMIT:" in captured and "ping 1" in captured
    local = b.tmux.run("capture-pane", "-p", "-t", placement["mux_pane_id"])
    assert captured.strip().splitlines()[-1] in local

    # B's relay crashes; two messages wait for it, then reach the pane once each
    hosts.kill_relay_b()
    for n in (2, 3):
        sent = hosts.send(a, hosts.director, member, f"ping {n}")
        assert sent["notification"]["state"] == "pending"
    assert [p for p in pings_taken(hosts) if re.search(r"ping [23]\b", p)] == []
    # nobody can tell the pane's state now; the relay's liveness says why
    down = wait_until(lambda: listed(hosts, member, None), "B's relay to be taken for down")
    assert down["placement"]["relay"]["alive"] is False
    hosts.start_relay_b()
    # the member answers both on the first preview's poll; the second preview, typed while
    # it works, is taken once it is free again: maybe after its pongs reached the Director
    wait_until(
        lambda: len(pongs_to_director(hosts)) >= 3, "pong 2 and pong 3 in the Director's pane"
    )
    wait_until(
        lambda: all(
            any(re.search(rf"\bping {n}\b", t) for t in pings_taken(hosts)) for n in (2, 3)
        ),
        "the previews of ping 2 and ping 3 in the member's pane",
    )

    ledger = hosts.rows(
        "SELECT t.text, d.state, d.error FROM deliveries d JOIN tasks t ON t.task_id = d.task_id"
        " WHERE d.recipient_agent_id = :member ORDER BY d.task_id, d.attempted_at",
        member=member,
    )
    seen = f"member's submits {pings_taken(hosts)}; its ledger {ledger}"
    for n in (1, 2, 3):
        assert sum(bool(re.search(rf"\bping {n}\b", t)) for t in pings_taken(hosts)) == 1, seen
        assert sum(bool(re.search(rf"\bpong {n}\b", t)) for t in pongs_to_director(hosts)) == 1, n
    assert [(text, state) for text, state, _ in ledger] == [
        ("ping 1", "sent"), ("ping 2", "sent"), ("ping 3", "sent"),
    ]  # fmt: skip

    # doctor on A sees both hosts, each with a live relay and its panes
    report = a.json("doctor")
    by_host = {h["host"]: h for h in report["hosts"]["hosts"]}
    assert report["hosts"]["this_host"] == HOST_A
    assert (by_host[HOST_A]["panes"], by_host[HOST_A]["relay_alive"]) == (1, True)
    assert (by_host[HOST_B]["panes"], by_host[HOST_B]["relay_alive"]) == (1, True)
    assert by_host[HOST_B]["relay_pane_id"] == hosts.relay_b_pane
    text = a.ok("doctor").splitlines()
    hosts_lines = text[text.index("hosts:") + 1 : text.index("on PATH:")]
    assert hosts_lines == [
        f"  this host:  {HOST_A}",
        f"  {HOST_A}: 1 pane, relay alive (pid {hosts.relay_pid(HOST_A)})",
        f"  {HOST_B}: 1 pane, relay alive (pid {hosts.relay_pid(HOST_B)})",
    ]

    # the monitor runs on A; the monitoring member is on B: its wake goes through B's relay
    watcher = spawn_watcher_on_b(hosts)
    a.ok("monitor", "config", "--fleet-id", str(hosts.fleet_id), "--member-id", str(member),
         "--interval", "1")  # fmt: skip
    monitor = subprocess.Popen(
        [*CAFLEET, "monitor", "start", "--fleet-id", str(hosts.fleet_id), "--tick", "1"],
        env=hosts.a_background_env(), stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        wake = wait_until(lambda: wakes_naming(hosts, member), "a wake on B naming the member")
    finally:
        monitor.terminate()
        monitor.wait(30)
    assert wake[0].startswith("[monitor] wake")

    # delete across: B's relay closes the pane (the demo agent obeys /exit)
    deleted = a.ok("member", "delete", "--fleet-id", str(hosts.fleet_id),
                   "--member-id", str(member))  # fmt: skip
    assert deleted.startswith("Member deleted.")
    assert f"{placement['mux_pane_id']} (closed)" in deleted
    assert placement["mux_pane_id"] not in b_pane_ids(hosts)

    # fleet delete on A closes what is left on B (the watcher's pane) through B's relay
    [watcher_pane] = [m["placement"]["mux_pane_id"] for m in
                      a.json("member", "list", "--fleet-id", str(hosts.fleet_id))
                      if m["agent_id"] == watcher]  # fmt: skip
    gone = a.json("fleet", "delete", "--fleet-id", str(hosts.fleet_id))
    assert gone["panes"] == [{"agent_id": watcher, "pane_id": watcher_pane, "status": "closed"}]
    assert watcher_pane not in b_pane_ids(hosts)
    assert b_pane_ids(hosts) == [hosts.relay_b_pane]  # B's relay's own pane stays


def spawn_watcher_on_b(hosts: TwoHosts) -> int:
    out = hosts.a.ok(
        "member", "create", "--fleet-id", str(hosts.fleet_id), "--agent-id", str(hosts.director),
        "--name", "watcher", "--description", "watches", "--role", "monitor",
        "--host", HOST_B, "--coding-agent", "custom",
        "--agent-command", f"{DEMO_AGENT} {{prompt}}", "--text", "You watch the fleet.",
    )  # fmt: skip
    return int(out.split()[0])


def wakes_naming(hosts: TwoHosts, member: int) -> list[str]:
    return [
        e["text"]
        for e in hosts.member_events("submit")
        if e["text"].startswith("[monitor] wake") and f"{member}" in e["text"]
    ]


def b_pane_ids(hosts: TwoHosts) -> list[str]:
    return hosts.b.tmux.run("list-panes", "-a", "-F", "#{pane_id}").split()


@pytest.fixture
def hosts_with_b_as_a_service(tmp_path: Path, postgres_url: str) -> Iterator[TwoHosts]:
    binary = tmux_binary()
    if binary is None:
        pytest.skip("tmux is not installed")
    with two_hosts(tmp_path, postgres_url, binary, relay_b_in_pane=False) as made:
        yield made


def test_a_relay_run_under_nohup_spawns_members_in_a_tmux_session_of_its_own(
    hosts_with_b_as_a_service: TwoHosts,
) -> None:
    hosts = hosts_with_b_as_a_service
    a, b = hosts.a, hosts.b

    member = hosts.spawn_on_b("builder")  # asked on A, carried out by B's relay

    started = hosts.relay_b_output.read_text().splitlines()[0]
    marked = "#{?#{@cafleet-relay-home},#{pane_id},}"  # the pane members open beside
    home = hosts.relay_session(b, "list-panes", "-s", "-t", "=members", "-F", marked).strip()
    assert started == (
        f"relay started (host {HOST_B!r}, pid {hosts.relay_pid(HOST_B)}, in no pane: members"
        f" spawned here from other hosts open in tmux session 'members' beside pane {home};"
        " attach with `tmux -L cafleet attach -t members`)"
    )

    row = wait_until(lambda: listed(hosts, member, "running"), "B's relay to report the pane")
    placement = row["placement"]
    assert (placement["host"], placement["mux_session"]) == (HOST_B, "members")
    session_panes = hosts.relay_session(b, "list-panes", "-s", "-t", "=members", "-F",
                                        "#{pane_id}").split()  # fmt: skip
    assert session_panes == [home, placement["mux_pane_id"]]
    assert b_pane_ids(hosts) == [b.tmux.pane_id]  # nothing opened in B's other tmux server
    wait_until(lambda: hosts.member_events("ready"), "the member's agent")

    assert "ping 1" in ping_and_capture(hosts, member)  # messaged and captured across

    # deleted across: B's relay closes the member's pane; the session's own pane stays
    deleted = a.ok("member", "delete", "--fleet-id", str(hosts.fleet_id),
                   "--member-id", str(member))  # fmt: skip
    assert f"{placement['mux_pane_id']} (closed)" in deleted
    after = hosts.relay_session(b, "list-panes", "-s", "-t", "=members", "-F", "#{pane_id}")
    assert after.split() == [home]

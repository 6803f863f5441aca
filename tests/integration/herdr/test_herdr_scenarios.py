"""Members, messages and the monitor on herdr, end to end: the installed CLI, a real SQLite
file, the herdr driver over the fake herdr server's socket, the demo agent running in real
pseudo-terminals behind it."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.slow

PREVIEW_HEAD = "[cafleet msg "


def placement_row(fleet: Any, agent_id: int) -> sqlite3.Row:
    conn = sqlite3.connect(fleet.db_path)
    conn.row_factory = sqlite3.Row
    try:
        row = conn.execute(
            "SELECT * FROM agent_placements WHERE agent_id = ?", (agent_id,)
        ).fetchone()
    finally:
        conn.close()
    assert row is not None
    return row


def listed_labels(server: Any) -> dict[str, str | None]:
    """Each pane's label as herdr's `pane.list` reports it."""
    request = json.dumps({"id": "t", "method": "pane.list", "params": {}}).encode()
    return {p["pane_id"]: p.get("label") for p in server.handle_line(request)["result"]["panes"]}


# --------------------------------------------------------------------------- the fleet


def test_fleet_create_records_herdr_and_the_socket(herdr_fleet: Any) -> None:
    placement = herdr_fleet.created["director"]["placement"]
    row = placement_row(herdr_fleet, herdr_fleet.director)

    assert placement["backend"] == "herdr"
    assert (placement["mux_session"], placement["mux_window_id"], placement["mux_pane_id"]) == (
        "w1",
        "w1:t1",
        herdr_fleet.server.root_pane,
    )
    assert row["mux_socket"] == herdr_fleet.server.socket_path


# --------------------------------------------------------------------------- members


def test_a_member_runs_the_demo_agent_in_a_herdr_pane_beside_the_director(
    herdr_fleet: Any,
) -> None:
    server = herdr_fleet.server

    member = herdr_fleet.member("alice")

    row = placement_row(herdr_fleet, member.agent_id)
    assert (row["backend"], row["mux_socket"], row["mux_pane_id"]) == (
        "herdr",
        server.socket_path,
        member.pane_id,
    )
    rects = server.rects(member.pane_id)
    director = rects[server.root_pane]
    assert rects[member.pane_id].x == director.x + director.width  # right of the Director
    ready = member.events("ready")[0]
    assert (ready["fleet_id"], ready["agent_id"]) == (herdr_fleet.fleet_id, member.agent_id)
    # the launcher replaced the shell: the agent is what runs in front, no launch file is left
    shown = herdr_fleet.json(
        "member", "show", "--fleet-id", str(herdr_fleet.fleet_id),
        "--member-id", str(member.agent_id),
    )  # fmt: skip
    assert shown["placement"]["backend"] == "herdr"
    runtime = Path(herdr_fleet.env["XDG_RUNTIME_DIR"]) / "cafleet"
    assert list(runtime.glob("launch-*.json")) == []


def test_a_member_s_pane_is_labelled_with_its_name_and_id(herdr_fleet: Any) -> None:
    server = herdr_fleet.server

    alice = herdr_fleet.member("alice")

    labels = listed_labels(server)
    assert labels[server.root_pane] is None  # the Director's pane: nobody wrote to it yet
    assert labels[alice.pane_id].startswith(f"alice #{alice.agent_id} · ")  # then its status
    assert labels[alice.pane_id].endswith(" · 0 unread")


def test_a_refused_label_does_not_fail_the_spawn(herdr_fleet: Any) -> None:
    server = herdr_fleet.server
    server.fail("pane.rename", "invalid_request", "unknown method pane.rename", times=100)

    bob = herdr_fleet.member("bob")

    assert "pane.rename" in server.methods()  # at the spawn, then once the agent is ready
    assert listed_labels(server) == {server.root_pane: None, bob.pane_id: None}


def test_a_status_herdr_pushes_reaches_the_next_member_list(herdr_fleet: Any) -> None:
    server = herdr_fleet.server
    worker = herdr_fleet.member("worker")

    def listed_status() -> str | None:
        members = herdr_fleet.json("member", "list", "--fleet-id", str(herdr_fleet.fleet_id))
        [row] = [m for m in members if m["agent_id"] == worker.agent_id]
        return row["agent_status"]

    assert listed_status() == "unknown"  # a custom agent says nothing of itself
    for pushed, shown in (("working", "working"), ("blocked", "waiting"), ("idle", "idle")):
        server.set_agent_status(worker.pane_id, pushed)
        # the very next listing shows it: the status is read when the list runs, so the
        # delay is one CLI start (timed in bench/, not here)
        assert [listed_status() for _ in range(2)] == [shown] * 2, pushed


def test_later_members_stack_below_in_one_column(herdr_fleet: Any) -> None:
    server = herdr_fleet.server

    members = [herdr_fleet.member(name) for name in ("m1", "m2", "m3")]

    rects = server.rects(server.root_pane)
    column = [rects[m.pane_id] for m in members]
    assert len({r.x for r in column}) == 1
    assert [r.y for r in column] == sorted(r.y for r in column)
    assert max(r.height for r in column) - min(r.height for r in column) <= 1


def test_member_delete_closes_the_pane_after_exit(herdr_fleet: Any) -> None:
    server = herdr_fleet.server
    member = herdr_fleet.member("bob")

    herdr_fleet.ok(
        "member", "delete", "--fleet-id", str(herdr_fleet.fleet_id),
        "--member-id", str(member.agent_id),
    )  # fmt: skip

    assert "/exit" in member.submissions()
    assert member.events("exit") == [{"event": "exit", "code": 0}]
    herdr_fleet.wait(lambda: not server.has_pane(member.pane_id), f"{member.pane_id} to close")
    assert server.pane_ids() == [server.root_pane]
    assert server.rects(server.root_pane)[server.root_pane].width == server.columns


def test_member_capture_reads_the_agent_screen(herdr_fleet: Any) -> None:
    member = herdr_fleet.member("carol")

    captured = herdr_fleet.json(
        "member", "capture", "--fleet-id", str(herdr_fleet.fleet_id),
        "--member-id", str(member.agent_id), "--lines", "20",
    )  # fmt: skip

    text = captured["content"] if isinstance(captured, dict) else str(captured)
    assert f"cafleet demo agent {member.agent_id} ready" in text
    assert "exec " not in text  # the launcher cleared the shell's echo of its own line


def test_a_capture_beyond_herdr_s_thousand_rows_says_what_was_cut(herdr_fleet: Any) -> None:
    member = herdr_fleet.member("erin")
    target = ("--fleet-id", str(herdr_fleet.fleet_id), "--member-id", str(member.agent_id))
    herdr_fleet.ok("member", "exec", *target, "seq 1 3000")
    herdr_fleet.wait(
        lambda: "3000" in herdr_fleet.server.screen_text(member.pane_id).split("\n")[-5:],
        "the 3000 lines of output",
    )

    cut = herdr_fleet("member", "capture", *target, "--lines", "5000")
    shot = herdr_fleet.json("member", "capture", *target, "--lines", "5000")
    whole = herdr_fleet("member", "capture", *target, "--lines", "20")
    small = herdr_fleet.json("member", "capture", *target, "--lines", "20")

    shown = cut.stdout.removesuffix("\n").split("\n")
    assert cut.code == 0  # the capture worked: herdr answered what it reads
    assert 900 < len(shown) <= 1000 and "3000" in shown
    assert cut.stderr == (
        f"Warning: captured the last {len(shown)} of the 5000 lines asked: the multiplexer"
        " reads at most 1000 rows of a pane.\n"
    )
    assert (shot["truncated"], shot["lines"]) == (True, len(shot["content"].split("\n")))
    assert (whole.code, whole.stderr) == (0, "")
    assert (small["truncated"], small["lines"]) == (False, 20)


# --------------------------------------------------------------------------- messages


def test_a_preview_arrives_as_one_submission(herdr_fleet: Any) -> None:
    member = herdr_fleet.member("dave")

    sent = herdr_fleet.json(
        "message", "send", "--fleet-id", str(herdr_fleet.fleet_id),
        "--agent-id", str(herdr_fleet.director), "--to", str(member.agent_id),
        "--text", "hello over herdr",
    )  # fmt: skip

    assert sent["notification_sent"] is True
    assert sent["notification"]["transport"] == "herdr"
    task_id = sent["task"]["id"]
    submitted = herdr_fleet.wait(
        lambda: [s for s in member.submissions() if s.startswith(PREVIEW_HEAD)],
        "the preview to be submitted",
    )
    assert len(submitted) == 1
    # one line: a custom agent may not have enabled bracketed paste
    head, body = submitted[0].split("] ")
    assert head.startswith(f"[cafleet msg {task_id} from {herdr_fleet.director} ")
    assert body == "hello over herdr"
    typed = herdr_fleet.server.typed(member.pane_id)
    assert b"\x1b[200~[cafleet msg " in typed  # one bracketed paste: herdr saw the request
    # the agent polled and acknowledged it as itself
    herdr_fleet.wait(
        lambda: any(e.get("task_id") == task_id for e in member.events("ack")),
        "the demo agent to ACK the message",
    )


def test_members_answer_each_other_through_herdr_panes(herdr_fleet: Any) -> None:
    ping = herdr_fleet.member("ping", options="--rounds 2")
    pong = herdr_fleet.member("pong", options="--rounds 2")

    herdr_fleet.ok(
        "message", "send", "--fleet-id", str(herdr_fleet.fleet_id),
        "--agent-id", str(ping.agent_id), "--to", str(pong.agent_id), "--text", "ping 1",
    )  # fmt: skip

    herdr_fleet.wait(
        lambda: any(e.get("text") == "pong 2" for e in pong.events("reply")),
        "two rounds of ping-pong",
    )
    assert [e["text"] for e in ping.events("reply")] == ["ping 2"]


# --------------------------------------------------------------------------- the monitor


def test_a_blocked_member_wakes_the_monitoring_member(herdr_fleet: Any) -> None:
    server = herdr_fleet.server
    watcher = herdr_fleet.member("watcher", role="monitor")
    worker = herdr_fleet.member("worker")
    loop = herdr_fleet.start_loop("--tick", "1")
    loop.wait_for_line(rf"^monitor loop started \(fleet {herdr_fleet.fleet_id}, tick 1s")

    def wakes() -> list[str]:
        return [s for s in watcher.submissions() if s.startswith("[monitor] wake:")]

    # first tick: everyone is due on the interval; herdr reports `unknown` for the demo agent
    herdr_fleet.wait(wakes, "the first wake")
    first = len(wakes())
    start = len(server.request_log())

    server.set_agent_status(worker.pane_id, "blocked")

    blocked = herdr_fleet.wait(
        lambda: [w for w in wakes()[first:] if "status:blocked" in w], "a status:blocked wake"
    )
    assert f"member {worker.agent_id} (worker) [status:blocked]" in blocked[0]
    loop.wait_for_line(rf"due agent {worker.agent_id} \(worker\) \[status:blocked\]")
    # per tick: one pane.list for the sweep, then the watcher's pane alone is looked at
    during = server.request_log()[start:]
    looked_at = {p.get("pane_id") for m, p in during if m in ("pane.get", "pane.process_info")}
    assert looked_at == {watcher.pane_id}
    assert {m for m, _ in during} <= {
        "ping", "pane.list", "pane.get", "pane.process_info", "pane.send_text", "pane.send_keys",
        "notification.show", "pane.rename",  # the panes' titles follow their statuses
    }  # fmt: skip
    assert [n["title"] for n in server.notifications] == [f"worker #{worker.agent_id} is blocked"]
    assert loop.err == []


def test_idle_ticks_of_monitor_start_send_herdr_nothing_and_a_state_retitles(
    herdr_fleet: Any,
) -> None:
    server = herdr_fleet.server
    watcher = herdr_fleet.member("watcher", role="monitor")
    worker = herdr_fleet.member("worker")
    loop = herdr_fleet.start_loop("--tick", "1")
    herdr_fleet.wait(
        lambda: any(s.startswith("[monitor] wake:") for s in watcher.submissions()),
        "the first wake",
    )
    herdr_fleet.wait(lambda: server.subscribers() >= 1, "the monitor's subscription")

    def ticked() -> str:
        status = herdr_fleet.json("monitor", "status", "--fleet-id", str(herdr_fleet.fleet_id))
        return str(status["runtime"]["last_tick_at"])

    def label() -> str | None:
        with server.lock:  # read without a request on the wire
            return server.panes[worker.pane_id].label

    start, ticks = len(server.request_log()), [ticked()]
    for _ in range(3):
        herdr_fleet.wait(lambda: ticked() != ticks[-1], "the next tick")
        ticks.append(ticked())
    idle = [m for m, _ in server.request_log()[start:]]
    server.set_agent_status(worker.pane_id, "working")
    herdr_fleet.wait(
        lambda: label() == f"worker #{worker.agent_id} · working · 0 unread", "the new title"
    )

    assert idle == []  # no pane.list, nor anything else, in the idle ticks
    assert [m for m, _ in server.request_log()[start:]].count("pane.list") == 0
    assert loop.err == []


def test_a_member_read_by_its_screen_is_seen_ready_through_herdr_s_screen_wait(
    herdr_fleet: Any,
) -> None:
    server = herdr_fleet.server

    reader = herdr_fleet.member("reader", extra_env={"CAFLEET_READY_RULES_CUSTOM": "screen"})

    waits = [p for m, p in server.request_log() if m == "pane.wait_for_output"]
    assert waits, server.methods()
    assert {(w["pane_id"], w["match"]["type"]) for w in waits} == {(reader.pane_id, "regex")}
    # between two looks at the screen herdr held a wait, so CAFleet polled nothing: the last
    # look is the one that found the prompt the wait had seen
    reads = [
        p for m, p in server.request_log() if m == "pane.read" and p["pane_id"] == reader.pane_id
    ]
    assert len(reads) == len(waits) + 1

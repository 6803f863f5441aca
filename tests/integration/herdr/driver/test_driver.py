"""HerdrPaneDriver against the fake herdr server in plain mode: the requests it makes, the
launch file, the member column chosen by geometry, capture, listing, states, the agent
check's inputs."""

from __future__ import annotations

import json
import re
import stat
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from tests.fakes.herdr_server import FakeHerdrServer

from cafleet.adapters.herdr.client import HerdrClient
from cafleet.adapters.herdr.driver import (
    CAPTURE_MARGIN,
    TEXT_CHUNK_BYTES,
    HerdrPaneDriver,
    launch_line,
    loose_pattern,
)
from cafleet.adapters.herdr.processes import foreground
from cafleet.domain.errors import Unavailable
from cafleet.domain.panes import Key, PaneGone, PaneInfo
from cafleet.domain.placement import Multiplexer, PaneLocation

from .conftest import PYTHON

ARGV = ["/usr/bin/agent", "--flag", "prompt with 'quotes'\nand a second line"]
ENV = {"CAFLEET_FLEET_ID": "1", "CAFLEET_AGENT_ID": "7", "PATH": "/usr/bin"}


def requests(server: FakeHerdrServer, method: str) -> list[dict[str, Any]]:
    return [params for m, params in server.request_log() if m == method]


def heights(server: FakeHerdrServer, panes: list[str]) -> list[int]:
    rects = server.rects(panes[0])
    return [rects[p].height for p in panes]


# --------------------------------------------------------------------------- spawn


def test_spawn_writes_a_private_launch_file_and_types_one_exec_line(
    server: FakeHerdrServer, driver: HerdrPaneDriver, launch_dir: Path, tmp_path: Path
) -> None:
    pane_id = driver.spawn(server.root_pane, ARGV, ENV, str(tmp_path))

    (launch,) = launch_dir.iterdir()  # nobody runs it in plain mode, so it is still there
    assert stat.S_IMODE(launch.stat().st_mode) == 0o600
    assert json.loads(launch.read_text()) == {"argv": ARGV, "env": ENV, "cwd": str(tmp_path)}
    (sent,) = requests(server, "pane.send_input")
    assert sent == {
        "pane_id": pane_id,
        "text": f"exec '{PYTHON}' -m cafleet.entrypoints.processes.launch '{launch}'",
        "keys": ["enter"],
    }
    assert (
        server.typed(pane_id)
        == f"exec '{PYTHON}' -m cafleet.entrypoints.processes.launch '{launch}'\r".encode()
    )


def test_spawn_splits_beside_the_director_with_cwd_env_and_no_focus(
    server: FakeHerdrServer, driver: HerdrPaneDriver, tmp_path: Path
) -> None:
    pane_id = driver.spawn(server.root_pane, ARGV, ENV, str(tmp_path))

    (split,) = requests(server, "pane.split")
    assert split == {
        "target_pane_id": server.root_pane,
        "direction": "right",
        "cwd": str(tmp_path),
        "env": ENV,
        "focus": False,
    }
    assert pane_id == "w1:p2"
    layout = server.rects(pane_id)
    assert layout[pane_id].x == layout[server.root_pane].width  # right of the Director
    info = HerdrClient(server.socket_path).call("pane.get", {"pane_id": server.root_pane})
    assert info["pane"]["focused"] is True


def test_later_members_go_below_the_bottom_member(
    server: FakeHerdrServer, driver: HerdrPaneDriver, tmp_path: Path
) -> None:
    members = [driver.spawn(server.root_pane, ARGV, ENV, str(tmp_path)) for _ in range(3)]

    splits = requests(server, "pane.split")
    assert [(s["target_pane_id"], s["direction"]) for s in splits] == [
        (server.root_pane, "right"),
        (members[0], "down"),
        (members[1], "down"),
    ]
    rects = server.rects(members[0])
    assert [rects[m].y for m in members] == sorted(rects[m].y for m in members)
    assert {rects[m].x for m in members} == {rects[server.root_pane].width}


def test_the_split_target_is_chosen_by_geometry_not_by_id_order(
    server: FakeHerdrServer, driver: HerdrPaneDriver, tmp_path: Path
) -> None:
    # nine members: w1:p2 .. w1:p10; the bottom one is w1:p10, although "w1:p9" > "w1:p10"
    for _ in range(9):
        driver.spawn(server.root_pane, ARGV, ENV, str(tmp_path))
    assert max(server.pane_ids()) == "w1:p9"

    driver.spawn(server.root_pane, ARGV, ENV, str(tmp_path))

    assert requests(server, "pane.split")[-1]["target_pane_id"] == "w1:p10"


def test_a_pane_inserted_mid_column_does_not_fool_the_target(
    server: FakeHerdrServer, driver: HerdrPaneDriver, tmp_path: Path
) -> None:
    client = HerdrClient(server.socket_path)
    first = driver.spawn(server.root_pane, ARGV, ENV, str(tmp_path))  # w1:p2
    bottom = driver.spawn(server.root_pane, ARGV, ENV, str(tmp_path))  # w1:p3, below
    # someone splits the top member: w1:p4 now sits between w1:p2 and w1:p3
    client.call("pane.split", {"target_pane_id": first, "direction": "down"})

    driver.spawn(server.root_pane, ARGV, ENV, str(tmp_path))

    assert requests(server, "pane.split")[-1]["target_pane_id"] == bottom


@pytest.mark.parametrize("count", [2, 3, 4, 6])
def test_the_member_column_is_equalized_after_each_spawn(
    server: FakeHerdrServer, driver: HerdrPaneDriver, tmp_path: Path, count: int
) -> None:
    members = [driver.spawn(server.root_pane, ARGV, ENV, str(tmp_path)) for _ in range(count)]

    sizes = heights(server, members)
    assert sum(sizes) == server.rows
    assert max(sizes) - min(sizes) <= 1


def test_equalizing_sets_each_split_ratio_by_its_path(
    server: FakeHerdrServer, driver: HerdrPaneDriver, tmp_path: Path
) -> None:
    members = [driver.spawn(server.root_pane, ARGV, ENV, str(tmp_path)) for _ in range(3)]

    # the column is the root's second child; the third member halves the second's pane, so
    # only the column's first divider (path [second]) moves, to a third
    assert requests(server, "layout.set_split_ratio") == [
        {"pane_id": members[0], "path": [True], "ratio": 0.3333}
    ]
    assert requests(server, "pane.resize") == []
    focused = HerdrClient(server.socket_path).call("pane.get", {"pane_id": server.root_pane})
    assert focused["pane"]["focused"] is True


def test_the_fake_resizes_the_split_on_the_panes_edge_as_herdr_does(
    server: FakeHerdrServer,
) -> None:
    # herdr's src/layout.rs: `up` moves the divider on the pane's top edge, if it has one
    client = HerdrClient(server.socket_path)
    middle = client.call("pane.split", {"target_pane_id": server.root_pane, "direction": "down"})
    middle_id = middle["pane"]["pane_id"]
    bottom = client.call("pane.split", {"target_pane_id": middle_id, "direction": "down"})
    before = heights(server, [server.root_pane, middle_id, bottom["pane"]["pane_id"]])

    client.call("pane.resize", {"pane_id": middle_id, "direction": "up", "amount": 0.9})

    after = heights(server, [server.root_pane, middle_id, bottom["pane"]["pane_id"]])
    assert before == [20, 10, 10]
    # the root split (above the middle pane) went to herdr's floor, 0.1; the split below the
    # middle pane kept its ratio and halves what is left
    assert after == [4, 18, 18]


def test_a_pane_split_inside_the_column_counts_in_its_split_ratio(
    server: FakeHerdrServer, driver: HerdrPaneDriver, tmp_path: Path
) -> None:
    first = driver.spawn(server.root_pane, ARGV, ENV, str(tmp_path))
    driver.spawn(server.root_pane, ARGV, ENV, str(tmp_path))
    # someone splits the top member: two panes above the column's first divider
    client = HerdrClient(server.socket_path)
    client.call("pane.split", {"target_pane_id": first, "direction": "down"})

    driver.relayout("w1:t1")

    rects = server.rects(first)
    column = sorted((r for p, r in rects.items() if p != server.root_pane), key=lambda r: r.y)
    assert max(r.height for r in column) - min(r.height for r in column) <= 1


def test_relayout_equalizes_the_column_after_a_member_left(
    server: FakeHerdrServer, driver: HerdrPaneDriver, tmp_path: Path
) -> None:
    members = [driver.spawn(server.root_pane, ARGV, ENV, str(tmp_path)) for _ in range(3)]
    driver.kill(members[1])
    before = heights(server, [members[0], members[2]])

    driver.relayout("w1:t1")

    after = heights(server, [members[0], members[2]])
    assert before != after
    assert after == [server.rows // 2, server.rows - server.rows // 2]


def test_when_the_last_member_leaves_the_director_takes_the_full_width(
    server: FakeHerdrServer, driver: HerdrPaneDriver, tmp_path: Path
) -> None:
    member = driver.spawn(server.root_pane, ARGV, ENV, str(tmp_path))

    driver.kill(member)
    driver.relayout("w1:t1")

    assert server.rects(server.root_pane)[server.root_pane].width == server.columns


def test_spawn_refuses_a_one_element_argv_without_any_request(
    server: FakeHerdrServer, driver: HerdrPaneDriver, tmp_path: Path
) -> None:
    with pytest.raises(ValueError):
        driver.spawn(server.root_pane, ["/usr/bin/agent"], ENV, str(tmp_path))

    assert server.request_log() == []


def test_spawn_beside_a_missing_pane_leaves_no_launch_file(
    server: FakeHerdrServer, driver: HerdrPaneDriver, launch_dir: Path, tmp_path: Path
) -> None:
    with pytest.raises(PaneGone) as raised:
        driver.spawn("w1:p99", ARGV, ENV, str(tmp_path))

    assert raised.value.pane_id == "w1:p99"
    assert list(launch_dir.iterdir()) == []
    assert server.pane_ids() == [server.root_pane]


def test_a_failed_start_closes_the_new_pane_and_removes_the_launch_file(
    server: FakeHerdrServer, driver: HerdrPaneDriver, launch_dir: Path, tmp_path: Path
) -> None:
    server.fail("pane.send_input", "pane_send_failed", "terminal closed")

    with pytest.raises(Unavailable) as raised:
        driver.spawn(server.root_pane, ARGV, ENV, str(tmp_path))

    assert raised.value.message == (
        "herdr pane.send_input failed: pane_send_failed: terminal closed"
    )
    assert list(launch_dir.iterdir()) == []
    assert server.pane_ids() == [server.root_pane]
    assert requests(server, "pane.close") == [{"pane_id": "w1:p2"}]


def test_a_failed_split_removes_the_launch_file(
    server: FakeHerdrServer, driver: HerdrPaneDriver, launch_dir: Path, tmp_path: Path
) -> None:
    server.fail("pane.split", "invalid_env", "bad variable")

    with pytest.raises(Unavailable):
        driver.spawn(server.root_pane, ARGV, ENV, str(tmp_path))

    assert list(launch_dir.iterdir()) == []


def test_the_launch_line_quotes_single_quotes() -> None:
    line = launch_line("/opt/it's/python", Path("/run/launch-1.json"))

    assert (
        line == "exec '/opt/it'\"'\"'s/python' -m cafleet.entrypoints.processes.launch"
        " '/run/launch-1.json'"
    )


# --------------------------------------------------------------------------- typing


def test_type_text_sends_raw_text_without_enter(
    server: FakeHerdrServer, driver: HerdrPaneDriver
) -> None:
    driver.type_text(server.root_pane, "ends with;")

    assert requests(server, "pane.send_text") == [
        {"pane_id": server.root_pane, "text": "ends with;"}
    ]
    assert server.typed(server.root_pane) == b"ends with;"


def test_long_text_is_sent_in_pieces_below_the_request_limit(
    server: FakeHerdrServer, driver: HerdrPaneDriver
) -> None:
    text = "✓" * 50_000  # 150 000 bytes of UTF-8

    driver.type_text(server.root_pane, text)

    pieces = [p["text"] for p in requests(server, "pane.send_text")]
    assert len(pieces) == 3
    assert all(len(p.encode()) <= TEXT_CHUNK_BYTES for p in pieces)
    assert server.typed(server.root_pane).decode() == text


def test_paste_uses_send_input_with_no_keys_and_is_bracketed_when_asked_for(
    server: FakeHerdrServer, driver: HerdrPaneDriver
) -> None:
    server.set_bracketed_paste(server.root_pane)

    driver.paste_text(server.root_pane, "[header]\nbody")

    assert requests(server, "pane.send_input") == [
        {"pane_id": server.root_pane, "text": "[header]\nbody", "keys": []}
    ]
    assert server.typed(server.root_pane) == b"\x1b[200~[header]\nbody\x1b[201~"


def test_paste_into_a_program_without_bracketed_paste_arrives_raw(
    server: FakeHerdrServer, driver: HerdrPaneDriver
) -> None:
    driver.paste_text(server.root_pane, "a\nb")

    assert server.typed(server.root_pane) == b"a\nb"


def test_keys_go_in_one_request_in_order(server: FakeHerdrServer, driver: HerdrPaneDriver) -> None:
    driver.send_keys(server.root_pane, Key.ENTER, Key.ESCAPE)

    assert requests(server, "pane.send_keys") == [
        {"pane_id": server.root_pane, "keys": ["enter", "esc"]}
    ]
    assert server.typed(server.root_pane) == b"\r\x1b"


@pytest.mark.parametrize(
    "operation",
    [
        lambda d: d.type_text("w1:p9", "x"),
        lambda d: d.paste_text("w1:p9", "x\ny"),
        lambda d: d.send_keys("w1:p9", Key.ENTER),
        lambda d: d.capture("w1:p9", 5),
    ],
)
def test_operations_on_a_missing_pane_raise_pane_gone(
    driver: HerdrPaneDriver, operation: Any
) -> None:
    with pytest.raises(PaneGone) as raised:
        operation(driver)

    assert raised.value.pane_id == "w1:p9"


# --------------------------------------------------------------------------- capture


def test_capture_reads_recent_unwrapped_text_and_trims_the_blank_bottom(
    server: FakeHerdrServer, driver: HerdrPaneDriver
) -> None:
    server.set_screen(server.root_pane, "one\n\ntwo\nthree\n")

    captured = driver.capture(server.root_pane, 3)

    assert captured == "\ntwo\nthree"
    (read,) = requests(server, "pane.read")
    assert read == {
        "pane_id": server.root_pane,
        "source": "recent_unwrapped",
        "lines": 3 + CAPTURE_MARGIN,
        "format": "ansi",  # herdr never harvests for an ANSI read (see below)
    }


def test_capture_asks_again_when_blank_rows_hid_the_wanted_lines(tmp_path: Path) -> None:
    with FakeHerdrServer(rows=300).start(cwd=str(tmp_path)) as tall:
        tall.set_screen(tall.root_pane, "\n".join(f"row {n}" for n in range(1, 11)))
        driver = HerdrPaneDriver(tall.socket_path)

        captured = driver.capture(tall.root_pane, 4)

        assert captured == "row 7\nrow 8\nrow 9\nrow 10"
        asked = [r["lines"] for r in requests(tall, "pane.read")]
        assert asked == sorted(asked) and len(asked) > 1


def test_capture_of_an_idle_alternate_screen_agent_answers_within_a_second(
    server: FakeHerdrServer, driver: HerdrPaneDriver
) -> None:
    # herdr would scroll such an agent with wheel events before answering a text read of
    # more rows than its screen: about 20 s for 1000 rows, past the client's 5 s timeout
    server.set_agent_status(server.root_pane, "idle", agent="opencode")
    server.set_alternate_screen(server.root_pane)
    server.set_screen(server.root_pane, "\n".join(f"line {n}" for n in range(1, 31)))

    started = time.monotonic()
    captured = driver.capture(server.root_pane, 900)

    assert time.monotonic() - started < 1.0
    assert captured.split("\n") == [f"line {n}" for n in range(1, 31)]


def test_capture_asks_for_more_while_herdr_says_it_truncated(
    server: FakeHerdrServer, driver: HerdrPaneDriver
) -> None:
    # 150 lines of 300 characters: 3 rendered rows each on a 120-column pane, which
    # recent_unwrapped reads back as one line each
    lines = [f"{n:03d}" + "x" * 297 for n in range(150)]
    server.set_screen(server.root_pane, "\n".join(lines))

    captured = driver.capture(server.root_pane, 100)

    assert captured.split("\n") == lines[-100:]
    assert len(requests(server, "pane.read")) > 1


def test_capture_stops_at_the_thousand_rows_herdr_answers(
    server: FakeHerdrServer, driver: HerdrPaneDriver
) -> None:
    server.set_screen(server.root_pane, "\n".join(f"row {n}" for n in range(1, 1501)))

    captured, cut = driver.capture_cut(server.root_pane, 1200)

    asked = [r["lines"] for r in requests(server, "pane.read")]
    assert max(asked) == 1000
    assert captured.split("\n") == [f"row {n}" for n in range(501, 1501)]
    assert cut  # herdr said `truncated`: 200 of the lines asked were left out
    assert driver.capture_limit == 1000


@pytest.mark.parametrize(
    ("rows", "lines"), [(1500, 900), (300, 5000)], ids=["fits", "all-there-is"]
)
def test_a_capture_within_herdr_s_cap_or_of_all_the_history_is_not_cut(
    server: FakeHerdrServer, driver: HerdrPaneDriver, rows: int, lines: int
) -> None:
    server.set_screen(server.root_pane, "\n".join(f"row {n}" for n in range(1, rows + 1)))

    captured, cut = driver.capture_cut(server.root_pane, lines)

    assert captured.split("\n")[-1] == f"row {rows}"
    assert len(captured.split("\n")) == min(rows, lines)
    assert not cut


def test_capture_with_ansi_asks_for_the_ansi_format(
    server: FakeHerdrServer, driver: HerdrPaneDriver
) -> None:
    server.set_screen(server.root_pane, "\x1b[31mred\x1b[0m plain")

    captured = driver.capture(server.root_pane, 5, ansi=True)

    assert "\x1b[" in captured and "red" in captured
    assert requests(server, "pane.read")[0]["format"] == "ansi"
    assert driver.capture(server.root_pane, 5) == "red plain"


# --------------------------------------------------------------------------- list, states


def test_list_panes_is_one_request_with_the_detected_agents(
    server: FakeHerdrServer, driver: HerdrPaneDriver, tmp_path: Path
) -> None:
    member = driver.spawn(server.root_pane, ARGV, ENV, str(tmp_path))
    server.set_agent_status(member, "working", agent="claude")
    before = len(server.request_log())

    panes = driver.list_panes()

    assert server.methods()[before:] == ["pane.list"]
    assert panes == {
        server.root_pane: PaneInfo(server.root_pane, False, "", None),
        member: PaneInfo(member, False, "", "claude"),
    }


def test_agent_states_after_a_listing_make_no_request_of_their_own(
    server: FakeHerdrServer, driver: HerdrPaneDriver, tmp_path: Path
) -> None:
    member = driver.spawn(server.root_pane, ARGV, ENV, str(tmp_path))
    server.set_agent_status(member, "blocked")
    before = len(server.request_log())

    driver.list_panes()
    states = driver.agent_states()

    assert server.methods()[before:] == ["pane.list"]
    assert states == {server.root_pane: "unknown", member: "blocked"}


def test_agent_states_without_a_fresh_listing_ask_the_server(
    server: FakeHerdrServer, driver: HerdrPaneDriver
) -> None:
    driver.list_panes()
    driver.agent_states()
    server.set_agent_status(server.root_pane, "done")
    before = len(server.request_log())

    assert driver.agent_states() == {server.root_pane: "done"}
    assert server.methods()[before:] == ["pane.list"]


def test_a_turn_that_ends_in_the_active_tab_is_done_although_herdr_says_idle(
    server: FakeHerdrServer, driver: HerdrPaneDriver, tmp_path: Path
) -> None:
    member = driver.spawn(server.root_pane, ARGV, ENV, str(tmp_path))
    server.set_agent_status(member, "working", agent="claude")
    assert driver.agent_states()[member] == "working"

    server.set_agent_status(member, "idle")

    reported = HerdrClient(server.socket_path).call("pane.get", {"pane_id": member})
    assert reported["pane"]["agent_status"] == "idle"  # herdr saw it: its tab is active
    assert driver.agent_states()[member] == "done"
    assert driver.agent_states()[member] == "done"  # while the agent stays idle
    server.set_agent_status(member, "working")
    assert driver.agent_states()[member] == "working"


def test_herdr_says_done_of_a_turn_nobody_saw_until_its_tab_is_focused(
    server: FakeHerdrServer,
) -> None:
    client = HerdrClient(server.socket_path)
    other = client.call("tab.create", {})["root_pane"]["pane_id"]  # not the active tab
    server.set_agent_status(other, "working", agent="codex")
    server.set_agent_status(other, "idle")
    assert client.call("pane.get", {"pane_id": other})["pane"]["agent_status"] == "done"

    client.call("pane.focus", {"pane_id": other})

    assert client.call("pane.get", {"pane_id": other})["pane"]["agent_status"] == "idle"


def test_a_pane_moved_to_another_workspace_is_still_listed_by_its_recorded_id(
    server: FakeHerdrServer, driver: HerdrPaneDriver, tmp_path: Path
) -> None:
    member = driver.spawn(server.root_pane, ARGV, ENV, str(tmp_path))
    server.set_agent_status(member, "working", agent="claude")
    driver.list_panes()
    other = HerdrClient(server.socket_path).call("workspace.create", {})["workspace"]
    moved = server.move_pane(member, other["workspace_id"])

    panes = driver.list_panes()

    assert moved != member and moved in panes
    assert panes[member] == PaneInfo(member, False, "", "claude")
    assert driver.agent_states()[member] == "working"
    assert driver.pane(member) is not None  # herdr still answers requests for the old id


# --------------------------------------------------------------------------- one pane


def test_pane_reports_the_foreground_leader_and_the_detected_agent(
    server: FakeHerdrServer, driver: HerdrPaneDriver
) -> None:
    server.set_processes(
        server.root_pane,
        [
            {"pid": 41, "name": "MainThread", "argv0": "/usr/local/bin/claude", "argv": ["x"]},
            {"pid": 42, "name": "node", "argv0": "node", "argv": ["node", "tool.js"]},
        ],
        shell_pid=40,
    )
    server.set_agent(server.root_pane, "claude")

    info = driver.pane(server.root_pane)

    terminal = server.panes[server.root_pane].terminal_id
    assert info == PaneInfo(
        server.root_pane, False, "claude", "claude", ("x",), identity=f"{terminal}.40"
    )
    assert server.methods()[-2:] == ["pane.get", "pane.process_info"]


def test_pane_is_none_for_a_missing_pane(driver: HerdrPaneDriver) -> None:
    assert driver.pane("w1:p42") is None


def test_pane_has_no_command_when_the_server_cannot_tell(
    server: FakeHerdrServer, driver: HerdrPaneDriver
) -> None:
    server.fail("pane.process_info", "process_observation_unavailable", "pending")

    terminal = server.panes[server.root_pane].terminal_id  # and no shell pid: not the same pane
    assert driver.pane(server.root_pane) == PaneInfo(
        server.root_pane, False, "", None, identity=f"{terminal}."
    )


@pytest.mark.parametrize(
    ("result", "expected"),
    [
        pytest.param(
            {"process_info": {"pane_id": "w1:p2", "shell_pid": 10,
                              "foreground_process_group_id": 12,
                              "foreground_processes": [
                                  {"pid": 11, "name": "sh"},
                                  {"pid": 12, "name": "python3.11", "argv0": "/v/bin/python"},
                              ]}},
            (False, "python"),
            id="leader-by-group-argv0",
        ),
        pytest.param(
            {"process_info": {"pane_id": "w1:p2", "shell_pid": 10,
                              "foreground_processes": [{"pid": 10, "name": "zsh"}]}},
            (False, "zsh"),
            id="name-only",
        ),
        pytest.param(
            {"process_info": {"pane_id": "w1:p2", "foreground_processes": [
                {"pid": 3, "name": "", "cmdline": "/usr/bin/codex --x"}]}},
            (False, "codex"),
            id="cmdline",
        ),
        pytest.param({"process_info": {"pane_id": "w1:p2", "shell_pid": 10}}, (False, ""),
                     id="nothing-listed"),
        pytest.param({"process_info": {"pane_id": "w1:p2"}}, (True, ""), id="process-gone"),
        pytest.param({}, (False, ""), id="empty"),
        pytest.param({"foreground_processes": "garbage"}, (False, ""), id="garbage"),
    ],
)  # fmt: skip
def test_foreground_parsing_is_tolerant(result: dict[str, Any], expected: tuple[bool, str]) -> None:
    assert foreground(result) == expected


def test_kill_closes_the_pane_and_reports_a_missing_one(
    server: FakeHerdrServer, driver: HerdrPaneDriver, tmp_path: Path
) -> None:
    member = driver.spawn(server.root_pane, ARGV, ENV, str(tmp_path))

    assert driver.kill(member) is True
    assert driver.kill(member) is False
    assert server.pane_ids() == [server.root_pane]


def test_locate_names_workspace_tab_pane_and_socket(
    server: FakeHerdrServer, driver: HerdrPaneDriver
) -> None:
    located = driver.locate(server.root_pane)

    assert located == PaneLocation(Multiplexer.HERDR, "w1", "w1:t1", "w1:p1", server.socket_path)
    assert requests(server, "pane.current") == [{"caller_pane_id": server.root_pane}]


def test_closed_ids_are_never_reused(
    server: FakeHerdrServer, driver: HerdrPaneDriver, tmp_path: Path
) -> None:
    first = driver.spawn(server.root_pane, ARGV, ENV, str(tmp_path))
    driver.kill(first)

    second = driver.spawn(server.root_pane, ARGV, ENV, str(tmp_path))

    assert (first, second) == ("w1:p2", "w1:p3")


# --------------------------------------------------------------------------- presentation


def wire(server: FakeHerdrServer, method: str, **params: Any) -> dict[str, Any]:
    answer = server.handle_line(
        json.dumps({"id": "t", "method": method, "params": params}).encode()
    )
    result: dict[str, Any] = answer["result"]
    return result


def test_a_label_is_herdr_s_pane_rename_and_shows_in_get_and_list(
    server: FakeHerdrServer, driver: HerdrPaneDriver, tmp_path: Path
) -> None:
    member = driver.spawn(server.root_pane, ARGV, ENV, str(tmp_path))

    driver.label(member, "coder #7")

    assert requests(server, "pane.rename") == [{"pane_id": member, "label": "coder #7"}]
    assert wire(server, "pane.get", pane_id=member)["pane"]["label"] == "coder #7"
    listed = {p["pane_id"]: p.get("label") for p in wire(server, "pane.list")["panes"]}
    assert listed == {server.root_pane: None, member: "coder #7"}


def test_labelling_a_missing_pane_is_herdr_s_refusal(driver: HerdrPaneDriver) -> None:
    with pytest.raises(PaneGone):
        driver.label("w1:p9", "gone #9")


def test_a_notification_asks_with_herdr_s_request_sound(
    server: FakeHerdrServer, driver: HerdrPaneDriver
) -> None:
    driver.notify("coder #7 is blocked", "fleet 1: it waits at a dialog")

    assert server.notifications == [
        {
            "title": "coder #7 is blocked",
            "body": "fleet 1: it waits at a dialog",
            "sound": "request",
        }
    ]


# --------------------------------------------------------------------------- screen waits


def show_later(server: FakeHerdrServer, pane_id: str, text: str, seconds: float) -> None:
    threading.Timer(seconds, server.set_screen, (pane_id, text)).start()


def test_a_screen_wait_is_held_by_herdr_until_a_line_shows_the_text_loosely(
    server: FakeHerdrServer, driver: HerdrPaneDriver
) -> None:
    server.set_screen(server.root_pane, "booting\n")
    # a TUI's rendering: borders, capitals, Markdown bullets and punctuation changed
    show_later(server, server.root_pane, "╭──\n│ • Review THE open pull-requests │\n", 0.3)

    shown = driver.wait_for_text(server.root_pane, ["- review the open pull requests"], 60, 4.0)

    assert shown is True
    (wait,) = requests(server, "pane.wait_for_output")
    assert (wait["source"], wait["lines"], wait["timeout_ms"]) == ("recent_unwrapped", 60, 4000)
    assert wait["match"]["type"] == "regex"
    assert requests(server, "pane.read") == []  # herdr looked, not CAFleet


def test_a_screen_wait_answers_false_once_herdr_s_wait_times_out(
    server: FakeHerdrServer, driver: HerdrPaneDriver
) -> None:
    server.set_screen(server.root_pane, "booting\n")

    assert driver.wait_for_text(server.root_pane, ["trust this folder"], 60, 0.3) is False


def test_herdr_matches_line_by_line_so_a_text_split_over_two_lines_is_not_shown(
    server: FakeHerdrServer, driver: HerdrPaneDriver
) -> None:
    server.set_screen(server.root_pane, "review the open\npull requests\n")

    assert (
        driver.wait_for_text(server.root_pane, ["review the open pull requests"], 60, 0.3) is False
    )


def test_any_of_several_texts_ends_the_wait(
    server: FakeHerdrServer, driver: HerdrPaneDriver
) -> None:
    server.set_screen(server.root_pane, "Do you trust this folder?\n")

    assert driver.wait_for_text(server.root_pane, ["the prompt", "trust this folder"], 60, 2.0)


def test_a_screen_wait_on_a_missing_pane_raises_pane_gone(driver: HerdrPaneDriver) -> None:
    with pytest.raises(PaneGone):
        driver.wait_for_text("w9:p9", ["anything"], 60, 0.3)


def test_a_server_without_screen_waits_is_asked_once_then_waited_on_locally(
    server: FakeHerdrServer, driver: HerdrPaneDriver
) -> None:
    server.fail("pane.wait_for_output", "invalid_request", "unknown method", times=5)

    assert driver.wait_for_text(server.root_pane, ["text"], 60, 0.1) is False
    assert driver.wait_for_text(server.root_pane, ["text"], 60, 0.1) is False

    assert len(requests(server, "pane.wait_for_output")) == 1


@pytest.mark.parametrize(
    ("texts", "line", "matches"),
    [
        (["Allow always"], "  Allow once   Allow ALWAYS   Reject", True),
        (["do you want to proceed"], "Do you want to proceed?", True),
        (["do you want to proceed"], "you want to proceed", False),
        (["a_b c"], "A-B-C", True),
        (["---", "x"], "none", False),
    ],
)
def test_the_loose_pattern_ignores_case_and_everything_but_letters_and_digits(
    texts: list[str], line: str, matches: bool
) -> None:
    pattern = loose_pattern(texts)

    assert pattern is not None
    assert bool(re.search(pattern, line)) is matches


def test_texts_without_letters_or_digits_make_no_pattern() -> None:
    assert loose_pattern(["---", "  ", ""]) is None

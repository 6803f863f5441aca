"""`member create` on a real tmux server: the pane, what the child process got, the layout."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import sys
from pathlib import Path

import pytest
from panes_support import DEMO_AGENT, PaneFleet, wait_until

pytestmark = pytest.mark.tmux

PROMPT = (
    "You are member {agent_id} of fleet {fleet_id}; your Director is {director_agent_id}.\n"
    "Second line of the prompt."
)


def parse_env(text: str) -> dict[str, str]:
    env = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            env[key] = value
    return env


def cmdline(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")[:-1]


def stat_fields(pid: int) -> list[str]:
    """/proc/<pid>/stat after the command name: state, ppid, pgrp, session, tty, tpgid, ..."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if int(stat_fields(int(entry.name))[1]) == pid:
                    found.append(int(entry.name))
            except (OSError, IndexError):
                continue  # the process ended meanwhile
    return found


def in_foreground(pid: int) -> bool:
    """The process leads its group and that group is its terminal's foreground group."""
    fields = stat_fields(pid)
    return int(fields[2]) == pid and int(fields[5]) == pid


def exec_to_file(fleet: PaneFleet, member_id: int, command: str, target: Path) -> str:
    """`member exec` a command whose output lands atomically in `target`; return its text."""
    partial = target.with_suffix(".partial")
    line = f"{command} > {shlex.quote(str(partial))} && mv {shlex.quote(str(partial))} "
    line += shlex.quote(str(target))
    fleet.ok(
        "member", "exec", "--fleet-id", str(fleet.fleet_id), "--member-id", str(member_id), line
    )
    wait_until(target.exists, f"{target.name} written by the member's shell")
    return target.read_text()


def test_member_create_spawns_a_pane_with_argv_env_and_cwd(pane_fleet: PaneFleet) -> None:
    fleet = pane_fleet
    work = fleet.tmp / "work"
    work.mkdir()
    # A relative database URL on purpose: the member must get it with an absolute path.
    # Stale identity variables in the caller must not reach the member: the four identity
    # variables always win over what the caller has.
    # The member gets the caller's whole environment (here a variable that only the calling
    # process has, not the tmux server), but never the WebUI token, the caller's own pane
    # variables or an agent's session markers.
    member = fleet.create_member(
        "worker",
        prompt=PROMPT,
        env={
            "CAFLEET_DATABASE_URL": "sqlite:///../cafleet.db",
            "CAFLEET_FLEET_ID": "999",
            "CAFLEET_AGENT_ID": "998",
            "CAFLEET_MULTIPLEXER": "herdr",
            "DIRECTOR_ONLY_SETTING": "from the Director's shell",
            "CAFLEET_WEBUI_TOKEN": "secret-webui-token",
            "HERDR_TEST_MARKER": "not for members",
            "CLAUDECODE": "1",
            "CODEX_THREAD_ID": "thread-of-the-director",
        },
        cwd=work,
    )

    assert re.fullmatch(r"(\d+) worker coding_agent=custom pane=(%\d+)\n", member.created.stdout)
    panes = fleet.tmux.panes()
    assert member.pane in panes
    assert set(panes) == {fleet.director_pane, member.pane}

    # The pane runs CAFleet's launcher on a private launch file, nothing else: no argv word
    # and no environment value is on the multiplexer's command line.
    rendered = (
        f"You are member {member.agent_id} of fleet {fleet.fleet_id}; your Director is"
        f" {fleet.director}.\nSecond line of the prompt."
    )
    pid = int(panes[member.pane]["pid"])
    launcher = cmdline(pid)
    assert launcher[:3] == [sys.executable, "-m", "cafleet.entrypoints.processes.launch"]
    [launch_file] = launcher[3:]
    pad = Path(launch_file).parent
    assert pad.parent == fleet.tmp / "run" / "cafleet" / "members"
    assert pad.name.startswith(f"{fleet.fleet_id}-{member.agent_id}-")
    assert pad.stat().st_mode & 0o777 == 0o700
    assert not Path(launch_file).exists()  # read once and deleted: it held the environment
    start = fleet.tmux.run("display-message", "-p", "-t", member.pane, "#{pane_start_command}")
    assert "cafleet.entrypoints.processes.launch" in start
    assert "your Director is" not in start
    assert str(member.log) not in start

    # The agent runs as the launcher's child, in the terminal's foreground, with the template
    # words and then the prompt (placeholders substituted) as one word.
    [agent_pid] = children(pid)
    assert cmdline(agent_pid) == [*DEMO_AGENT, rendered]
    assert in_foreground(agent_pid)
    assert panes[member.pane]["command"] == Path(sys.executable).name

    # The agent started with its identity and shows the first line of its prompt.
    assert member.events()[0] == {
        "event": "ready",
        "fleet_id": fleet.fleet_id,
        "agent_id": member.agent_id,
    }
    screen = fleet.wait_screen(member.pane, "your Director is")
    assert f"cafleet demo agent {member.agent_id} ready" in screen
    assert rendered.splitlines()[0] in screen
    assert "Second line" not in screen  # only the prompt's first line is shown

    # Environment and working directory, as seen by a shell command the agent runs.
    env = parse_env(exec_to_file(fleet, member.agent_id, "env", fleet.tmp / "member.env"))
    assert env["CAFLEET_FLEET_ID"] == str(fleet.fleet_id)
    assert env["CAFLEET_AGENT_ID"] == str(member.agent_id)
    assert env["CAFLEET_MULTIPLEXER"] == "tmux"
    url = env["CAFLEET_DATABASE_URL"]
    assert url.startswith("sqlite:////"), url
    assert Path(url.removeprefix("sqlite:///")).resolve() == fleet.db_path.resolve()
    # The caller's other CAFLEET_* settings travel with the member.
    assert env["CAFLEET_SUBMIT_DELAY_CUSTOM"] == "0.05"
    assert env["CAFLEET_DEMO_LOG"] == str(member.log)
    assert env["PATH"] == os.environ["PATH"]
    assert env["DIRECTOR_ONLY_SETTING"] == "from the Director's shell"
    assert "DIRECTOR_ONLY_SETTING" not in fleet.tmux.run("show-environment", "-g")
    for withheld in ("CAFLEET_WEBUI_TOKEN", "HERDR_TEST_MARKER", "CLAUDECODE", "CODEX_THREAD_ID"):
        assert withheld not in env, withheld
    # tmux's own variables are the member pane's, not the Director's
    assert env["TMUX_PANE"] == member.pane
    assert env["TMUX"].split(",")[0] == fleet.tmux.socket

    pwd = exec_to_file(fleet, member.agent_id, "pwd", fleet.tmp / "member.pwd").strip()
    assert os.path.realpath(pwd) == os.path.realpath(work)

    # What `member create` recorded.
    [placement] = fleet.rows("SELECT * FROM agent_placements WHERE agent_id = ?", member.agent_id)
    assert placement["director_agent_id"] == fleet.director
    assert placement["mux_pane_id"] == member.pane
    assert placement["mux_socket"] == fleet.tmux.socket
    assert Path(sys.executable).name in placement["agent_commands"].split(",")
    # a custom agent counts as ready once it stayed in front for a moment
    assert placement["ready_rule"] == "wait"
    assert placement["ready_at"] > placement["created_at"]
    shown = fleet.json("member", "show", *fleet.target(member.agent_id))
    assert shown["pane_state"] == "running"
    assert (shown["placement"]["ready_at"], shown["placement"]["ready_rule"]) == (
        placement["ready_at"],
        "wait",
    )


WEBUI_TOKEN = "secret-webui-token-0123456789"
ARGV_LOGGER = """#!/bin/sh
printf '%s\\n' "$*" >> {log}
exec {tmux} "$@"
"""


def test_the_webui_token_reaches_no_member_environment_and_no_tmux_command_line(
    pane_fleet: PaneFleet,
) -> None:
    """Any local user can read another user's argv in /proc; the token must stay with the
    server. Every tmux call CAFleet makes goes through a logger on the PATH."""
    fleet = pane_fleet
    real_tmux = shutil.which("tmux")
    assert real_tmux is not None
    bin_dir, argv_log = fleet.tmp / "argv-bin", fleet.tmp / "tmux-argv.log"
    bin_dir.mkdir()
    logger = bin_dir / "tmux"
    logger.write_text(
        ARGV_LOGGER.format(log=shlex.quote(str(argv_log)), tmux=shlex.quote(real_tmux))
    )
    logger.chmod(0o755)
    fleet.env["PATH"] = os.pathsep.join([str(bin_dir), fleet.env.get("PATH", "")])

    member = fleet.create_member("worker", env={"CAFLEET_WEBUI_TOKEN": WEBUI_TOKEN})

    launcher = int(fleet.tmux.panes()[member.pane]["pid"])
    [agent] = children(launcher)
    for pid in (launcher, agent):
        environ = Path(f"/proc/{pid}/environ").read_bytes()
        assert b"CAFLEET_WEBUI_TOKEN" not in environ
        assert WEBUI_TOKEN.encode() not in environ
    calls = argv_log.read_text()
    assert "split-window" in calls  # the logger saw the spawn
    assert "CAFLEET_WEBUI_TOKEN" not in calls
    assert WEBUI_TOKEN not in calls
    assert WEBUI_TOKEN not in fleet.tmux.run("show-environment", "-g")


def test_the_window_border_shows_each_member_s_title_and_a_window_s_own_border_stays(
    pane_fleet: PaneFleet,
) -> None:
    fleet = pane_fleet
    first = fleet.create_member("first", wait_ready=False)
    fleet.tmux.run("set-option", "-w", "-t", first.pane, "pane-border-format", "mine")
    second = fleet.create_member("second", wait_ready=False)

    def shown(pane: str, fmt: str) -> str:
        return fleet.tmux.run("display-message", "-p", "-t", pane, fmt)

    assert shown(first.pane, "#{pane-border-status}") == "top"
    assert shown(second.pane, "#{pane-border-format}") == "mine"  # set by the person: kept
    assert shown(first.pane, "#{@cafleet-title}").startswith(f"first #{first.agent_id} · ")
    assert shown(second.pane, "#{@cafleet-title}").startswith(f"second #{second.agent_id} · ")


def test_director_keeps_the_left_column_and_members_stack_newest_on_top(
    pane_fleet: PaneFleet,
) -> None:
    fleet = pane_fleet
    first = fleet.create_member("first", wait_ready=False)
    second = fleet.create_member("second", wait_ready=False)

    panes = fleet.tmux.panes()
    assert set(panes) == {fleet.director_pane, first.pane, second.pane}
    director = panes[fleet.director_pane]
    assert director["left"] == "0"
    assert director["top"] == "1"  # row 0 is the border that shows the panes' titles
    assert director["height"] == "59"  # main-vertical: the full height of the window
    column = int(director["width"]) + 1  # one column of border
    for member in (first, second):
        assert int(panes[member.pane]["left"]) == column
    assert panes[second.pane]["top"] == "1"  # newest on top
    assert int(panes[first.pane]["top"]) > 1

    # Removing a member re-applies the layout: the survivor takes the whole right column.
    fleet.ok(
        "member",
        "delete",
        "--fleet-id",
        str(fleet.fleet_id),
        "--member-id",
        str(second.agent_id),
        "--force",
    )
    panes = fleet.tmux.panes()
    assert set(panes) == {fleet.director_pane, first.pane}
    assert panes[fleet.director_pane]["left"] == "0"
    assert panes[first.pane]["top"] == "1"
    assert panes[first.pane]["height"] == "59"


def test_the_documented_console_script_command_is_recognised_as_the_agent(
    pane_fleet: PaneFleet,
) -> None:
    fleet = pane_fleet
    scripts = Path(sys.executable).parent
    if not (scripts / "cafleet-demo-agent").exists():
        pytest.skip("the cafleet-demo-agent console script is not installed next to python")
    path = os.pathsep.join([str(scripts), os.environ.get("PATH", "")])
    # A command template as a user would write one; the script starts through its shebang, so tmux
    # shows the interpreter, which `member create` must accept as well.
    member = fleet.create_member(
        "scripted",
        agent_argv=["cafleet-demo-agent", "--rounds", "1"],
        demo=True,
        env={"PATH": path},
    )
    [placement] = fleet.rows(
        "SELECT agent_commands FROM agent_placements WHERE agent_id = ?", member.agent_id
    )
    accepted = placement["agent_commands"].split(",")
    assert accepted[0] == "cafleet-demo-agent"
    assert fleet.tmux.panes()[member.pane]["command"] in accepted

    sent = fleet.send(fleet.director, member.agent_id, "hello script")
    assert sent["notification"]["state"] == "sent"
    member.wait_event("ack")


def test_a_prompt_too_long_for_one_argument_is_refused_and_nothing_is_left(
    pane_fleet: PaneFleet,
) -> None:
    fleet = pane_fleet
    prompt = fleet.tmp / "prompt.txt"
    prompt.write_text("p" * 200_000)

    result = fleet.run(
        "member", "create", "--fleet-id", str(fleet.fleet_id), "--agent-id", str(fleet.director),
        "--name", "big", "--description", "d", *fleet.custom_options(DEMO_AGENT),
        "--text-file", str(prompt),
    )  # fmt: skip

    assert result.code == 1, result
    assert result.stderr.splitlines() == [
        "Error: spawn prompt is 200000 bytes; the limit is 122880 bytes (the agent takes it as"
        " one command-line argument); put the long part in a file and name the file in the"
        " prompt"
    ]
    assert fleet.rows("SELECT agent_id FROM agents WHERE name = 'big'") == []
    assert set(fleet.tmux.panes()) == {fleet.director_pane}

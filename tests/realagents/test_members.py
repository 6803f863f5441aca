"""CAFleet members running the real Claude Code, Codex and OpenCode TUIs.

Each test drives the installed `cafleet` CLI the way a Director does, from the first pane of a
private tmux server, against members that run a pinned agent CLI offline on the scripted
model server. Nothing here tells the agents how to behave beyond their spawn prompt and the
messages they get: permissions, PATH, sandbox, readiness and typing are the product's job.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from cafleet.domain.message import MessageState
from realagents.fleet import AGENTS, PROMPT, REPLY_TIMEOUT, Fleet
from realagents.installed import require_agent
from realagents.model_server import ScriptedModelServer

pytestmark = [pytest.mark.realagent, pytest.mark.tmux, pytest.mark.slow]
# a message may reach a member that is still in its first turn by keys, later by its channel
CHANNELS = {
    "claude": {"claude-hook", "keys"},
    "codex": {"codex-queue", "keys"},
    "opencode": {"opencode-http", "keys"},
}


def first_prompts(server: ScriptedModelServer, since: int, marker: str) -> list[str]:
    """Every user text the model got that carries `marker` (the spawn prompt's opening),
    as it arrived: a preview glued to the prompt would be inside it."""
    return [
        item["text"]
        for record in server.model_requests(since)
        for item in record["new"]
        if item["kind"] == "user" and marker in item["text"]
    ]


@pytest.mark.parametrize("agent", AGENTS)
def test_a_member_talks_through_cafleet_and_leaves_nothing_behind(
    agent: str, fleet: Fleet, agent_tmux: Any, model_server: ScriptedModelServer
) -> None:
    require_agent(agent)
    since = len(model_server.requests)
    member, pane = fleet.create_member(agent, "worker")

    shown = fleet.json("member", "show", "--fleet-id", str(fleet.fleet_id), "--member-id",
                       str(member))  # fmt: skip
    assert shown["placement"]["ready_rule"] in {"hook", "http", "screen"}
    assert agent_tmux.foreground(pane) in {"claude", "node", "codex", "opencode"}

    # a preview is submitted once; the member polls, acks and answers through cafleet
    sent = fleet.send(member, "ping 1")
    task = int(re.search(r"^\[(\d+) \|", sent, re.M).group(1))  # type: ignore[union-attr]
    fleet.wait_for_texts({"pong 1"})
    assert fleet.announced_once(task) in CHANNELS[agent]
    assert fleet.texts_to_director().count("pong 1") == 1

    # ping types the poll line; capture reads the screen; exec runs a shell command
    assert "submitted" in fleet.cli("member", "ping", "--fleet-id", str(fleet.fleet_id),
                               "--member-id", str(member)).lower()  # fmt: skip
    capture = fleet.cli("member", "capture", "--fleet-id", str(fleet.fleet_id), "--member-id",
                        str(member), "--lines", "80")  # fmt: skip
    # Codex and OpenCode show the message as a prompt; Claude's hook hands it over unshown
    assert ("Claude Code" if agent == "claude" else "ping 1") in capture
    marker = fleet.workdir / f"exec-{agent}.txt"
    executed = fleet.cli("member", "exec", "--fleet-id", str(fleet.fleet_id), "--member-id",
                         str(member), f"echo exec-ok > {marker}")  # fmt: skip
    deadline = time.monotonic() + REPLY_TIMEOUT  # opencode may still be finishing a turn
    while not (marker.exists() and marker.read_text().strip() == "exec-ok"):
        assert time.monotonic() < deadline, f"{executed}\n{agent_tmux.capture(pane)}"
        time.sleep(0.3)

    # a broadcast reaches it too
    fleet.cli("message", "broadcast", "--fleet-id", str(fleet.fleet_id), "--agent-id",
              str(fleet.director), "--text", "ping 2")  # fmt: skip
    fleet.wait_for_texts({"pong 2"})

    # its pane's border reads its name, status and unread count, whatever title the agent
    # sets itself; the member's own ack brought the count back to 0
    def title() -> str:
        return agent_tmux.run("display-message", "-p", "-t", pane, "#{@cafleet-title}").strip()

    deadline = time.monotonic() + REPLY_TIMEOUT
    while not title().endswith(" · 0 unread"):
        assert time.monotonic() < deadline, title()
        time.sleep(0.3)
    border = agent_tmux.run("display-message", "-p", "-t", pane, "#{E:pane-border-format}")
    assert border.strip() == title() and title().startswith(f"worker #{member} · "), border

    # the spawn prompt went to the model alone, never glued to a preview
    assert all("[cafleet msg" not in text for text in first_prompts(model_server, since, "You are"))

    # member delete closes the pane and leaves no process (no codex app-server)
    out = fleet.cli("member", "delete", "--fleet-id", str(fleet.fleet_id), "--member-id",
                    str(member))  # fmt: skip
    assert "(closed)" in out
    assert agent_tmux.wait_gone(pane, timeout=30)
    assert agent_tmux.wait_no_leftovers(timeout=15) == {}


@pytest.mark.parametrize("agent", AGENTS)
def test_previews_to_a_busy_member_never_interrupt_its_tool(
    agent: str, fleet: Fleet, agent_tmux: Any
) -> None:
    require_agent(agent)
    member, pane = fleet.create_member(agent, "busy")
    ident = f"--fleet-id {fleet.fleet_id} --agent-id {member}"
    long_tool = (
        f"RUN: sleep 45 && cafleet message send {ident} --to {fleet.director} --text slept-ok"
    )
    fleet.send(member, long_tool)
    agent_tmux.wait_for_screen(pane, r"sleep 45", timeout=REPLY_TIMEOUT)

    started = time.monotonic()
    pings = [f"ping {n}" for n in range(101, 121)]
    for text in pings:
        fleet.send(member, text)
    assert time.monotonic() - started < 40, "the previews were not all sent during the tool"

    texts = fleet.wait_for_texts({"slept-ok", *(f"pong {n}" for n in range(101, 121))},
                                 timeout=REPLY_TIMEOUT + 60)  # fmt: skip
    assert texts.count("slept-ok") == 1  # the tool ran to its end: nothing interrupted it
    for n in range(101, 121):
        assert texts.count(f"pong {n}") == 1
    to_member = [m for m in fleet.timeline() if m.to_agent_id == member and m.text in pings]
    assert len(to_member) == 20
    assert all(m.state is MessageState.COMPLETED for m in to_member)
    ways = [fleet.announced_or_joined(m.task_id) for m in to_member]
    assert any(not way.startswith("joined:") for way in ways), ways  # some were announced


@pytest.mark.parametrize("agent", AGENTS)
def test_exec_during_a_turn_runs_once_and_leaves_the_turn_whole(
    agent: str, fleet: Fleet, agent_tmux: Any
) -> None:
    """Claude queues a `!` command typed mid-turn and Codex runs it beside the turn, while
    OpenCode's server refuses it during a turn: exec asks again once the turn has ended."""
    require_agent(agent)
    member, pane = fleet.create_member(agent, "shell")
    ident = f"--fleet-id {fleet.fleet_id} --agent-id {member}"
    fleet.send(member, f"RUN: sleep 12 && cafleet message send {ident} --to {fleet.director}"
                       " --text slept-ok")  # fmt: skip
    agent_tmux.wait_for_screen(pane, r"sleep 12", timeout=REPLY_TIMEOUT)

    marker = fleet.workdir / f"exec-busy-{agent}.txt"
    out = fleet.cli("member", "exec", "--fleet-id", str(fleet.fleet_id), "--member-id",
                    str(member), f"echo exec-ok >> {marker}")  # fmt: skip
    assert "Sent bash command" in out

    texts = fleet.wait_for_texts({"slept-ok"})
    deadline = time.monotonic() + REPLY_TIMEOUT
    while not marker.exists():
        assert time.monotonic() < deadline, agent_tmux.capture(pane)
        time.sleep(0.3)
    time.sleep(2)  # a second run would append a second line
    assert marker.read_text().splitlines() == ["exec-ok"]
    assert texts.count("slept-ok") == 1


@pytest.mark.parametrize("agent", AGENTS)
def test_messages_right_after_create_arrive_once_and_never_glue_to_the_prompt(
    agent: str, fleet: Fleet, model_server: ScriptedModelServer
) -> None:
    require_agent(agent)
    since = len(model_server.requests)
    member, _ = fleet.create_member(agent, "fresh")
    created = time.monotonic()
    base = [sys.executable, "-m", "cafleet", "message", "send", "--fleet-id",
            str(fleet.fleet_id), "--agent-id", str(fleet.director),
            "--to", str(member)]  # fmt: skip
    senders = [
        subprocess.Popen([*base, "--text", f"ping {n}"], env=fleet.env, cwd=fleet.workdir,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        for n in range(201, 211)
    ]  # fmt: skip
    assert time.monotonic() - created < 1.0
    for sender in senders:
        _, err = sender.communicate(timeout=120)
        assert sender.returncode == 0, err

    texts = fleet.wait_for_texts({f"pong {n}" for n in range(201, 211)})
    for n in range(201, 211):
        assert texts.count(f"pong {n}") == 1
    for m in (m for m in fleet.timeline() if m.to_agent_id == member):
        fleet.announced_or_joined(m.task_id)
    prompts = first_prompts(model_server, since, "You are fresh")
    assert prompts and all("[cafleet msg" not in text for text in prompts)


@pytest.mark.parametrize("agent", AGENTS)
def test_fleet_delete_closes_live_members_and_leaves_no_process(
    agent: str, fleet: Fleet, agent_tmux: Any
) -> None:
    require_agent(agent)
    panes = [fleet.create_member(agent, name)[1] for name in ("one", "two")]

    out = fleet.cli("fleet", "delete", "--fleet-id", str(fleet.fleet_id))

    assert "2 closed" in out
    for pane in panes:
        assert agent_tmux.wait_gone(pane, timeout=30)
    assert agent_tmux.wait_no_leftovers(timeout=15) == {}


@pytest.mark.parametrize("agent", AGENTS)
def test_cafleet_demo_runs_with_the_real_agent(agent: str, agent_home: Any, tmp_path: Path) -> None:
    require_agent(agent)
    done = subprocess.run(
        [sys.executable, "-m", "cafleet", "demo", "--coding-agent", agent, "--rounds", "2"],
        env={**agent_home.env, "CAFLEET_DATABASE_URL": f"sqlite:///{tmp_path / 'unused.db'}"},
        cwd=agent_home.workdir,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "pong 2 [completed]" in done.stdout


@pytest.mark.parametrize("agent", ["claude", "codex"])
def test_a_spawn_prompt_starting_with_a_dash_is_a_prompt_not_an_option(
    agent: str, fleet: Fleet, agent_tmux: Any, model_server: ScriptedModelServer
) -> None:
    require_agent(agent)
    since = len(model_server.requests)
    prompt = "- first: you are dash. FLEET ID: {fleet_id}. YOUR MEMBER ID: {agent_id}."

    member, pane = fleet.create_member(agent, "dash", prompt)

    assert agent_tmux.foreground(pane) in {"claude", "node", "codex"}
    deadline = time.monotonic() + REPLY_TIMEOUT
    while not first_prompts(model_server, since, "first: you are dash"):
        assert time.monotonic() < deadline, agent_tmux.capture(pane)
        time.sleep(0.3)
    fleet.send(member, "ping 7")
    fleet.wait_for_texts({"pong 7"})


# Codex 0.171 started with CAFleet's flags runs in an untrusted directory without asking.
@pytest.mark.parametrize("agent", ["claude"])
def test_a_trust_dialog_fails_the_spawn_and_is_never_answered(
    agent: str, fleet: Fleet, agent_tmux: Any, agent_home: Any, tmp_path: Path
) -> None:
    require_agent(agent)
    untrusted = tmp_path / "untrusted"
    untrusted.mkdir()
    before = set(agent_tmux.panes())

    out = fleet.cli(
        "member", "create", "--fleet-id", str(fleet.fleet_id), "--agent-id",
        str(fleet.director), "--name", "wary", "--description", "untrusted dir",
        "--coding-agent", agent, "--text", PROMPT.format(name="wary"),
        check=False, cwd=untrusted,
    )  # fmt: skip

    assert "did not start: a dialog is on screen" in out
    assert "Rolled back registration" in out
    assert "Last lines of pane" in out
    listed = fleet.json("member", "list", "--fleet-id", str(fleet.fleet_id))
    assert [m["name"] for m in listed] == []
    assert set(agent_tmux.panes()) == before  # the dialog's pane was closed, not answered
    state = (agent_home.home / ".claude.json").read_text()
    assert "rejected" not in state or '"rejected": []' in state  # no key was refused

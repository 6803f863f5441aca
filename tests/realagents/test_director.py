"""Claude Code, Codex and OpenCode as the Director, as a user runs them.

The test starts the real agent in a pane (in the least-permissive mode in which it can run
`cafleet`, see docs/agents.md) and types prompts into it; the scripted model server turns
them into the agent's own tool calls. Members are real agents of other kinds.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable

import pytest

from realagents.director import (
    NOT_SESSION,
    USER_EXPORTS,
    Director,
    agent_process,
    environ,
    tool_environment,
)
from realagents.fleet import REPLY_TIMEOUT

pytestmark = [pytest.mark.realagent, pytest.mark.tmux, pytest.mark.slow]

# the Director's agent, and the two other agents its members run
TEAMS = {
    "claude": ("codex", "opencode"),
    "codex": ("claude", "opencode"),
    "opencode": ("claude", "codex"),
}
# what the Director's permission check shows for a command outside its grants, the prompt
# that runs one, and the key that closes the dialog without running it
ASKING = {
    # 2.1.332's default (auto) mode has such a command checked on the server; offline it
    # asks instead (it runs an edit in the working directory, as `touch` alone, unasked)
    "claude": ("RUN: bash -c 'touch {marker}'",
               r"(?i)auto mode can't check actions|do you want to proceed", "Escape"),
    "codex": ("RUN: ESCALATE touch {marker}", r"(?i)would you like to run the following command",
              "Escape"),
}  # fmt: skip


def member_agent_env(director: Director, pane: str) -> dict[str, str]:
    """The environment of the agent running in a member's pane, from /proc."""
    launcher = int(director.tmux.run("display-message", "-p", "-t", pane, "#{pane_pid}"))
    return environ(agent_process(launcher))


def pong_task(director: Director, text: str, timeout: float = REPLY_TIMEOUT) -> int:
    """The task id of the member's message `text` to the Director, once it is stored."""
    deadline = time.monotonic() + timeout
    while True:
        found = [m.task_id for m in director.fleet.timeline()
                 if m.to_agent_id == director.fleet.director and m.text == text]  # fmt: skip
        if found:
            return found[0]
        assert time.monotonic() < deadline, f"no {text!r} from a member:\n{director.screen()}"
        time.sleep(0.5)


@pytest.mark.parametrize("agent", sorted(TEAMS))
def test_the_director_agent_runs_a_team_of_other_agents(
    agent: str, start_director: Callable[[str], Director]
) -> None:
    """It creates the fleet and two members of other agents; none of them inherits its
    session; a member's message during its long tool call is announced once, after it."""
    director = start_director(agent)
    director.create_fleet()
    members = {kind: director.create_member(kind, f"m-{kind}") for kind in TEAMS[agent]}
    for member, _ in members.values():
        assert director.fleet.member_status(member) != "starting"

    (first, _), _ = members.values()
    ident = f"--fleet-id {director.fleet.fleet_id} --agent-id {director.fleet.director}"
    long_call = f"cafleet message send {ident} --to {first} --text 'ping 1' && sleep 25"
    since = director.say(f"RUN: {long_call}")
    tool = tool_environment(director, "sleep")
    task = pong_task(director, "pong 1")
    assert director.previews_seen(task, since) == 0  # not while the tool runs
    director.output_of(long_call, since, timeout=REPLY_TIMEOUT)
    director.wait_polled(task)
    assert director.fleet.announced_once(task) == "keys"
    assert director.previews_seen(task, since) == 1

    # what the agent sets for its tools, measured: its shell tool's environment (the
    # `sleep` above) against the one it was started with; in each member's agent each such
    # variable is what the user started the Director with, or absent
    started = director.started_with()
    session = {k: v for k, v in tool.items() if started.get(k) != v and k not in NOT_SESSION}
    assert session, tool
    for kind, (_, pane) in members.items():
        env = member_agent_env(director, pane)
        leaked = {k: env[k] for k in session if env.get(k) not in (started.get(k), None)}
        assert leaked == {}, f"{kind} member got {agent}'s {leaked}"
        if agent == "claude":  # its start is readable from its tools: the user's value is back
            assert env.get("GIT_EDITOR") == USER_EXPORTS["GIT_EDITOR"]


@pytest.mark.parametrize("agent", sorted(ASKING))
def test_a_message_meeting_the_directors_permission_dialog_is_announced_after_it(
    agent: str, start_director: Callable[[str], Director]
) -> None:
    """Nothing is typed into the dialog; once it closes the message is announced once."""
    director = start_director(agent)
    director.create_fleet()
    kind = TEAMS[agent][0]
    member, _ = director.create_member(kind, f"m-{kind}")
    order, dialog, close = ASKING[agent]
    marker = director.fleet.workdir / "approved.txt"
    report = f"cafleet message send --fleet-id {director.fleet.fleet_id} --agent-id {member}"
    director.fleet.send(member, f"RUN: sleep 12 && {report} --to {director.fleet.director}"
                                " --text report-2")  # fmt: skip
    since = director.say(order.format(marker=marker))
    director.tmux.wait_for_screen(director.pane, dialog, timeout=REPLY_TIMEOUT)

    task = pong_task(director, "report-2", timeout=REPLY_TIMEOUT + 30)
    # the keystrokes met the dialog and were skipped; the message waits, held, for the pane
    held = wait_attempted(director, task, until=lambda tried: len(tried) >= 2)
    assert [state for _, state in held] == ["skipped", "pending"], held
    assert re.search(dialog, director.screen())  # the dialog still waits for its answer
    assert "report-2" not in director.screen()
    assert not marker.exists()

    director.tmux.run("send-keys", "-t", director.pane, close)
    director.wait_polled(task)
    assert director.fleet.announced_once(task) == "keys"
    assert director.previews_seen(task, since) == 1
    assert not marker.exists()


def test_a_codex_director_spawns_codex_members_and_hears_from_them(
    start_director: Callable[[str], Director],
) -> None:
    """Run from inside Codex's sandbox (its own pid namespace), `member create` must still
    see a Codex member start, and a sandboxed Codex member's messages must still reach the
    Director's pane, which runs Codex too."""
    director = start_director("codex")
    director.create_fleet()
    tell = (
        "cafleet message send --fleet-id {fleet_id} --agent-id {agent_id} --to"
        " {director_agent_id} --text"
    )
    loop = "(nohup cafleet monitor start --fleet-id {fleet_id} > monitor.log 2>&1 &)"
    monitor, _ = director.create_member(
        "codex", "watch", "--role monitor",
        then=f"RUN: {tell} ready-monitor && {loop} && sleep 3 && {tell} ready-live",
    )  # fmt: skip

    def heard(text: str) -> None:
        task = pong_task(director, text)
        director.wait_polled(task)
        assert director.fleet.announced_once(task) == "keys", text
        assert director.previews_seen(task) == 1, text

    # (the next prompt only once both are in: a preview typed while a prompt is being typed
    # joins the prompt, whose command the harness then waits for in vain)
    heard("ready-monitor")
    heard("ready-live")
    member, _ = director.create_member("codex", "worker", then=f"RUN: {tell} ready-worker")
    heard("ready-worker")
    assert {monitor, member} <= set(director.fleet.members)


Attempts = list[tuple[str | None, str]]


def wait_attempted(
    director: Director, task: int, until: Callable[[Attempts], bool] = bool
) -> Attempts:
    deadline = time.monotonic() + 30
    while not until(tried := director.fleet.attempts(task)):
        assert time.monotonic() < deadline, f"no such delivery attempts recorded: {tried}"
        time.sleep(0.3)
    return tried

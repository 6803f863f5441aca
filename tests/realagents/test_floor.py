"""What a member may do by default: a coding agent's ordinary work in its workspace.

Each real agent, started as `member create` starts it with no flags of the user's, edits a
file of its working directory (with its own file tool where it has one, else its shell),
runs the project's tests and commits in a real git repository, with no dialog and no
refusal; a deny rule in the user's own Claude Code settings still denies.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from cafleet.domain.agents.registry import PROFILES
from cafleet.domain.placement import CodingAgent
from realagents.fleet import AGENTS, PROMPT, REPLY_TIMEOUT, Fleet
from realagents.installed import require_agent
from realagents.model_server import ScriptedModelServer

pytestmark = [pytest.mark.realagent, pytest.mark.tmux, pytest.mark.slow]

TEXT = "floor edit"
# lower-case words of a refused tool call, in each agent's own wording
REFUSALS = ("permission", "denied", "read-only file system", "rejected", "not allowed")
TEST_FILE = f"""\
from pathlib import Path


def test_note():
    assert Path("note.txt").read_text() == "{TEXT}\\n"
"""


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def project(workdir: Path) -> None:
    """A git repository with one commit, holding a test that wants note.txt."""
    git(workdir, "init", "-q")
    git(workdir, "config", "user.name", "Member")
    git(workdir, "config", "user.email", "member@example.com")
    (workdir / "test_note.py").write_text(TEST_FILE)
    (workdir / ".gitignore").write_text("__pycache__/\n")
    git(workdir, "add", "test_note.py", ".gitignore")
    git(workdir, "commit", "-qm", "start")


def task(workdir: Path, name: str) -> str:
    """The spawn prompt: write note.txt, run the tests, commit, and say so."""
    ident = "--fleet-id {fleet_id} --agent-id {agent_id}"
    steps = (
        f"python -m pytest -q -p no:cacheprovider test_note.py && git add note.txt"
        f" && git commit -qm 'add the note' && cafleet message send {ident}"
        " --to {director_agent_id} --text committed"
    )
    return f"{PROMPT.format(name=name)}\nWRITE: {workdir / 'note.txt'} {TEXT}\nRUN: {steps}"


def outputs(server: ScriptedModelServer, since: int) -> list[dict[str, Any]]:
    """Every tool result the model got since `since`: (command, text)."""
    return [
        item for record in server.model_requests(since) for item in record["new"]
        if item["kind"] == "tool"
    ]  # fmt: skip


def commit_output(server: ScriptedModelServer, since: int) -> dict[str, Any]:
    """The result of the run that ends in the commit, once the model has it."""

    def has_it(record: dict[str, Any]) -> bool:
        return any("git commit" in (i["command"] or "") for i in record["new"])

    server.wait_for(has_it, timeout=REPLY_TIMEOUT, since=since)
    return next(i for i in outputs(server, since) if "git commit" in (i["command"] or ""))


def refused(items: list[dict[str, Any]]) -> list[str]:
    return [i["text"] for i in items if any(word in i["text"].lower() for word in REFUSALS)]


@pytest.mark.parametrize("agent", AGENTS)
def test_a_member_edits_tests_and_commits_in_its_workspace_without_asking(
    agent: str, fleet: Fleet, agent_tmux: Any, model_server: ScriptedModelServer
) -> None:
    require_agent(agent)
    fleet.env.pop(f"CAFLEET_AGENT_ARGS_{agent.upper()}", None)  # the default start
    project(fleet.workdir)
    since = len(model_server.requests)

    _, pane = fleet.create_member(agent, "coder", task(fleet.workdir, "coder"))

    result = commit_output(model_server, since)
    screen = agent_tmux.capture(pane)
    assert refused(outputs(model_server, since)) == [], screen
    assert "1 passed" in result["text"], result["text"]
    assert git(fleet.workdir, "log", "-1", "--format=%s").strip() == "add the note"
    assert git(fleet.workdir, "show", "HEAD:note.txt") == f"{TEXT}\n"
    assert git(fleet.workdir, "status", "--porcelain") == ""
    fleet.wait_for_texts({"committed"})
    assert PROFILES[CodingAgent(agent)].dialog_on(agent_tmux.capture(pane)) is None
    if agent != "codex":  # codex has no file tool for this model: it writes with its shell
        writes = [i for i in outputs(model_server, since) if i["command"] in ("Write", "write")]
        assert writes, outputs(model_server, since)


def test_a_deny_rule_of_the_users_claude_settings_still_denies(
    fleet: Fleet, agent_tmux: Any, agent_home: Any, model_server: ScriptedModelServer
) -> None:
    require_agent("claude")
    fleet.env.pop("CAFLEET_AGENT_ARGS_CLAUDE", None)
    settings = {"permissions": {"deny": ["Bash(git commit:*)"]}}
    (agent_home.home / ".claude/settings.json").write_text(json.dumps(settings))
    project(fleet.workdir)
    since = len(model_server.requests)

    _, pane = fleet.create_member("claude", "careful", task(fleet.workdir, "careful"))

    result = commit_output(model_server, since)
    assert "denied" in result["text"].lower(), result["text"]
    assert git(fleet.workdir, "log", "--format=%s").split("\n")[:1] == ["start"]
    assert (fleet.workdir / "note.txt").read_text() == f"{TEXT}\n"  # the edit was allowed
    assert PROFILES[CodingAgent.CLAUDE].dialog_on(agent_tmux.capture(pane)) is None


def test_a_claude_member_is_still_refused_other_directories_and_pushing(
    fleet: Fleet, agent_tmux: Any, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    require_agent("claude")
    fleet.env.pop("CAFLEET_AGENT_ARGS_CLAUDE", None)
    project(fleet.workdir)
    outside = tmp_path / "outside.txt"  # beside the working directory, not in it
    prompt = f"{PROMPT.format(name='bold')}\nWRITE: {outside} {TEXT}\nRUN: git push origin HEAD"
    since = len(model_server.requests)

    _, pane = fleet.create_member("claude", "bold", prompt)

    def pushed(record: dict[str, Any]) -> bool:
        return any("git push" in (i["command"] or "") for i in record["new"])

    model_server.wait_for(pushed, timeout=REPLY_TIMEOUT, since=since)
    denied = [i["command"] for i in outputs(model_server, since) if "denied" in i["text"].lower()]
    assert denied == ["Write", "git push origin HEAD"], outputs(model_server, since)
    assert not outside.exists()
    assert PROFILES[CodingAgent.CLAUDE].dialog_on(agent_tmux.capture(pane)) is None

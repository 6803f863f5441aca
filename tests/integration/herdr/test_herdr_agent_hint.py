"""A member's agent on herdr carries HERDR_AGENT, herdr's agent-identity hint, so herdr names
the agent behind CAFleet's launcher: the environment `member create` builds, written to the
member's launch pad (the whole environment, `inherit: false`), started by the herdr driver
in a real pane of the fake herdr server, whose pane processes get herdr's own variables and
whose `agent` follows the hint in the foreground leader's environment as herdr's does."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from tests.fakes.herdr_server import FakeHerdrServer, wait_until

from cafleet.adapters.herdr.client import forget_pings
from cafleet.adapters.herdr.driver import HerdrPaneDriver
from cafleet.adapters.runtime.launch_pads import RuntimeLaunchPads
from cafleet.domain.agents.launch import member_environment
from cafleet.domain.placement import Multiplexer

from .conftest import clean_environment

# The agent: writes its environment where it is told, then stays in front of the pane.
AGENT = (
    "import json, os, sys, time; json.dump(dict(os.environ), open(sys.argv[1] + '.new', 'w'));"
    " os.replace(sys.argv[1] + '.new', sys.argv[1]); time.sleep(60)"
)


@pytest.mark.parametrize(
    "hint", [None, "codex"], ids=["no-inherited-hint", "a-hint-in-herdr-s-environment"]
)
def test_the_member_s_agent_gets_its_hint_and_the_pane_keeps_its_own_variables(
    tmp_path: Path, hint: str | None
) -> None:
    forget_pings()
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    inherited = clean_environment(**({} if hint is None else {"HERDR_AGENT": hint}))
    server = FakeHerdrServer(pty=True, env=inherited).start(cwd=str(tmp_path))
    try:
        director = {
            **inherited,
            "HERDR_ENV": "1",
            "HERDR_PANE_ID": server.root_pane,
            "HERDR_SOCKET_PATH": server.socket_path,
        }
        env = member_environment(
            director, fleet_id=1, agent_id=2, database_url="sqlite:////fleet.db",
            multiplexer=Multiplexer.HERDR, member_secret="secret", herdr_agent="claude",
        )  # fmt: skip
        report = tmp_path / "environment.json"
        pad = RuntimeLaunchPads(runtime, sys.executable).prepare(1, 2)
        argv = pad.launcher([sys.executable, "-c", AGENT, str(report)], env, str(tmp_path))
        driver = HerdrPaneDriver(server.socket_path, launch_dir=lambda: runtime)

        pane_id = driver.spawn(server.root_pane, argv, {}, str(tmp_path))
        wait_until(report.exists, "the agent's report", 30.0)
        seen = json.loads(report.read_text())
        shown = driver.pane(pane_id)
    finally:
        server.stop()
        forget_pings()

    assert seen.get("HERDR_AGENT") == "claude"  # the member's, never one herdr inherited
    assert (seen["HERDR_PANE_ID"], seen["HERDR_SOCKET_PATH"]) == (pane_id, server.socket_path)
    assert seen["CAFLEET_AGENT_ID"] == "2"
    assert shown is not None and shown.agent == "claude"  # herdr names the member's agent

"""HerdrPaneDriver.prompt_agent against the fake herdr server (plain mode): the request it
makes, the wait for herdr's own Enter, and how each of herdr's answers is read."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from tests.fakes.herdr_server import FakeHerdrServer, wait_until

from cafleet.adapters.herdr.driver import HerdrPaneDriver
from cafleet.domain.errors import Unavailable
from cafleet.domain.panes import PromptAnswer

ENTER_DELAY = 0.05


@pytest.fixture
def prompting(server: FakeHerdrServer, launch_dir: Path) -> HerdrPaneDriver:
    server.prompt_enter_delay = ENTER_DELAY
    return HerdrPaneDriver(
        server.socket_path, launch_dir=lambda: launch_dir, prompt_enter_seconds=ENTER_DELAY * 3
    )


def test_a_detected_agent_gets_the_text_then_herdrs_enter_before_the_call_returns(
    server: FakeHerdrServer, prompting: HerdrPaneDriver
) -> None:
    pane = server.root_pane
    server.set_agent_status(pane, "working", agent="claude")
    server.set_bracketed_paste(pane)

    answer = prompting.prompt_agent(pane, "[msg]\nhello")

    assert answer is PromptAnswer.TAKEN
    assert server.inputs(pane) == [b"\x1b[200~[msg]\nhello\x1b[201~", b"\r"]
    assert [p for m, p in server.request_log() if m == "agent.prompt"] == [
        {"target": pane, "text": "[msg]\nhello"}
    ]


def test_a_blocked_agent_is_refused_and_nothing_is_written(
    server: FakeHerdrServer, prompting: HerdrPaneDriver
) -> None:
    pane = server.root_pane
    server.set_agent_status(pane, "blocked", agent="codex")

    assert prompting.prompt_agent(pane, "hello") is PromptAnswer.BLOCKED
    time.sleep(ENTER_DELAY * 3)
    assert server.inputs(pane) == []


def test_a_pane_without_a_detected_agent_or_gone_has_no_agent(
    server: FakeHerdrServer, prompting: HerdrPaneDriver
) -> None:
    assert prompting.prompt_agent(server.root_pane, "hello") is PromptAnswer.NO_AGENT
    assert prompting.prompt_agent("w9:p9", "hello") is PromptAnswer.NO_AGENT
    assert server.inputs(server.root_pane) == []


def test_a_server_that_does_not_know_agent_prompt_has_no_method(
    server: FakeHerdrServer, prompting: HerdrPaneDriver
) -> None:
    server.fail("agent.prompt", "invalid_request", "invalid request: unknown variant")

    assert prompting.prompt_agent(server.root_pane, "hello") is PromptAnswer.NO_METHOD


def test_any_other_refusal_is_unavailable(
    server: FakeHerdrServer, prompting: HerdrPaneDriver
) -> None:
    server.fail("agent.prompt", "agent_prompt_failed", "the pty is closed")

    with pytest.raises(Unavailable, match="agent_prompt_failed: the pty is closed"):
        prompting.prompt_agent(server.root_pane, "hello")


def test_enter_follows_as_its_own_write_after_herdrs_delay(server: FakeHerdrServer) -> None:
    pane = server.root_pane
    server.set_agent_status(pane, "idle", agent="claude")
    server.prompt_enter_delay = 0.3
    driver = HerdrPaneDriver(server.socket_path, prompt_enter_seconds=0)

    driver.prompt_agent(pane, "hello")

    assert server.inputs(pane) == [b"hello"]  # the call did not wait: Enter is still due
    wait_until(lambda: server.inputs(pane) == [b"hello", b"\r"], "herdr's delayed Enter", 5)

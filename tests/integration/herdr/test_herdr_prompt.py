"""herdr's own prompt as a delivery channel, end to end: `cafleet message send` to a member
in the fake herdr server (pty mode, the demo agent really running), then the ledger and what
the agent received."""

from __future__ import annotations

import time
from typing import Any

import pytest

pytestmark = pytest.mark.slow

PREVIEW_HEAD = "[cafleet msg "
SETTLE_SECONDS = 1.0  # well past herdr's delayed Enter and the agent's reading of it


def send(fleet: Any, to: int, text: str) -> dict[str, Any]:
    sent: dict[str, Any] = fleet.json(
        "message", "send", "--fleet-id", str(fleet.fleet_id),
        "--agent-id", str(fleet.director), "--to", str(to), "--text", text,
    )  # fmt: skip
    return sent


def ledger(fleet: Any, task_id: int) -> list[tuple[str | None, str, str | None]]:
    shown = fleet.json(
        "message", "show", "--full", "--fleet-id", str(fleet.fleet_id),
        "--agent-id", str(fleet.director), "--task-id", str(task_id),
    )  # fmt: skip
    return [(d["channel"], d["state"], d["error"]) for d in shown["deliveries"]]


def previews(member: Any) -> list[str]:
    return [s for s in member.submissions() if s.startswith(PREVIEW_HEAD)]


def test_a_member_herdr_detected_gets_the_message_through_herdrs_prompt_once(
    herdr_fleet: Any,
) -> None:
    member = herdr_fleet.member("erin")
    herdr_fleet.server.set_agent_status(member.pane_id, "idle", agent="pi")

    sent = send(herdr_fleet, member.agent_id, "through herdr's prompt")

    task_id = sent["task"]["id"]
    assert ledger(herdr_fleet, task_id) == [("herdr-prompt", "sent", None)]
    submitted = herdr_fleet.wait(lambda: previews(member), "the preview to be submitted")
    time.sleep(SETTLE_SECONDS)
    assert previews(member) == submitted and len(submitted) == 1
    assert submitted[0].split("\n")[1] == "through herdr's prompt"
    requests = [m for m, _ in herdr_fleet.server.request_log()]
    assert "agent.prompt" in requests
    # nothing was typed by CAFleet itself after herdr's prompt: no send_input or send_keys
    after = requests[requests.index("agent.prompt") :]
    assert not {"pane.send_input", "pane.send_keys", "pane.send_text"} & set(after)


def test_a_member_at_a_dialog_is_not_typed_into_and_is_prompted_once_it_closes(
    herdr_fleet: Any,
) -> None:
    member = herdr_fleet.member("frank")
    server = herdr_fleet.server
    server.set_agent_status(member.pane_id, "blocked", agent="pi")
    before = server.typed(member.pane_id)

    sent = send(herdr_fleet, member.agent_id, "must wait for the dialog")

    task_id = sent["task"]["id"]
    assert ledger(herdr_fleet, task_id) == [
        ("herdr-prompt", "skipped", "agent-blocked"),
        (None, "pending", "held:nothing:agent-blocked"),  # a drainer watches the pane
    ]
    time.sleep(SETTLE_SECONDS)
    assert server.typed(member.pane_id) == before
    assert previews(member) == []
    server.set_agent_status(member.pane_id, "idle", agent="pi")  # the dialog was answered
    submitted = herdr_fleet.wait(lambda: previews(member), "the preview to be submitted")
    time.sleep(SETTLE_SECONDS)
    assert previews(member) == submitted and len(submitted) == 1
    assert ledger(herdr_fleet, task_id)[-1] == ("herdr-prompt", "sent", None)


def test_a_member_herdr_detected_no_agent_in_is_typed_into_once(herdr_fleet: Any) -> None:
    member = herdr_fleet.member("gina")  # herdr does not recognise the demo agent

    sent = send(herdr_fleet, member.agent_id, "typed after all")

    assert ledger(herdr_fleet, sent["task"]["id"]) == [
        ("herdr-prompt", "skipped", "no-detected-agent"),
        ("keys", "sent", None),
    ]
    submitted = herdr_fleet.wait(lambda: previews(member), "the preview to be submitted")
    time.sleep(SETTLE_SECONDS)
    assert previews(member) == submitted and len(submitted) == 1

"""The admin server on PostgreSQL: what the CLI writes is served (lists and the event
stream), and what the WebUI sends the CLI reads."""

from __future__ import annotations

import pytest

from .test_server import EventReader, cli_send, task_ids

pytestmark = pytest.mark.postgres


def test_cli_messages_are_listed_and_streamed(served_on_postgres) -> None:
    served = served_on_postgres
    director, admin = served.fleet.director, served.fleet.admin
    client = served.client()
    reader = EventReader(client)
    try:
        assert reader.opened.wait(15)
        sent = cli_send(served, director, admin, "over postgres")
        message = reader.wait_for("message")
        timeline = client.get("/api/timeline")
        inbox = client.get(f"/api/agents/{admin}/inbox")
    finally:
        client.close()

    assert message["task_id"] == sent
    assert task_ids(timeline)[0] == sent == task_ids(inbox)[0]
    assert timeline.json()["messages"][0]["body"] == "over postgres"


def test_a_webui_send_reaches_the_cli(served_on_postgres) -> None:
    served = served_on_postgres
    with served.client() as client:
        response = client.post(
            "/api/messages/send", json={"to_agent_id": served.fleet.admin, "text": "from the page"}
        )
    assert response.status_code == 200, response.text

    polled = served.workspace.json("message", "poll", "--fleet-id", str(served.fleet.fleet_id),
                                   "--agent-id", str(served.fleet.admin))  # fmt: skip
    assert [m["text"] for m in polled if m["id"] == response.json()["task_id"]] == ["from the page"]

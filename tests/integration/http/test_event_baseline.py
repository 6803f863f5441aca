"""GET /api/events reads its baseline before the response starts, on a real uvicorn server.

The server runs in this process (so the test can hold the stream's first look) over a SQLite
file written by the CLI. The first look waits until the client has seen the stream open and
committed a message, or for HOLD_SECONDS: if the headers went out before the baseline was
read, the message is already in the baseline and never comes as an event.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx2
import pytest
import uvicorn
from fastapi import FastAPI

from cafleet.application.admin.views import FleetMark
from cafleet.composition.container import build_container
from cafleet.entrypoints.http.app import create_app
from cafleet.entrypoints.http.events import StreamLimits
from cafleet.settings import Settings

pytestmark = pytest.mark.tmux

HOLD_SECONDS = 2.0  # how long the first look waits for the client when nothing else frees it
STREAM = StreamLimits(poll_seconds=0.1, max_seconds=HOLD_SECONDS + 3)


@contextmanager
def uvicorn_serving(app: FastAPI) -> Iterator[str]:
    """The app on a free loopback port, served by uvicorn on a thread until the block ends."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 15
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(15)
        listener.close()


def test_a_message_committed_once_the_stream_is_open_is_an_event(workspace, private_tmux) -> None:
    made = workspace.json("fleet", "create", "--name", "baseline", **private_tmux.env)
    fleet_id, director = made["fleet_id"], made["director"]["agent_id"]
    app = create_app(build_container(Settings.from_environ(workspace.env)), stream_limits=STREAM)
    admin = app.state.admin
    read_mark = admin.mark
    client_acted = threading.Event()
    looks: list[float] = []

    def held_mark(fid: int) -> FleetMark:
        if not looks:
            client_acted.wait(HOLD_SECONDS)
        looks.append(time.monotonic())
        return read_mark(fid)

    admin.mark = held_mark
    events: list[str] = []
    with (
        uvicorn_serving(app) as base_url,
        httpx2.Client(base_url=base_url, timeout=30, trust_env=False) as client,
        client.stream("GET", "/api/events", headers={"X-Fleet-Id": str(fleet_id)}) as response,
    ):
        # the headers are here: the stream is open, as a page's EventSource sees it
        assert response.status_code == 200
        sent = workspace.json(
            *("message", "send", "--fleet-id", str(fleet_id), "--agent-id", str(director)),
            *("--to", str(made["administrator_agent_id"]), "--text", "right after open"),
        )
        client_acted.set()
        events = [line for line in response.iter_lines() if line.startswith("data: ")]

    assert looks, "the stream never read its baseline"
    expected = f'"changed":["messages"],"task_id":{sent["task"]["id"]}'
    assert any(expected in line for line in events), events

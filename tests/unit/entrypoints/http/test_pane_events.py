"""Live panes on GET /api/events (`watch=`), and what the roster adds for the drawer: each
agent's coding agent and unread count."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import pytest
from dependency_injector import providers

from cafleet.adapters.fake.clock import FakeClock
from cafleet.application.admin.pane_watch import TOO_MANY_PANES, PaneWatch, screens_of
from cafleet.entrypoints.http.events import (
    MAX_WATCHED,
    WATCH_SYNTAX,
    WATCH_TOO_LONG,
    StreamLimits,
    fleet_events,
)

FAST = StreamLimits(poll_seconds=0.001, max_seconds=5, keepalive_seconds=60, frame_seconds=0.001)
STREAMING = StreamLimits(poll_seconds=0.01, max_seconds=0.5, frame_seconds=0.01)


def events_of(text: str) -> list[tuple[str, dict[str, Any]]]:
    """Every `event:` + `data:` block of a stream's text, in order."""
    found = []
    for block in text.split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        if "event" in lines:
            found.append((lines["event"], json.loads(lines["data"])))
    return found


async def never() -> bool:
    return False


def run(steps: Callable[[], Awaitable[None]]) -> None:
    async def bounded() -> None:
        with anyio.fail_after(5):
            await steps()

    anyio.run(bounded)


# --- the stream body ------------------------------------------------------------------------


def test_the_stream_sends_a_pane_when_the_watch_starts_and_when_it_changed(
    container, fleets, alpha
) -> None:
    fid = alpha.fleet.fleet_id
    worker = fleets.member(alpha, "worker", pane="%5")
    pane = fleets.server(alpha).panes["%5"]
    pane.screen = ["\x1b[32m$\x1b[0m make test"]
    hub = PaneWatch(screens_of(container.member_panes()), container.clock(), loop=False)
    watcher = hub.join(fid, [worker, alpha.administrator.agent_id])

    async def steps() -> None:
        admin = container.admin()
        events = fleet_events(admin, fid, admin.mark(fid), FAST, never, lambda: hub.fresh(watcher))
        assert (await anext(events)).startswith("retry:")
        hub.tick()
        first, second = events_of(await anext(events) + await anext(events))
        assert first == (
            "pane",
            {
                "fleet_id": fid,
                "agent_id": worker,
                "ansi": "\x1b[32m$\x1b[0m make test",
                "captured_at": first[1]["captured_at"],
            },
        )
        assert second[1]["agent_id"] == alpha.administrator.agent_id
        assert second[1]["error"].startswith(f"agent {alpha.administrator.agent_id} has no")
        assert "ansi" not in second[1]
        hub.tick()  # nothing changed: nothing is sent, the stream goes on with its marks
        pane.screen = ["$ make test", "ok"]
        hub.tick()
        name, payload = events_of(await anext(events))[0]
        assert (name, payload["ansi"]) == ("pane", "$ make test\nok")
        await events.aclose()

    run(steps)


# --- the route ------------------------------------------------------------------------------


@pytest.mark.parametrize("watch", ["x", "3,,5", "3;5", "0", "-1", "1.5", "9" * 30])
def test_a_watch_that_is_not_a_list_of_ids_is_a_400(make_client, alpha, scoped, watch) -> None:
    client = make_client()

    response = client.get("/api/events", params={"watch": watch}, headers=scoped(1))

    assert response.status_code == 400
    assert response.json() == {"detail": WATCH_SYNTAX}
    assert client.app.state.stream_slots.open == 0


def test_a_watch_of_more_than_32_agents_is_a_400(make_client, alpha, scoped) -> None:
    client = make_client()
    many = ",".join(str(i) for i in range(1, MAX_WATCHED + 2))

    response = client.get("/api/events", params={"watch": many}, headers=scoped(1))

    assert response.status_code == 400
    assert response.json() == {"detail": WATCH_TOO_LONG}


def test_a_watch_may_repeat_an_id_and_is_bounded_by_distinct_agents(
    make_client, alpha, scoped
) -> None:
    client = make_client(stream_limits=STREAMING)
    director = alpha.director.agent_id
    repeated = ",".join([str(director)] * (MAX_WATCHED + 5))

    response = client.get("/api/events", params={"watch": repeated}, headers=scoped(1))

    assert response.status_code == 200
    assert [p["agent_id"] for e, p in events_of(response.text) if e == "pane"] == [director]


@pytest.mark.parametrize("whose", ["unknown", "other fleet"])
def test_a_watch_of_an_agent_outside_the_fleet_is_a_404(
    make_client, fleets, alpha, scoped, whose
) -> None:
    client = make_client()
    other = fleets.create("beta")
    agent = 987654 if whose == "unknown" else other.director.agent_id

    response = client.get(
        "/api/events", params={"watch": f"{alpha.director.agent_id},{agent}"}, headers=scoped(1)
    )

    assert response.status_code == 404
    assert response.json() == {"detail": "Agent not found"}
    assert client.app.state.pane_watch.watched() == 0


def test_the_route_streams_the_watched_panes_and_leaves_the_watch_at_the_end(
    make_client, fleets, alpha, scoped
) -> None:
    client = make_client(stream_limits=STREAMING)
    worker = fleets.member(alpha, "worker", pane="%5")
    gone = fleets.member(alpha, "gone")  # its recorded pane does not exist
    fleets.server(alpha).panes["%5"].screen = ["\x1b[1mhello\x1b[0m"]

    response = client.get(
        "/api/events", params={"watch": f"{worker},{gone}"}, headers=scoped(alpha.fleet.fleet_id)
    )

    assert response.status_code == 200
    panes = {p["agent_id"]: p for e, p in events_of(response.text) if e == "pane"}
    assert panes[worker]["ansi"] == "\x1b[1mhello\x1b[0m"
    assert panes[worker]["captured_at"].endswith("+00:00")
    assert panes[gone] == {
        "fleet_id": alpha.fleet.fleet_id,
        "agent_id": gone,
        "error": f"pane %gone{gone} not found",
        "captured_at": panes[gone]["captured_at"],
    }
    assert client.app.state.pane_watch.watched() == 0
    assert client.app.state.stream_slots.open == 0


def test_a_deleted_fleets_panes_say_so(make_client, fleets, alpha, scoped) -> None:
    client = make_client(stream_limits=STREAMING)
    director = alpha.director.agent_id
    fleets.delete(alpha)

    response = client.get("/api/events", params={"watch": director}, headers=scoped(1))

    [payload] = [p for e, p in events_of(response.text) if e == "pane"]
    assert payload["error"] == f"fleet {alpha.fleet.fleet_id} is deleted; its history is read-only"


def test_too_many_panes_over_every_stream_is_a_503_that_keeps_no_slot(
    container, make_client, alpha, scoped
) -> None:
    container.pane_watch.override(
        providers.Object(PaneWatch(lambda f, a: "", FakeClock(), loop=False, max_panes=0))
    )
    client = make_client()

    response = client.get(
        "/api/events", params={"watch": alpha.director.agent_id}, headers=scoped(1)
    )

    assert response.status_code == 503
    assert response.json() == {"detail": TOO_MANY_PANES}
    assert client.app.state.stream_slots.open == 0


def test_a_blank_watch_is_the_plain_stream(make_client, alpha, scoped) -> None:
    client = make_client()

    response = client.get("/api/events", params={"watch": " "}, headers=scoped(1))

    assert response.status_code == 200
    assert all(name != "pane" for name, _ in events_of(response.text))


def test_the_route_documents_the_pane_event_and_the_watch(client) -> None:
    operation = client.get("/openapi.json").json()["paths"]["/api/events"]["get"]

    assert "`event: pane`" in operation["description"]
    assert "{fleet_id, agent_id, ansi, captured_at}" in operation["description"]
    [watch] = [p for p in operation["parameters"] if p["name"] == "watch"]
    assert watch["in"] == "query"
    assert "at most 32" in watch["description"]
    content = operation["responses"]["200"]["content"]["text/event-stream"]["schema"]
    assert content["properties"]["event"]["enum"] == ["message", "state", "pane", "error"]


# --- the roster: coding agent and unread count ------------------------------------------------


def test_agents_carry_their_coding_agent_and_unread_count(
    container, client, fleets, alpha, scoped
) -> None:
    fid, director = alpha.fleet.fleet_id, alpha.director.agent_id
    admin = alpha.administrator.agent_id
    worker = fleets.member(alpha, "worker", pane="%5")
    fleets.send(alpha, director, worker, "one")
    acked = fleets.send(alpha, director, worker, "two")
    fleets.send(alpha, worker, admin, "three")
    container.messaging().ack(fid, worker, acked)

    agents = client.get("/api/agents", headers=scoped(fid)).json()["agents"]

    shown = {a["agent_id"]: (a["coding_agent"], a["unread"]) for a in agents}
    assert shown == {director: ("claude", 0), admin: (None, 1), worker: ("claude", 1)}

"""GET /api/events: the stream body (driven step by step) and the route around it."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import replace
from typing import Any

import anyio
import pytest

from cafleet.domain.delivery import Delivery, DeliveryState, PushOutcome
from cafleet.domain.errors import DatabaseBusy
from cafleet.domain.message import unicast
from cafleet.domain.monitor import MonitorRuntime
from cafleet.entrypoints.http.events import StreamLimits, fleet_events

FAST = StreamLimits(poll_seconds=0.001, max_seconds=5, keepalive_seconds=60)


def parse(chunk: str) -> tuple[str, dict[str, Any]]:
    """`event: <name>` + `data: <json>` -> (name, payload)."""
    lines = dict(line.split(": ", 1) for line in chunk.strip().splitlines())
    return lines["event"], json.loads(lines["data"])


async def never() -> bool:
    return False


def stream(
    container,
    fleet_id: int,
    limits: StreamLimits = FAST,
    disconnected: Callable[[], Awaitable[bool]] = never,
) -> AsyncIterator[str]:
    admin = container.admin()
    return fleet_events(admin, fleet_id, admin.mark(fleet_id), limits, disconnected)


def run(steps: Callable[[], Awaitable[None]]) -> None:
    async def bounded() -> None:
        with anyio.fail_after(5):
            await steps()

    anyio.run(bounded)


def test_the_stream_opens_with_a_retry_hint(container, alpha) -> None:
    async def steps() -> None:
        events = stream(container, alpha.fleet.fleet_id)
        assert await anext(events) == "retry: 2000\n\n"
        await events.aclose()

    run(steps)


def test_a_new_message_is_a_message_event(container, fleets, alpha) -> None:
    fid = alpha.fleet.fleet_id

    async def steps() -> None:
        events = stream(container, fid)
        await anext(events)
        task_id = fleets.send(alpha, alpha.director.agent_id, alpha.administrator.agent_id, "hi")
        name, payload = parse(await anext(events))
        assert (name, payload) == (
            "message",
            {"fleet_id": fid, "changed": ["messages"], "task_id": task_id},
        )
        await events.aclose()

    run(steps)


def test_an_ack_is_a_state_event_about_messages(container, fleets, alpha) -> None:
    fid, director, admin = (
        alpha.fleet.fleet_id,
        alpha.director.agent_id,
        alpha.administrator.agent_id,
    )
    task_id = fleets.send(alpha, director, admin, "please ack")

    async def steps() -> None:
        events = stream(container, fid)
        await anext(events)
        container.messaging().ack(fid, admin, task_id)
        assert parse(await anext(events)) == ("state", {"fleet_id": fid, "changed": ["messages"]})
        await events.aclose()

    run(steps)


def test_a_settled_push_is_a_state_event_about_deliveries(container, clock, alpha) -> None:
    fid, director = alpha.fleet.fleet_id, alpha.director.agent_id
    store = container.uow()

    async def steps() -> None:
        events = stream(container, fid)
        await anext(events)
        # the first transaction of a send: the message and its pending ledger row
        with store(write=True) as uow:
            now = clock.now()
            task_id = uow.messages.add(unicast(alpha.administrator.agent_id, director, "hi", now))
            pending = Delivery(task_id, director, DeliveryState.PENDING, now)
            uow.deliveries.add(pending)
            uow.commit()
        assert parse(await anext(events))[0] == "message"
        # the second one, after the push
        with store(write=True) as uow:
            uow.deliveries.save(pending.settled(PushOutcome.sent("tmux", "%0"), clock.now()))
            uow.commit()
        assert parse(await anext(events)) == (
            "state",
            {"fleet_id": fid, "changed": ["deliveries"]},
        )
        await events.aclose()

    run(steps)


def test_roster_and_monitor_changes_are_state_events(container, fleets, clock, alpha) -> None:
    fid = alpha.fleet.fleet_id

    async def steps() -> None:
        events = stream(container, fid)
        await anext(events)
        worker = fleets.member(alpha, "worker")
        assert parse(await anext(events)) == (
            "state",
            {"fleet_id": fid, "changed": ["agents", "monitor"]},
        )
        container.admin().reschedule(fid, worker, 60, None)
        assert parse(await anext(events)) == ("state", {"fleet_id": fid, "changed": ["monitor"]})
        with container.uow()(write=True) as uow:
            uow.monitor.save_runtime(
                MonitorRuntime(fid).claimed(4242, "admin-host", clock.now(), 5)
            )
            uow.commit()
        assert parse(await anext(events)) == ("state", {"fleet_id": fid, "changed": ["monitor"]})
        await events.aclose()

    run(steps)


def test_changes_in_other_fleets_are_not_heard(container, fleets, alpha) -> None:
    other = fleets.create("other")
    limits = replace(FAST, max_seconds=0.05)

    async def steps() -> None:
        events = stream(container, alpha.fleet.fleet_id, limits)
        await anext(events)
        fleets.send(other, other.director.agent_id, other.administrator.agent_id, "elsewhere")
        fleets.member(other, "stranger")
        assert [chunk async for chunk in events] == []

    run(steps)


def test_the_stream_ends_when_the_client_goes_away(container, alpha) -> None:
    looks = []

    async def gone() -> bool:
        looks.append(True)
        return True

    async def steps() -> None:
        events = stream(container, alpha.fleet.fleet_id, disconnected=gone)
        await anext(events)
        with pytest.raises(StopAsyncIteration):
            await anext(events)

    run(steps)
    assert looks == [True]


def test_an_idle_stream_sends_keepalives_and_ends_after_its_lifetime(container, alpha) -> None:
    limits = StreamLimits(poll_seconds=0.001, max_seconds=0.05, keepalive_seconds=0.01)

    async def steps() -> None:
        chunks = [chunk async for chunk in stream(container, alpha.fleet.fleet_id, limits)]
        assert chunks[0].startswith("retry:")
        assert set(chunks[1:]) == {": keepalive\n\n"}

    run(steps)


def test_a_database_error_is_reported_and_ends_the_stream(container, alpha, monkeypatch) -> None:
    admin = container.admin()
    baseline = admin.mark(alpha.fleet.fleet_id)

    def mark(_fleet_id: int):
        raise DatabaseBusy()

    monkeypatch.setattr(admin, "mark", mark)

    async def steps() -> None:
        events = fleet_events(admin, alpha.fleet.fleet_id, baseline, FAST, never)
        chunks = [chunk async for chunk in events]
        assert parse(chunks[-1]) == ("error", {"detail": DatabaseBusy().message})

    run(steps)


# --- the route ----------------------------------------------------------------------------


def test_the_route_streams_events_as_text_event_stream(make_client, fleets, alpha) -> None:
    client = make_client(stream_limits=StreamLimits(poll_seconds=0.01, max_seconds=2.0))
    director, admin = alpha.director.agent_id, alpha.administrator.agent_id

    def send_once_streaming() -> None:  # after the stream took its first look, however slow
        deadline = time.monotonic() + 1.5
        while client.app.state.stream_slots.open == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.2)
        fleets.send(alpha, director, admin, "live")

    sender = threading.Thread(target=send_once_streaming)
    sender.start()

    response = client.get("/api/events", headers={"X-Fleet-Id": str(alpha.fleet.fleet_id)})

    sender.join()
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.headers["cache-control"] == "no-cache"
    assert "event: message\n" in response.text
    assert client.app.state.stream_slots.open == 0


def test_too_many_streams_are_refused(make_client, alpha) -> None:
    client = make_client(stream_limits=StreamLimits(max_streams=0))

    response = client.get("/api/events", headers={"X-Fleet-Id": str(alpha.fleet.fleet_id)})

    assert response.status_code == 503
    assert response.json() == {"detail": "too many event streams; close another tab and retry"}


def test_a_deleted_fleets_stream_can_still_be_read(make_client, fleets, alpha) -> None:
    client = make_client()
    fleets.delete(alpha)

    response = client.get("/api/events", headers={"X-Fleet-Id": str(alpha.fleet.fleet_id)})

    assert response.status_code == 200

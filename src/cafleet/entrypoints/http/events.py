"""GET /api/events: a server-sent event stream of one fleet's changes.

The CLI writes to SQLite from other processes, so there is nothing to subscribe
to: the stream polls a cheap fingerprint of the fleet (AdminService.mark) every
poll interval and emits `event: message` for a new message and `event: state`
for anything else the dashboard shows (message states, deliveries, roster,
monitor). It is bounded: a capped number of concurrent streams, each closing
after a maximum lifetime (EventSource reconnects by itself), and it stops as
soon as the client goes away.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

import anyio
from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import StreamingResponse
from starlette.concurrency import run_in_threadpool
from starlette.types import Receive, Scope, Send

from cafleet.application.admin import AdminService
from cafleet.application.admin_views import FleetEvent
from cafleet.domain.errors import CafleetError
from cafleet.entrypoints.http.errors import error_responses
from cafleet.entrypoints.http.scoping import Admin, ReadableFleet

TOO_MANY_STREAMS = "too many event streams; close another tab and retry"


@dataclass(frozen=True)
class StreamLimits:
    poll_seconds: float = 0.5
    max_seconds: float = 600.0
    keepalive_seconds: float = 15.0
    max_streams: int = 16
    retry_ms: int = 2000  # how long a browser waits before reconnecting


class StreamSlots:
    """Counts open streams; only touched from the event loop, so no lock is needed."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.open = 0

    def reserve(self) -> bool:
        if self.open >= self.limit:
            return False
        self.open += 1
        return True

    def release(self) -> None:
        self.open -= 1


class SlotStreamingResponse(StreamingResponse):
    """Gives its slot back however the stream ends (finished, disconnected, cancelled)."""

    def __init__(self, content: AsyncIterator[str], slots: StreamSlots) -> None:
        super().__init__(
            content,
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )
        self._slots = slots

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self._slots.release()


def sse(event: str, payload: dict[str, object]) -> str:
    return f"event: {event}\ndata: {json.dumps(payload, separators=(',', ':'))}\n\n"


async def fleet_events(
    admin: AdminService,
    fleet_id: int,
    limits: StreamLimits,
    ended: Callable[[], Awaitable[bool]],
) -> AsyncIterator[str]:
    """The stream's body: changes since the previous look, until the lifetime is over or
    `ended` says the client left or the server is stopping."""
    # the baseline is taken before the first byte goes out, so a client that loads the
    # page after seeing the stream open misses no change
    last = await run_in_threadpool(admin.mark, fleet_id)
    yield f"retry: {limits.retry_ms}\n\n"
    started = quiet_since = time.monotonic()
    while time.monotonic() - started < limits.max_seconds:
        await anyio.sleep(limits.poll_seconds)
        if await ended():
            return
        try:
            current = await run_in_threadpool(admin.mark, fleet_id)
        except CafleetError as exc:  # e.g. the database is busy: say so, let the client retry
            yield sse("error", {"detail": exc.message})
            return
        for event, changed in current.changes_since(last).items():
            payload: dict[str, object] = {"fleet_id": fleet_id, "changed": list(changed)}
            if event is FleetEvent.MESSAGE:
                payload["task_id"] = current.conversation.last_task_id
            yield sse(event.value, payload)
            quiet_since = time.monotonic()
        last = current
        if time.monotonic() - quiet_since >= limits.keepalive_seconds:
            yield ": keepalive\n\n"  # a comment line keeps proxies from closing an idle stream
            quiet_since = time.monotonic()


router = APIRouter(prefix="/api")

_STREAM_DOC = (
    "Server-sent events for the fleet: `event: message` (data `{fleet_id, changed,"
    " task_id}`) when a new message exists, `event: state` (data `{fleet_id, changed}`,"
    " changed among messages, deliveries, agents, monitor) when something shown changed."
    " The stream closes after a while; clients reconnect."
)


@router.get(
    "/events",
    response_class=StreamingResponse,
    summary="Live changes of the fleet (server-sent events)",
    description=_STREAM_DOC,
    responses={
        200: {"content": {"text/event-stream": {"schema": {"type": "string"}}}},
        **error_responses(400, 401, 404, 503),
    },
)
async def events(request: Request, admin: Admin, fleet_id: ReadableFleet) -> StreamingResponse:
    limits: StreamLimits = request.app.state.stream_limits
    slots: StreamSlots = request.app.state.stream_slots
    shutting_down: Callable[[], bool] = request.app.state.shutting_down

    async def ended() -> bool:
        return shutting_down() or await request.is_disconnected()

    if not slots.reserve():
        raise HTTPException(503, TOO_MANY_STREAMS)
    return SlotStreamingResponse(fleet_events(admin, fleet_id, limits, ended), slots)

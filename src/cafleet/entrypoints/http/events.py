"""GET /api/events: a server-sent event stream of one fleet's changes.

The CLI writes to SQLite from other processes, so there is nothing to subscribe
to: the stream polls a cheap fingerprint of the fleet (AdminService.mark) every
poll interval and emits `event: message` for a new message and `event: state`
for anything else the dashboard shows (message states, deliveries, roster,
monitor). It is bounded: a capped number of concurrent streams, each closing
after a maximum lifetime (EventSource reconnects by itself), and it stops as
soon as the client goes away.

`watch=3,5` adds the live panes of those agents (`event: pane`): the server's
PaneWatch reads each watched pane once per tick for every stream that shows it,
and a stream forwards a pane's frame when its watch starts and when it changed.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Annotated

import anyio
from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import StreamingResponse
from starlette.concurrency import run_in_threadpool
from starlette.types import Receive, Scope, Send

from cafleet.application.admin.pane_watch import TICK_SECONDS, PaneFrame, PaneWatch
from cafleet.application.admin.service import AdminService
from cafleet.application.admin.views import FleetEvent, FleetMark
from cafleet.domain.bounds import ID
from cafleet.domain.errors import CafleetError
from cafleet.entrypoints.http.errors import error_responses
from cafleet.entrypoints.http.schemas import iso
from cafleet.entrypoints.http.scoping import Admin, ReadableFleet

TOO_MANY_STREAMS = "too many event streams; close another tab and retry"
MAX_WATCHED = 32  # panes one stream may watch: a grid of a large fleet
WATCH_SYNTAX = "watch must be agent ids separated by commas"
WATCH_TOO_LONG = f"watch names at most {MAX_WATCHED} agents"

Frames = Callable[[], list[PaneFrame]]  # the stream's pane frames not yet sent


@dataclass(frozen=True)
class StreamLimits:
    poll_seconds: float = 0.5
    max_seconds: float = 600.0
    keepalive_seconds: float = 15.0
    max_streams: int = 16
    retry_ms: int = 2000  # how long a browser waits before reconnecting
    frame_seconds: float = 0.1  # how often a stream that watches panes looks for new frames


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

    def __init__(
        self,
        content: AsyncIterator[str],
        slots: StreamSlots,
        on_close: Callable[[], None] = lambda: None,
    ) -> None:
        super().__init__(
            content,
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )
        self._slots = slots
        self._on_close = on_close  # e.g. leave the pane watch

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self._slots.release()
            self._on_close()


def sse(event: str, payload: dict[str, object]) -> str:
    return f"event: {event}\ndata: {json.dumps(payload, separators=(',', ':'))}\n\n"


def pane_event(frame: PaneFrame) -> str:
    payload: dict[str, object] = {"fleet_id": frame.fleet_id, "agent_id": frame.agent_id}
    if frame.error is None:
        payload["ansi"] = frame.ansi
    else:
        payload["error"] = frame.error
    payload["captured_at"] = iso(frame.captured_at)
    return sse("pane", payload)


def watched_ids(raw: str | None) -> list[int]:
    """`3,5,8` -> [3, 5, 8] (each once); blank means none. HTTP 400 with one line otherwise."""
    if raw is None or not raw.strip():
        return []
    ids: list[int] = []
    for part in raw.split(","):
        try:
            ids.append(ID.parse_int(part))
        except ValueError:
            raise HTTPException(400, WATCH_SYNTAX) from None
    ids = list(dict.fromkeys(ids))
    if len(ids) > MAX_WATCHED:
        raise HTTPException(400, WATCH_TOO_LONG)
    return ids


def _no_frames() -> list[PaneFrame]:
    return []


async def fleet_events(
    admin: AdminService,
    fleet_id: int,
    baseline: FleetMark,
    limits: StreamLimits,
    ended: Callable[[], Awaitable[bool]],
    frames: Frames | None = None,
) -> AsyncIterator[str]:
    """The stream's body: changes since `baseline` (read before the response started) and
    then since the previous look, until the lifetime is over or `ended` says the client left
    or the server is stopping. `frames`: the watched panes' new frames, looked at every
    frame_seconds (an in-memory read) between two marks."""
    last = baseline
    yield f"retry: {limits.retry_ms}\n\n"
    new_frames = frames or _no_frames
    step = min(limits.poll_seconds, limits.frame_seconds) if frames else limits.poll_seconds
    started = quiet_since = marked_at = time.monotonic()
    while time.monotonic() - started < limits.max_seconds:
        await anyio.sleep(step)
        if await ended():
            return
        for frame in new_frames():
            yield pane_event(frame)
            quiet_since = time.monotonic()
        if time.monotonic() - marked_at < limits.poll_seconds:
            continue
        marked_at = time.monotonic()
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
    " With `watch`, also `event: pane` for each watched agent (data `{fleet_id, agent_id,"
    " ansi, captured_at}`: the pane's screen with its ANSI colour escapes) once when the"
    " watch starts and then whenever the screen changed; a pane that cannot be read (gone,"
    " not placed, refused) sends `{fleet_id, agent_id, error, captured_at}` instead, error"
    f" being one line. Each watched pane is read once per {TICK_SECONDS} s tick however many"
    " streams watch it. To watch other agents, open a new stream. The stream closes after a"
    " while; clients reconnect."
)

# before OpenAPI 3.2 (FastAPI writes 3.1), an event stream's schema describes each event
_EVENT_SCHEMA = {
    "type": "object",
    "required": ["event", "data"],
    "properties": {
        "event": {"type": "string", "enum": ["message", "state", "pane", "error"]},
        "data": {"type": "string", "description": "A JSON object, as the description says"},
    },
}


@router.get(
    "/events",
    response_class=StreamingResponse,
    summary="Live changes of the fleet (server-sent events)",
    description=_STREAM_DOC,
    responses={
        200: {"content": {"text/event-stream": {"schema": _EVENT_SCHEMA}}},
        **error_responses(400, 401, 404, 503),
    },
)
async def events(
    request: Request,
    admin: Admin,
    fleet_id: ReadableFleet,
    watch: Annotated[
        str | None,
        Query(
            max_length=1000,
            description=f"Agents of the fleet whose live panes to send, as ids separated by"
            f" commas (at most {MAX_WATCHED}), e.g. 3,5",
        ),
    ] = None,
) -> StreamingResponse:
    limits: StreamLimits = request.app.state.stream_limits
    slots: StreamSlots = request.app.state.stream_slots
    panes: PaneWatch = request.app.state.pane_watch
    shutting_down: Callable[[], bool] = request.app.state.shutting_down

    async def ended() -> bool:
        return shutting_down() or await request.is_disconnected()

    agent_ids = watched_ids(watch)
    if agent_ids:
        await run_in_threadpool(admin.watchable, fleet_id, agent_ids)
    if not slots.reserve():
        raise HTTPException(503, TOO_MANY_STREAMS)
    try:
        # read before the response starts (a streaming response sends its headers before its
        # body runs), so a client that fetches once it sees the stream open misses no change
        baseline = await run_in_threadpool(admin.mark, fleet_id)
        watcher = panes.join(fleet_id, agent_ids) if agent_ids else None
    except BaseException:  # a database error, or the request cancelled while reading
        slots.release()
        raise
    if watcher is None:
        body = fleet_events(admin, fleet_id, baseline, limits, ended)
        return SlotStreamingResponse(body, slots)
    body = fleet_events(admin, fleet_id, baseline, limits, ended, lambda: panes.fresh(watcher))
    return SlotStreamingResponse(body, slots, on_close=lambda: panes.leave(watcher))

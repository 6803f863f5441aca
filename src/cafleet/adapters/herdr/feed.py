"""HerdrStateFeed: the agent states herdr pushes on `events.subscribe`, kept by a daemon thread.

What herdr does (`src/api/schema/events.rs`, `src/api/subscriptions.rs`, `src/api/server.rs`):

- There is no status subscription for every pane: each `{"type":
  "pane.agent_status_changed", "pane_id": ...}` entry follows one pane, and one connection
  may carry many entries. Every such entry probes its pane first; a pane that is gone fails
  the whole request (`{"id":"<rid>:sub:<i>:probe","error":{"code":"pane_not_found",...}}`)
  and the connection closes.
- Otherwise herdr answers `{"id":"<rid>","result":{"type":"subscription_started"}}`, keeps
  the connection open and writes one line per event (it polls every 100 ms):
  `{"event":"pane.agent_status_changed","data":{"pane_id","workspace_id","agent_status",
  "agent"?,...}}` when the pane's status (or its title or labels) changes.
- Lifecycle entries take no pane and start at the beginning of herdr's event ring, so they
  first replay older events: `{"event":"pane_closed","data":{"type":"pane_closed",
  "pane_id","workspace_id"}}`, likewise `pane_exited` (a pane whose process ended).

The feed keeps one such connection per server: an entry per watched pane that exists, plus
`pane.closed` and `pane.exited`. Each subscription is preceded by one `pane.list`, which
seeds the states and the panes; a closing event for a known pane makes it list again (at
most every RELIST_SECONDS), so the panes a tick needs stay current without a listing per
tick. A watched pane the feed does not follow yet (a new member) ends the connection and a
new one is opened that includes it. A change from working or blocked to idle is `done`
(FinishedTurns: herdr says `idle` when the pane's tab is active); a pane moved to another
workspace keeps the id it was watched by (MovedPanes). A dropped connection is
retried with a doubling delay, a refused request after REFUSED_SECONDS. While the feed is
not subscribed, or does not follow every watched pane, `reading()` answers None and the
monitor polls `pane.list` as before.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Collection, Mapping
from dataclasses import replace
from datetime import UTC, datetime

from cafleet.adapters.herdr.client import (
    HerdrClient,
    HerdrRequestFailed,
    HerdrStream,
    socket_path,
)
from cafleet.adapters.herdr.driver import pane_listing
from cafleet.adapters.herdr.moves import MovedPanes
from cafleet.adapters.herdr.turns import FinishedTurns
from cafleet.application.ports.panes import AgentStateFeed, AgentStateFeeds, FeedReading
from cafleet.domain.errors import CafleetError, Unavailable
from cafleet.domain.panes import PaneInfo
from cafleet.domain.placement import Multiplexer

STATUS_EVENT = "pane.agent_status_changed"
LIFECYCLE_SUBSCRIPTIONS = ("pane.closed", "pane.exited")
GONE_EVENTS = frozenset({"pane_closed", "pane_exited"})
READ_SECONDS = 0.1  # how often the reader looks up from the connection
RELIST_SECONDS = 0.5  # at most one pane.list this often after closing events
BACKOFF_SECONDS = (0.2, 30.0)  # first and longest wait before subscribing again
REFUSED_SECONDS = 60.0  # the wait after herdr refused the request (an older server)
CLOSE_SECONDS = 6.0  # a pane.list in flight may take the client's 5 s timeout


def _utc_now() -> datetime:
    return datetime.now(UTC)


class HerdrStateFeed(AgentStateFeed):
    def __init__(
        self,
        socket: str,
        *,
        client: HerdrClient | None = None,
        now: Callable[[], datetime] = _utc_now,
        backoff: tuple[float, float] = BACKOFF_SECONDS,
        read_seconds: float = READ_SECONDS,
        relist_seconds: float = RELIST_SECONDS,
        refused_seconds: float = REFUSED_SECONDS,
    ) -> None:
        self.socket = socket
        self._client = client or HerdrClient(socket)
        self._now = now
        self._first_delay, self._longest_delay = backoff
        self._read_seconds = read_seconds
        self._relist_seconds = relist_seconds
        self._refused_seconds = refused_seconds
        self._lock = threading.Lock()
        self._watched: frozenset[str] = frozenset()
        self._listed_for: frozenset[str] = frozenset()  # watched panes the last listing saw
        self._followed: frozenset[str] = frozenset()  # panes of the current subscription
        self._subscribed: dict[str, str] = {}  # each followed pane -> the id subscribed to
        self._panes: dict[str, PaneInfo] = {}
        self._states: dict[str, str] = {}
        self._since: dict[str, datetime] = {}
        self._turns = FinishedTurns()
        self._moves = MovedPanes()
        self._live = False
        self._stream: HerdrStream | None = None
        self._changed = threading.Event()  # the watched panes changed
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.failure: str | None = None  # why the last subscription ended or was refused
        self.subscriptions = 0  # subscriptions herdr acknowledged

    # --- the port ---------------------------------------------------------------------

    def reading(self, watched: Collection[str]) -> FeedReading | None:
        wanted = frozenset(watched)
        with self._lock:
            if wanted != self._watched:
                self._watched = wanted
                self._changed.set()
            if self._thread is None and not self._stop.is_set():
                self._thread = threading.Thread(
                    target=self._run, name=f"herdr-feed {self.socket}", daemon=True
                )
                self._thread.start()
            if not self._live or not self._covers(wanted):
                return None
            return FeedReading(
                panes=dict(self._panes),
                states={p: s for p, s in self._states.items() if p in wanted},
                since={p: t for p, t in self._since.items() if p in wanted},
            )

    def close(self) -> None:
        self._stop.set()
        self._changed.set()
        with self._lock:
            stream, thread = self._stream, self._thread
        if stream is not None:
            stream.close()
        if thread is not None:
            thread.join(CLOSE_SECONDS)

    @property
    def running(self) -> bool:
        """Whether the reader thread is alive."""
        thread = self._thread
        return thread is not None and thread.is_alive()

    # --- the reader thread --------------------------------------------------------------

    def _covers(self, wanted: frozenset[str]) -> bool:
        """Every watched pane was looked for, and is followed unless it is gone (lock held)."""
        return all(
            p in self._listed_for and (p in self._followed or p not in self._panes) for p in wanted
        )

    def _run(self) -> None:
        delay = self._first_delay
        while not self._stop.is_set():
            try:
                self._session()
                delay = self._first_delay
                continue  # the watched panes grew: subscribe again at once
            except HerdrRequestFailed as exc:
                self.failure = exc.message
                # refused, unless a watched pane closed after the listing (then list again)
                if exc.method == "events.subscribe" and exc.code != "pane_not_found":
                    self._stop.wait(self._refused_seconds)
                    continue
            except CafleetError as exc:
                self.failure = exc.message
            except (OSError, ValueError) as exc:
                self.failure = f"herdr events.subscribe failed: {exc}"
            self._stop.wait(delay)
            delay = min(delay * 2, self._longest_delay)

    def _session(self) -> None:
        """List, subscribe, then read events until the connection ends (raises) or must be
        opened again for panes it does not follow (returns)."""
        with self._lock:
            watched = self._watched
            self._changed.clear()
        panes, states = self._list()
        follow = sorted(watched & panes.keys())
        # herdr follows a pane by the id it has when subscribed; a moved one by its new id
        subscribed = {pane_id: self._moves.current_id(pane_id) for pane_id in follow}
        stream = self._client.subscribe(
            [
                *({"type": kind} for kind in LIFECYCLE_SUBSCRIPTIONS),
                *({"type": STATUS_EVENT, "pane_id": pane_id} for pane_id in subscribed.values()),
            ]
        )
        try:
            with self._lock:
                if self._stop.is_set():
                    return
                self._stream = stream
                self._seen(panes, states, watched, seed=True)
                self._followed = frozenset(follow)
                self._subscribed = subscribed
                self._live = True
                self.subscriptions += 1
            self._follow(stream)
        finally:
            with self._lock:
                self._live = False
                self._stream = None
            stream.close()

    def _follow(self, stream: HerdrStream) -> None:
        stale = False  # a known pane closed: list again
        listed = time.monotonic()
        while not self._stop.is_set():
            if self._changed.is_set():
                self._changed.clear()
                with self._lock:
                    if not self._watched <= self._listed_for:
                        return
            if stale and time.monotonic() - listed >= self._relist_seconds:
                panes, states = self._list()
                listed, stale = time.monotonic(), False
                with self._lock:
                    self._seen(panes, states, self._watched, seed=False)
                    if (self._watched & panes.keys()) - self._followed or self._moved():
                        return
            line = stream.next_line(self._read_seconds)
            if line is None:
                if self._stop.is_set():
                    return
                raise Unavailable(f"the herdr server at {self.socket} ended the event stream")
            if line:
                stale = self._apply(line) or stale

    def _moved(self) -> bool:
        """A followed pane moved since the subscription (lock held)."""
        return any(self._moves.current_id(p) != q for p, q in self._subscribed.items())

    def _list(self) -> tuple[dict[str, PaneInfo], dict[str, str]]:
        result = self._client.call("pane.list", {})
        panes, states = pane_listing(result)
        self._moves.aliased(result, panes, states)
        return panes, states

    def _seen(
        self,
        panes: dict[str, PaneInfo],
        states: Mapping[str, str],
        watched: frozenset[str],
        *,
        seed: bool,
    ) -> None:
        """Take a listing (lock held). A seed's states are current; a later listing only
        adds the panes without one, since events already carry the newer states."""
        now = self._now()
        # herdr pushes no label changes: the listing's labels may be stale, so none is told
        self._panes = {pane_id: replace(info, title=None) for pane_id, info in panes.items()}
        self._listed_for = watched
        taken = {p: s for p, s in states.items() if seed or p not in self._states}
        for pane_id, status in self._turns.read(taken).items():
            if self._states.get(pane_id) != status:
                self._states[pane_id] = status
                self._since[pane_id] = now

    def _apply(self, line: bytes) -> bool:
        """Take one event line; True when it closed a known pane."""
        try:
            message = json.loads(line)
        except ValueError:
            return False
        data = message.get("data") if isinstance(message, dict) else None
        pane_id = data.get("pane_id") if isinstance(data, dict) else None
        if not isinstance(data, dict) or not isinstance(pane_id, str):
            return False
        event = message.get("event")
        with self._lock:
            if event in GONE_EVENTS:
                return pane_id in self._panes
            status = data.get("agent_status")
            if event != STATUS_EVENT or not isinstance(status, str):
                return False
            for known in (pane_id, *self._moves.former_ids(pane_id)):
                self._take(known, status)
            agent = data.get("agent")
            info = self._panes.get(pane_id)
            if info is not None and isinstance(agent, str) and agent and agent != info.agent:
                self._panes[pane_id] = replace(info, agent=agent)
        return False

    def _take(self, pane_id: str, status: str) -> None:
        """A pushed state of one pane, by one of its ids (lock held)."""
        status = self._turns.read({pane_id: status})[pane_id]
        if self._states.get(pane_id) != status:
            self._states[pane_id] = status
            self._since[pane_id] = self._now()


class HerdrStateFeeds(AgentStateFeeds):
    """One feed per herdr server socket, opened on first use; none for tmux."""

    def __init__(
        self,
        env: Mapping[str, str] | None = None,
        *,
        now: Callable[[], datetime] = _utc_now,
        make: Callable[[str], HerdrStateFeed] | None = None,
    ) -> None:
        self._env = os.environ if env is None else env
        self._make = make or (lambda path: HerdrStateFeed(path, now=now))
        self._feeds: dict[str, HerdrStateFeed] = {}
        self._lock = threading.Lock()

    def __call__(self, backend: Multiplexer, socket: str | None) -> HerdrStateFeed | None:
        if backend is not Multiplexer.HERDR:
            return None
        path = socket or socket_path(self._env)
        with self._lock:
            feed = self._feeds.get(path)
            if feed is None:
                feed = self._feeds[path] = self._make(path)
            return feed

    def close(self) -> None:
        with self._lock:
            feeds, self._feeds = list(self._feeds.values()), {}
        for feed in feeds:
            feed.close()


__all__ = ["HerdrStateFeed", "HerdrStateFeeds"]

"""Relays woken by PostgreSQL's LISTEN/NOTIFY instead of looking for work on a timer.

A unit of work that leaves work for a host's relay (a delivery, a pane request) notifies
`cafleet_relay` with the host's name; PostgreSQL delivers it when the transaction commits, so
a relay never wakes for work it cannot read yet. The relay listens on a connection of its
own, outside any transaction. Notifications are a shortcut, not the record: a relay still
looks for work every few seconds, and reads everything that waits when it starts.
"""

from __future__ import annotations

import contextlib
import time
from typing import Any

from sqlalchemy import Connection, create_engine, text
from sqlalchemy.pool import NullPool

from cafleet.adapters.store.postgres.engine import CONNECT_TIMEOUT_SECONDS, driver_url
from cafleet.application.ports.store import WorkSignals

CHANNEL = "cafleet_relay"
RETRY_SECONDS = 5.0  # after the listening connection failed: polling meanwhile


def notify_relay(conn: Connection, host: str) -> None:
    """Within the writer's transaction: delivered to the listeners when it commits."""
    conn.execute(text("SELECT pg_notify(:channel, :host)"), {"channel": CHANNEL, "host": host})


class NotifiedWork(WorkSignals):
    """Waits for a notification naming this host; with no connection (the server is down),
    waits out the time and tries to listen again later."""

    def __init__(self, url: str, host: str) -> None:
        self._engine = create_engine(
            driver_url(url),
            poolclass=NullPool,
            connect_args={"connect_timeout": CONNECT_TIMEOUT_SECONDS},
        )
        self._host = host
        self._listener: Any = None  # a psycopg connection in autocommit, listening
        self._raw: Any = None  # its pool wrapper, closed with it
        self._retry_at = 0.0

    def wait(self, seconds: float) -> bool:
        listener = self._listening()
        if listener is None:
            time.sleep(seconds)
            return False
        deadline = time.monotonic() + seconds
        try:
            while (left := deadline - time.monotonic()) > 0:
                for note in listener.notifies(timeout=left, stop_after=1):
                    if note.payload == self._host:
                        return True
        except Exception:  # the connection broke: poll until it can be made again
            self._drop()
            time.sleep(max(0.0, deadline - time.monotonic()))
        return False

    def close(self) -> None:
        self._drop()
        self._engine.dispose()

    def _listening(self) -> Any:
        if self._listener is not None or time.monotonic() < self._retry_at:
            return self._listener
        try:
            raw = self._engine.raw_connection()
            listener = raw.driver_connection
            assert listener is not None
            listener.autocommit = True
            listener.execute(f"LISTEN {CHANNEL}")
        except Exception:
            self._retry_at = time.monotonic() + RETRY_SECONDS
            return None
        self._raw, self._listener = raw, listener
        return listener

    def _drop(self) -> None:
        raw, self._raw, self._listener = self._raw, None, None
        self._retry_at = time.monotonic() + RETRY_SECONDS
        if raw is not None:
            with contextlib.suppress(Exception):
                raw.close()

"""HerdrClient: herdr's socket API with the standard library only.

The wire format is newline-delimited JSON with one request per connection: connect, send one
line, read one line, close. Requests are at most 1 MiB; every call has a 5 s timeout. The
first call to a server in this process is preceded by a `ping` (on its own connection); a
server older than protocol 19 (herdr 0.8.0, whose socket API matches the tested protocol 20)
gets one warning on stderr, newer ones are accepted. Unknown fields in results are ignored.
The one exception to one line per connection is `events.subscribe` (`subscribe()`): herdr answers
`{"id","result":{"type":"subscription_started"}}` and then keeps the connection open,
writing one JSON line per event.

Errors: `pane_not_found` raises PaneGone (naming the pane of the request); any other error
envelope raises HerdrRequestFailed (an Unavailable with the code kept for callers); a
socket that cannot be reached raises Unavailable
(`cannot reach the herdr server at <socket>: <reason>`).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import re
import socket
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from cafleet.domain.errors import Unavailable
from cafleet.domain.panes import PaneGone

TESTED_PROTOCOL = 20
OLDEST_QUIET_PROTOCOL = 19  # herdr 0.8.0: its socket API is 0.8.2's (20 changed the client wire)
DEFAULT_SESSION = "default"
_SESSION_NAME = re.compile(r"[A-Za-z0-9._-]{1,64}")  # herdr's validate_name
TIMEOUT_SECONDS = 5.0
MAX_REQUEST_BYTES = 1024 * 1024
_READ_CHUNK = 64 * 1024
_PANE_PARAMS = ("pane_id", "target_pane_id", "caller_pane_id")

_ids = itertools.count(1)
_pinged: set[str] = set()  # sockets already pinged by this process
_warned: set[str] = set()  # sockets already warned about
_guard = threading.Lock()


def socket_path(env: Mapping[str, str]) -> str:
    """The herdr server socket named by the environment, by herdr's rules
    (`src/session.rs`, `src/config/io.rs`): HERDR_SOCKET_PATH; else HERDR_SESSION ->
    <config>/sessions/<name>/herdr.sock, where `default` and names herdr refuses mean the
    default socket <config>/herdr.sock. <config> is $XDG_CONFIG_HOME/herdr when that is set,
    else $HOME/.config/herdr, else $TMPDIR/herdr."""
    explicit = env.get("HERDR_SOCKET_PATH")
    if explicit:
        return explicit
    if "XDG_CONFIG_HOME" in env:
        config = Path(env["XDG_CONFIG_HOME"]) / "herdr"
    elif "HOME" in env:
        config = Path(env["HOME"]) / ".config" / "herdr"
    else:
        config = Path(env.get("TMPDIR") or "/tmp") / "herdr"
    session = env.get("HERDR_SESSION", DEFAULT_SESSION)
    if (
        session != DEFAULT_SESSION
        and _SESSION_NAME.fullmatch(session)
        and session not in (".", "..")
    ):
        return str(config / "sessions" / session / "herdr.sock")
    return str(config / "herdr.sock")


class HerdrRequestFailed(Unavailable):
    """The server answered with an error envelope other than pane_not_found."""

    def __init__(self, method: str, code: str, message: str) -> None:
        super().__init__(f"herdr {method} failed: {code}: {message}")
        self.method = method
        self.code = code


class HerdrClient:
    def __init__(
        self,
        socket: str,
        *,
        timeout: float = TIMEOUT_SECONDS,
        warn: Callable[[str], None] | None = None,
    ) -> None:
        self.socket = socket
        self._timeout = timeout
        self._warn = warn or _stderr

    def call(self, method: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The `result` object of one request (its `type` included)."""
        self._ensure_pinged()
        return self.request(method, params or {})

    def request(self, method: str, params: Mapping[str, Any]) -> dict[str, Any]:
        """One request on a fresh connection, without the once-per-process ping."""
        message = _json_object(method, self._exchange(method, _request_bytes(method, params)))
        error = message.get("error")
        if error is not None:
            code, text = _error_fields(error)
            if code == "pane_not_found":
                raise PaneGone(_target_pane(params))
            raise HerdrRequestFailed(method, code, text)
        result = message.get("result")
        if not isinstance(result, dict):
            raise Unavailable(f"herdr {method} failed: the reply has no result")
        return result

    def subscribe(self, subscriptions: Sequence[Mapping[str, Any]]) -> HerdrStream:
        """Open an `events.subscribe` connection and read its acknowledgement; the events
        follow on the returned stream. An error envelope raises HerdrRequestFailed (with
        `pane_not_found` when a pane-scoped subscription names a pane that is gone)."""
        self._ensure_pinged()
        method = "events.subscribe"
        data = _request_bytes(method, {"subscriptions": [dict(s) for s in subscriptions]})
        conn = self._connect()
        stream = HerdrStream(conn)
        try:
            try:
                conn.sendall(data)
                ack = stream.next_line(self._timeout)
            except TimeoutError:
                raise Unavailable(f"herdr {method} timed out after {self._timeout:g}s") from None
            except OSError as exc:
                raise Unavailable(f"herdr {method} failed: {_reason(exc)}") from None
            if ack is None:
                raise Unavailable(
                    f"herdr {method} failed: the server closed the connection without a reply"
                )
            message = _json_object(method, ack)
            error = message.get("error")
            if error is not None:
                raise HerdrRequestFailed(method, *_error_fields(error))
            result = message.get("result")
            if not isinstance(result, dict) or result.get("type") != "subscription_started":
                raise Unavailable(f"herdr {method} failed: the reply is not an acknowledgement")
        except BaseException:
            stream.close()
            raise
        return stream

    def _connect(self) -> socket.socket:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.settimeout(self._timeout)
        try:
            conn.connect(self.socket)
        except OSError as exc:
            conn.close()
            raise Unavailable(
                f"cannot reach the herdr server at {self.socket}: {_reason(exc)}"
            ) from None
        return conn

    def _exchange(self, method: str, data: bytes) -> bytes:
        conn = self._connect()
        try:
            try:
                conn.sendall(data)
                return _read_line(conn, method)
            except TimeoutError:
                raise Unavailable(f"herdr {method} timed out after {self._timeout:g}s") from None
            except OSError as exc:
                raise Unavailable(f"herdr {method} failed: {_reason(exc)}") from None
        finally:
            conn.close()

    def _ensure_pinged(self) -> None:
        with _guard:
            if self.socket in _pinged:
                return
        pong = self.request("ping", {})
        protocol = pong.get("protocol")
        with _guard:
            _pinged.add(self.socket)
            old = isinstance(protocol, int) and protocol < OLDEST_QUIET_PROTOCOL
            first_warning = old and self.socket not in _warned
            if first_warning:
                _warned.add(self.socket)
        if first_warning:
            self._warn(
                f"warning: the herdr server at {self.socket} speaks protocol {protocol};"
                f" cafleet was tested with protocol {TESTED_PROTOCOL} and may not work"
                " with an older server"
            )


class HerdrStream:
    """The connection of one `events.subscribe`: one JSON object per line, until either side
    closes it. `close()` may be called from another thread to end a blocked read."""

    def __init__(self, conn: socket.socket) -> None:
        self._conn = conn
        self._buffer = b""
        self._closed = threading.Event()

    def next_line(self, timeout: float) -> bytes | None:
        """The next line (without its newline); b"" when none arrived within `timeout`
        seconds; None when the connection ended. Raises OSError on a broken connection."""
        while b"\n" not in self._buffer:
            if self._closed.is_set():
                return None
            self._conn.settimeout(timeout)
            try:
                chunk = self._conn.recv(_READ_CHUNK)
            except TimeoutError:
                return b""
            if not chunk:
                return None
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return line

    def close(self) -> None:
        self._closed.set()
        with contextlib.suppress(OSError):
            self._conn.shutdown(socket.SHUT_RDWR)
        self._conn.close()


def forget_pings() -> None:
    """Make the next call to every server ping again (for tests)."""
    with _guard:
        _pinged.clear()
        _warned.clear()


def dicts(value: object) -> Iterator[dict[str, Any]]:
    """The JSON objects of a reply's list; nothing when it is not a list."""
    if isinstance(value, list):
        yield from (item for item in value if isinstance(item, dict))


def _read_line(conn: socket.socket, method: str) -> bytes:
    parts: list[bytes] = []
    while True:
        chunk = conn.recv(_READ_CHUNK)
        if not chunk:
            break
        newline = chunk.find(b"\n")
        if newline >= 0:
            parts.append(chunk[:newline])
            return b"".join(parts)
        parts.append(chunk)
    if parts:
        return b"".join(parts)  # a final line without its newline
    raise Unavailable(f"herdr {method} failed: the server closed the connection without a reply")


def _request_bytes(method: str, params: Mapping[str, Any]) -> bytes:
    line = json.dumps(
        {"id": str(next(_ids)), "method": method, "params": dict(params)},
        ensure_ascii=False,
        separators=(",", ":"),
    )
    data = (line + "\n").encode()
    if len(data) > MAX_REQUEST_BYTES:
        raise Unavailable(
            f"herdr {method} failed: the request is {len(data)} bytes;"
            f" the server accepts at most {MAX_REQUEST_BYTES}"
        )
    return data


def _json_object(method: str, line: bytes) -> dict[str, Any]:
    try:
        message = json.loads(line)
    except ValueError:
        raise Unavailable(f"herdr {method} failed: the reply is not JSON") from None
    if not isinstance(message, dict):
        raise Unavailable(f"herdr {method} failed: the reply is not a JSON object")
    return message


def _error_fields(error: object) -> tuple[str, str]:
    if isinstance(error, dict):
        return str(error.get("code") or "unknown_error"), str(error.get("message") or "")
    return "unknown_error", str(error)


def _target_pane(params: Mapping[str, Any]) -> str:
    for key in _PANE_PARAMS:
        value = params.get(key)
        if isinstance(value, str) and value:
            return value
    return "?"


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc) or type(exc).__name__


def _stderr(text: str) -> None:
    with contextlib.suppress(OSError, ValueError):  # a closed stderr must not break anything
        print(text, file=sys.stderr, flush=True)


__all__ = [
    "MAX_REQUEST_BYTES",
    "TESTED_PROTOCOL",
    "HerdrClient",
    "HerdrRequestFailed",
    "HerdrStream",
    "dicts",
    "forget_pings",
    "socket_path",
]

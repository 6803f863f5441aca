"""Request guards that run before any route (plain ASGI, so event streams pass untouched).

In order:
1. Host: a server bound to loopback answers only loopback host names, so a web page
   whose name was rebound to 127.0.0.1 cannot reach it (DNS rebinding).
2. Token: every /api/ request carries `Authorization: Bearer <token>` (`cafleet server`
   always has one, loopback included: other local users reach loopback too).
3. Cross-site: a state-changing /api/ request must come from this server's own origin
   (Origin host and port equal Host; a browser's Sec-Fetch-Site must not say another site)
   and must be JSON, which a plain HTML form cannot send.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from cafleet.entrypoints.http.binding import bearer_matches, host_name, is_loopback
from cafleet.entrypoints.http.errors import error_json

STATE_CHANGING = frozenset({"POST", "PATCH", "PUT", "DELETE"})
FOREIGN_FETCH_SITES = frozenset({"cross-site", "same-site"})  # same-site: another port too
DEFAULT_PORTS = {"http": 80, "https": 443}

MISSING_TOKEN = "missing or invalid token"
CROSS_ORIGIN = "cross-origin request refused"
NOT_JSON = "Content-Type must be application/json"
FOREIGN_HOST = "unexpected Host header"


@dataclass(frozen=True)
class GuardPolicy:
    token: str | None = None  # None: no token check (in-process tests only)
    loopback_hosts_only: bool = False


class RequestGuards:
    def __init__(self, app: ASGIApp, policy: GuardPolicy) -> None:
        self.app = app
        self.policy = policy

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            refusal = self._refusal(scope)
            if refusal is not None:
                status, detail = refusal
                await error_json(status, detail)(scope, receive, send)
                return
        await self.app(scope, receive, send)

    def _refusal(self, scope: Scope) -> tuple[int, str] | None:
        headers = Headers(scope=scope)
        host = headers.get("host", "")
        if self.policy.loopback_hosts_only and not is_loopback(host_name(host)):
            return 400, FOREIGN_HOST
        path: str = scope["path"]
        if not (path == "/api" or path.startswith("/api/")):
            return None
        token = self.policy.token
        if token is not None and not bearer_matches(headers.get("authorization"), token):
            return 401, MISSING_TOKEN
        if scope["method"] not in STATE_CHANGING:
            return None
        if headers.get("sec-fetch-site", "").lower() in FOREIGN_FETCH_SITES:
            return 403, CROSS_ORIGIN
        origin = headers.get("origin")
        if origin is not None and not same_origin(origin, host, scope.get("scheme", "http")):
            return 403, CROSS_ORIGIN
        media_type = headers.get("content-type", "").partition(";")[0].strip().lower()
        if media_type != "application/json":
            return 415, NOT_JSON
        return None


def same_origin(origin: str, host_header: str, scheme: str) -> bool:
    """Origin's host and port equal the request's Host (default ports filled in)."""
    try:
        sent = urlsplit(origin)
        sent_port = sent.port or DEFAULT_PORTS.get(sent.scheme)
        own = urlsplit(f"{scheme}://{host_header}")
        own_port = own.port or DEFAULT_PORTS.get(scheme)
    except ValueError:  # a malformed port in either header
        return False
    if not sent.hostname or sent.scheme not in DEFAULT_PORTS:
        return False  # includes the opaque origin "null"
    return (sent.hostname, sent_port) == (own.hostname, own_port)

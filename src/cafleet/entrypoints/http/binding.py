"""Where the server listens and what that demands. Standard library only: the CLI
checks these before it imports the web stack."""

from __future__ import annotations

import errno
import hmac
import ipaddress
import socket

from cafleet.domain.errors import Unavailable

MIN_TOKEN_LENGTH = 16
LOOPBACK_NAMES = ("localhost",)


def is_loopback(host: str) -> bool:
    """127.0.0.0/8, ::1 and localhost; every other name or address reaches beyond."""
    name = host.strip().lower().removeprefix("[").removesuffix("]")
    if name in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def usable_token(token: str | None) -> bool:
    return token is not None and len(token) >= MIN_TOKEN_LENGTH


def bearer_matches(authorization: str | None, token: str) -> bool:
    """`Authorization: Bearer <token>`, compared in constant time."""
    scheme, _, presented = (authorization or "").partition(" ")
    if scheme.lower() != "bearer":
        return False
    return hmac.compare_digest(presented.strip().encode(), token.encode())


def host_name(host_header: str) -> str:
    """The name part of a Host header (`[::1]:8000` -> `::1`, `Example:80` -> `example`)."""
    value = host_header.strip().lower()
    if value.startswith("["):
        return value[1:].partition("]")[0]
    return value.rpartition(":")[0] if value.count(":") == 1 else value


def listening_socket(host: str, port: int) -> socket.socket:
    """The server's socket, bound before anything is printed: a busy port is one line,
    not a banner followed by uvicorn's log (uvicorn then serves on this socket)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        return socket.create_server((host.strip("[]"), port), family=family)
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise Unavailable(f"port {port} is in use on {host}; pass --port") from None
        reason = exc.strerror or str(exc)
        raise Unavailable(f"cannot listen on {host} port {port}: {reason}") from None

"""Errors as HTTP answers: every one is JSON `{"detail": ...}`.

A CafleetError's kind picks the status; its message is already the user-facing
text. Anything unexpected becomes one JSON 500 line (the server logs the traceback).
"""

from __future__ import annotations

import json
import math
from typing import Any

from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from cafleet.domain.errors import CafleetError, ErrorKind
from cafleet.entrypoints.http.schemas import ErrorOut

STATUS_OF_KIND = {
    ErrorKind.NOT_FOUND: 404,
    ErrorKind.INVALID: 400,
    ErrorKind.USAGE: 400,
    ErrorKind.CONFLICT: 409,
    ErrorKind.UNAVAILABLE: 503,
}

# OpenAPI documentation of the error answers a route can give
_DESCRIPTIONS = {
    400: "Bad request (X-Fleet-Id missing or not an integer, a refused send, a foreign Host)",
    401: "Missing or invalid bearer token (servers bound beyond loopback)",
    403: "Cross-origin request refused",
    404: "Fleet or agent not found",
    409: "Conflict (a write to a deleted fleet: its history is read-only)",
    415: "Content-Type must be application/json",
    503: "Database busy or unavailable, or too many event streams or watched panes",
}


def error_responses(*statuses: int) -> dict[int | str, dict[str, object]]:
    return {s: {"model": ErrorOut, "description": _DESCRIPTIONS[s]} for s in statuses}


def error_json(status: int, detail: str) -> JSONResponse:
    return JSONResponse({"detail": detail}, status_code=status)


async def _cafleet_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, CafleetError)
    return error_json(STATUS_OF_KIND[exc.kind], exc.message)


class AsciiJSONResponse(JSONResponse):
    """JSON with non-ASCII escaped: a validation error echoes the input, and input decoded
    from JSON escapes or a URL can hold lone surrogates, which UTF-8 cannot encode."""

    def render(self, content: Any) -> bytes:
        return json.dumps(
            content, ensure_ascii=True, allow_nan=False, separators=(",", ":")
        ).encode()


def _finite(value: Any) -> Any:
    """JSON has no NaN or Infinity (Python's decoder takes them, and 1e400 is infinite): an
    echoed non-finite input is shown as its JSON spelling, a string."""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_finite(item) for item in value]
    return value


async def _invalid_request(_request: Request, exc: Exception) -> JSONResponse:
    """FastAPI's own 422 answer (the framework's error list), rendered safely."""
    assert isinstance(exc, RequestValidationError)
    errors = _finite(jsonable_encoder(exc.errors()))
    return AsciiJSONResponse({"detail": errors}, status_code=422)


async def _unexpected(_request: Request, exc: Exception) -> JSONResponse:
    return error_json(500, f"internal error: {type(exc).__name__}")


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(CafleetError, _cafleet_error)
    app.add_exception_handler(RequestValidationError, _invalid_request)
    app.add_exception_handler(Exception, _unexpected)

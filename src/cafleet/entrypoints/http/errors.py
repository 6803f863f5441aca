"""Errors as HTTP answers: every one is JSON `{"detail": ...}`.

A CafleetError's kind picks the status; its message is already the user-facing
text. Anything unexpected becomes one JSON 500 line (the server logs the traceback).
"""

from __future__ import annotations

import json
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
    409: "Conflict",
    415: "Content-Type must be application/json",
    503: "Database busy or unavailable",
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


async def _invalid_request(_request: Request, exc: Exception) -> JSONResponse:
    """FastAPI's own 422 answer (the framework's error list), rendered safely."""
    assert isinstance(exc, RequestValidationError)
    return AsciiJSONResponse({"detail": jsonable_encoder(exc.errors())}, status_code=422)


async def _unexpected(_request: Request, exc: Exception) -> JSONResponse:
    return error_json(500, f"internal error: {type(exc).__name__}")


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(CafleetError, _cafleet_error)
    app.add_exception_handler(RequestValidationError, _invalid_request)
    app.add_exception_handler(Exception, _unexpected)

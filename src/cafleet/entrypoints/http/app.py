"""create_app(container): the admin WebUI as a FastAPI application.

The app takes its services from the container once, at creation: the services
are stateless, and resolving every singleton up front keeps the request threads
from racing to build adapters. The routes only talk to AdminService.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from fastapi import FastAPI

from cafleet import __version__
from cafleet.composition.container import Container
from cafleet.entrypoints.http import api, events
from cafleet.entrypoints.http.docs import docs_router
from cafleet.entrypoints.http.errors import install_error_handlers
from cafleet.entrypoints.http.events import StreamLimits, StreamSlots
from cafleet.entrypoints.http.guards import GuardPolicy, RequestGuards
from cafleet.entrypoints.http.spa import bundled_build, spa_router

TITLE = "CAFleet Admin"


def create_app(
    container: Container,
    *,
    token: str | None = None,
    loopback_hosts_only: bool = False,
    webui_build: Path | None = None,
    stream_limits: StreamLimits | None = None,
    shutting_down: Callable[[], bool] = lambda: False,
) -> FastAPI:
    """token: the bearer token every /api/ request needs (`cafleet server` always passes one;
    None turns the check off, for in-process tests).
    loopback_hosts_only: refuse requests whose Host is not a loopback name (set it when
    the server listens on loopback). webui_build: the SPA's build folder.
    shutting_down: tells event streams to end so a stopping server is not held open."""
    app = FastAPI(
        title=TITLE,
        version=__version__,
        description="JSON API of the CAFleet admin WebUI. Every route except GET /api/fleets"
        " works in the fleet named by the X-Fleet-Id header.",
        docs_url=None,  # served by docs_router from the package's own files
        redoc_url=None,  # ReDoc comes only from a CDN; /docs is the reference
    )
    app.state.admin = container.admin()
    app.state.pane_watch = container.pane_watch()
    limits = stream_limits or StreamLimits()
    app.state.stream_limits = limits
    app.state.stream_slots = StreamSlots(limits.max_streams)
    app.state.shutting_down = shutting_down
    install_error_handlers(app)
    app.include_router(api.router)
    app.include_router(events.router)
    app.include_router(
        docs_router(bundled_build() / "swagger", title=TITLE, openapi_url=app.openapi_url or "")
    )
    app.include_router(spa_router(webui_build or bundled_build()))
    app.add_middleware(RequestGuards, policy=GuardPolicy(token, loopback_hosts_only))
    return app

"""`cafleet server`: the admin WebUI in the foreground, one uvicorn process.

The web stack (FastAPI, uvicorn) is imported inside the command body, so no
other command, and not `cafleet server --help`, pays for it.
"""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import click

from cafleet.adapters.runtime.locks import runtime_directory
from cafleet.adapters.runtime.webui_tokens import generated_token, publish_token, withdraw_token
from cafleet.entrypoints.cli.app import CafleetCommand, app_of, fail
from cafleet.entrypoints.http.binding import is_loopback, listening_socket, usable_token

GRACEFUL_SHUTDOWN_SECONDS = 3  # requests still running are cut after this on a stop


@click.command(
    "server",
    cls=CafleetCommand,
    help="Run the admin WebUI (JSON API under /api, single-page app at /) in the foreground.",
)
@click.option("--host", default=None, help="Address to listen on [default: CAFLEET_BROKER_HOST].")
@click.option(
    "--port",
    type=click.IntRange(1, 65535),
    default=None,
    help="Port to listen on [default: CAFLEET_BROKER_PORT].",
)
@click.pass_context
def server(ctx: click.Context, host: str | None, port: int | None) -> None:
    components = app_of(ctx).components
    settings = components.settings
    host = host or settings.broker_host
    port = port or settings.broker_port
    loopback = is_loopback(host)
    token = settings.webui_token
    if token is None and not loopback:
        fail(
            f"refusing to listen on {host} without CAFLEET_WEBUI_TOKEN;"
            " the admin WebUI can type into member panes."
        )
    if token is not None and not usable_token(token):
        fail(
            f"refusing to listen on {host}: CAFLEET_WEBUI_TOKEN must be at least 16"
            " characters; the admin WebUI can type into member panes."
        )
    if not loopback:
        click.echo(
            f"Warning: the admin WebUI listens on {host}, beyond loopback; every /api/ request"
            " must carry 'Authorization: Bearer <CAFLEET_WEBUI_TOKEN>', and whoever holds the"
            " token can type into member panes.",
            err=True,
        )

    import uvicorn

    from cafleet.composition.container import build_container
    from cafleet.entrypoints.http.app import create_app

    container = build_container(settings)
    container.admin().fleets()  # fail now, not on the first request, if the schema is missing
    listener = listening_socket(host, port)
    # Loopback is no authentication on a machine with other users: without a token of the
    # user's, one is made for this run and kept where only this user can read it.
    generated: tuple[str, Path] | None = None  # the token made here and its file
    if token is None:
        token = generated_token()
        generated = (token, publish_token(runtime_directory(components.env), port, token))
    server: uvicorn.Server | None = None

    def shutting_down() -> bool:
        """Open event streams end as soon as uvicorn begins its graceful stop."""
        return server is not None and server.should_exit

    app = create_app(
        container, token=token, loopback_hosts_only=loopback, shutting_down=shutting_down
    )
    server = uvicorn.Server(
        uvicorn.Config(
            app,
            host=host,
            port=port,
            workers=1,
            log_level="info",
            timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_SECONDS,
        )
    )
    click.echo(started_lines(host, port, generated))
    sys.stdout.flush()
    # uvicorn shuts down gracefully on SIGINT/SIGTERM, then re-raises the signal to the
    # handler it replaced; a quiet one makes a requested stop exit 0, as `monitor start` does
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, _stop_requested)
    try:
        server.run(sockets=[listener])
    finally:
        listener.close()
        if generated is not None:
            withdraw_token(generated[1], generated[0])


def started_lines(host: str, port: int, generated: tuple[str, Path] | None) -> str:
    """Where the page is; a generated token is printed once, in the address that opens it (a
    token of the user's is never printed)."""
    shown = f"[{host}]" if ":" in host else host
    address = f"http://{shown}:{port}/"
    if generated is None:
        return (
            f"cafleet admin WebUI on {address} (API under /api, docs at /docs)\n"
            "Every /api/ request carries 'Authorization: Bearer <CAFLEET_WEBUI_TOKEN>';"
            " the page asks for it once."
        )
    token, path = generated
    return (
        f"cafleet admin WebUI on {address}?token={token} (API under /api, docs at /docs)\n"
        f"The token is in {path}; every /api/ request carries"
        " 'Authorization: Bearer <token>'."
    )


def _stop_requested(_signum: int, _frame: object) -> None:
    pass

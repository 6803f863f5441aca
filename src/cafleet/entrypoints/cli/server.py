"""`cafleet server`: the admin WebUI in the foreground, one uvicorn process.

The web stack (FastAPI, uvicorn) is imported inside the command body, so no
other command, and not `cafleet server --help`, pays for it.
"""

from __future__ import annotations

import signal
import sys

import click

from cafleet.entrypoints.cli.app import CafleetCommand, app_of, fail
from cafleet.entrypoints.http.binding import is_loopback, usable_token

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
    settings = app_of(ctx).components.settings
    host = host or settings.broker_host
    port = port or settings.broker_port
    loopback = is_loopback(host)
    token = None if loopback else settings.webui_token
    if not loopback:
        if token is None:
            fail(
                f"refusing to listen on {host} without CAFLEET_WEBUI_TOKEN;"
                " the admin WebUI can type into member panes."
            )
        if not usable_token(token):
            fail(
                f"refusing to listen on {host}: CAFLEET_WEBUI_TOKEN must be at least 16"
                " characters; the admin WebUI can type into member panes."
            )
        click.echo(
            f"Warning: the admin WebUI listens on {host}, beyond loopback; every /api/ request"
            " must carry 'Authorization: Bearer <CAFLEET_WEBUI_TOKEN>', and whoever holds the"
            " token can type into member panes.",
            err=True,
        )

    import uvicorn

    from cafleet.container import build_container
    from cafleet.entrypoints.http.app import create_app

    container = build_container(settings)
    container.admin().fleets()  # fail now, not on the first request, if the schema is missing
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
    shown = f"[{host}]" if ":" in host else host
    click.echo(f"cafleet admin WebUI on http://{shown}:{port}/ (API under /api, docs at /docs)")
    sys.stdout.flush()
    # uvicorn shuts down gracefully on SIGINT/SIGTERM, then re-raises the signal to the
    # handler it replaced; a quiet one makes a requested stop exit 0, as `monitor start` does
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, _stop_requested)
    server.run()


def _stop_requested(_signum: int, _frame: object) -> None:
    pass

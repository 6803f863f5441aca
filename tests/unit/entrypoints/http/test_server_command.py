"""`cafleet server`: defaults, the loopback rule, the token, and a light CLI.

uvicorn's Server.run is replaced by a recorder and the listening socket by a stand-in, so
the command builds the real app (on the fake container) and its server without listening
anywhere.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

import cafleet.composition.container
import cafleet.entrypoints.cli.server

TOKEN = "a-long-enough-token-123"
REFUSAL = (
    "Error: refusing to listen on {host} without CAFLEET_WEBUI_TOKEN;"
    " the admin WebUI can type into member panes.\n"
)


STARTED = re.compile(
    r"cafleet admin WebUI on http://127\.0\.0\.1:8000/\?token=([A-Za-z0-9_-]{43})"
    r" \(API under /api, docs at /docs\)\n"
    r"The token is in (\S+); every /api/ request carries 'Authorization: Bearer <token>'\.\n"
)


@pytest.fixture
def runtime(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A private XDG_RUNTIME_DIR; CAFleet's runtime directory is `cafleet` in it."""
    base = tmp_path / "run"
    base.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(base))
    return base / "cafleet"


def token_files(runtime: Path) -> dict[str, tuple[str, int]]:
    return {p.name: (p.read_text(), p.stat().st_mode & 0o777) for p in runtime.glob("*.token")}


class StandInSocket:
    """What the command would listen on; it is handed to uvicorn and closed at the end."""

    def __init__(self, host: str, port: int) -> None:
        self.address = (host, port)
        self.closed = False

    def close(self) -> None:
        self.closed = True


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch, container, runtime: Path) -> list[dict[str, Any]]:
    """What each uvicorn server would have run (and the token files while it ran); the app
    runs on the fake container."""
    import uvicorn

    calls: list[dict[str, Any]] = []

    def record(server: uvicorn.Server, sockets: list[object] | None = None) -> None:
        config = server.config
        calls.append(
            {
                "sockets": sockets,
                "app": config.app,
                "host": config.host,
                "port": config.port,
                "workers": config.workers,
                "server": server,
                "token_files": token_files(runtime),
            }
        )

    monkeypatch.setattr(uvicorn.Server, "run", record)
    monkeypatch.setattr(cafleet.entrypoints.cli.server, "listening_socket", StandInSocket)
    monkeypatch.setattr(
        cafleet.composition.container, "build_container", lambda _settings: container
    )
    return calls


def test_defaults_come_from_the_settings(run, served) -> None:
    result = run("server", env={"CAFLEET_BROKER_HOST": "127.0.0.2", "CAFLEET_BROKER_PORT": "8123"})

    assert result.exit_code == 0, result.output
    [call] = served
    assert (call["host"], call["port"], call["workers"]) == ("127.0.0.2", 8123, 1)
    [listener] = call["sockets"]
    assert listener.address == ("127.0.0.2", 8123)
    assert listener.closed
    assert result.stdout.startswith("cafleet admin WebUI on http://127.0.0.2:8123/?token=")
    assert result.stderr == ""


def test_without_settings_it_listens_on_loopback_port_8000(run, served) -> None:
    result = run("server")

    assert result.exit_code == 0, result.output
    assert (served[0]["host"], served[0]["port"]) == ("127.0.0.1", 8000)


def test_options_override_the_settings(run, served) -> None:
    result = run(
        "server",
        "--host",
        "::1",
        "--port",
        "9000",
        env={"CAFLEET_BROKER_HOST": "127.0.0.2", "CAFLEET_BROKER_PORT": "8123"},
    )

    assert result.exit_code == 0, result.output
    assert (served[0]["host"], served[0]["port"]) == ("::1", 9000)
    assert "http://[::1]:9000/" in result.stdout


def test_on_loopback_a_token_is_made_printed_once_in_the_address_and_kept_in_a_0600_file(
    run, served, alpha, runtime
) -> None:
    result = run("server")

    assert result.exit_code == 0, result.output
    started = STARTED.fullmatch(result.stdout)
    assert started, result.stdout
    token, path = started.groups()
    assert result.stdout.count(token) == 1
    assert Path(path) == runtime / "webui-8000.token"
    [call] = served
    assert call["token_files"] == {"webui-8000.token": (token + "\n", 0o600)}
    assert token_files(runtime) == {}  # the server stopped: its token file went with it

    client = TestClient(call["app"], base_url="http://127.0.0.1:8000")
    refused = client.get("/api/fleets")
    assert (refused.status_code, refused.json()) == (401, {"detail": "missing or invalid token"})
    assert client.get("/api/fleets", headers={"Authorization": "Bearer wrong"}).status_code == 401
    bearer = {"Authorization": f"Bearer {token}"}
    assert client.get("/api/fleets", headers=bearer).status_code == 200
    assert client.get("/").status_code == 200  # the page itself loads without the token


def test_each_start_makes_a_new_token(run, served) -> None:
    tokens = [STARTED.findall(run("server").stdout) for _ in range(2)]

    assert len(tokens[0]) == len(tokens[1]) == 1
    assert tokens[0][0][0] != tokens[1][0][0]


def test_on_loopback_the_users_token_is_required_and_never_printed(
    run, served, alpha, runtime
) -> None:
    result = run("server", env={"CAFLEET_WEBUI_TOKEN": TOKEN})
    client = TestClient(served[0]["app"], base_url="http://127.0.0.1:8000")

    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(
        "cafleet admin WebUI on http://127.0.0.1:8000/ (API under /api, docs at /docs)\n"
    )
    assert TOKEN not in result.output
    assert served[0]["token_files"] == {}
    assert client.get("/api/fleets").status_code == 401
    bearer = {"Authorization": f"Bearer {TOKEN}"}
    assert client.get("/api/fleets", headers=bearer).status_code == 200
    rebound = client.get("/api/fleets", headers={**bearer, "Host": "rebound.example:8000"})
    assert rebound.status_code == 400


def test_on_loopback_a_short_token_is_refused(run, served) -> None:
    result = run("server", env={"CAFLEET_WEBUI_TOKEN": "too-short"})

    assert result.exit_code == 1
    assert result.stderr == (
        "Error: refusing to listen on 127.0.0.1: CAFLEET_WEBUI_TOKEN must be at least 16"
        " characters; the admin WebUI can type into member panes.\n"
    )
    assert served == []


def test_a_runtime_directory_open_to_others_is_refused_before_listening(
    run, served, runtime
) -> None:
    runtime.parent.chmod(0o755)

    result = run("server")

    assert result.exit_code == 1
    assert result.stderr == (
        f"Error: refusing the runtime directory {runtime.parent}: open to group or others"
        " (mode 0755)\n"
    )
    assert served == []


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.20", "example.com", "::"])
def test_beyond_loopback_without_a_token_it_refuses_to_start(run, served, host) -> None:
    result = run("server", "--host", host)

    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr == REFUSAL.format(host=host)
    assert served == []


def test_a_token_shorter_than_16_characters_is_refused(run, served) -> None:
    result = run("server", "--host", "0.0.0.0", env={"CAFLEET_WEBUI_TOKEN": "too-short"})

    assert result.exit_code == 1
    assert result.stderr == (
        "Error: refusing to listen on 0.0.0.0: CAFLEET_WEBUI_TOKEN must be at least 16"
        " characters; the admin WebUI can type into member panes.\n"
    )
    assert "too-short" not in result.output
    assert served == []


def test_beyond_loopback_with_a_token_it_warns_and_requires_the_token(run, served, alpha) -> None:
    result = run("server", "--host", "0.0.0.0", env={"CAFLEET_WEBUI_TOKEN": TOKEN})

    assert result.exit_code == 0, result.output
    [warning] = result.stderr.splitlines()
    assert warning.startswith("Warning: the admin WebUI listens on 0.0.0.0, beyond loopback;")
    assert TOKEN not in result.output
    client = TestClient(served[0]["app"], base_url="http://192.168.1.20:8000")
    assert client.get("/api/fleets").json() == {"detail": "missing or invalid token"}
    authorized = client.get("/api/fleets", headers={"Authorization": f"Bearer {TOKEN}"})
    assert authorized.status_code == 200


@pytest.mark.parametrize("port", ["0", "65536", "http"])
def test_a_bad_port_option_is_a_usage_error(run, served, port) -> None:
    result = run("server", "--port", port)

    assert result.exit_code == 2
    assert "Usage: cafleet server [OPTIONS]" in result.stderr
    assert served == []


def test_a_bad_port_setting_is_one_error_line(run, served) -> None:
    result = run("server", env={"CAFLEET_BROKER_PORT": "70000"})

    assert result.exit_code == 1
    assert result.stderr == (
        "Error: invalid value for CAFLEET_BROKER_PORT: '70000'"
        " (expected an integer between 1 and 65535)\n"
    )


def test_a_missing_database_stops_it_before_listening(run, monkeypatch, tmp_path) -> None:
    import uvicorn

    monkeypatch.setattr(uvicorn.Server, "run", lambda *_a, **_k: pytest.fail("must not listen"))
    result = run("server", env={"CAFLEET_DATABASE_URL": f"sqlite:///{tmp_path}/missing.db"})

    assert result.exit_code == 1
    assert result.stderr == (
        f"Error: database {tmp_path}/missing.db does not exist; run 'cafleet setup' to create it\n"
    )


def test_the_server_is_listed_in_the_root_help(run) -> None:
    result = run("--help")

    assert "\n  server " in result.stdout


def test_event_streams_end_once_the_server_begins_to_stop(run, served, alpha) -> None:
    run("server")
    [call] = served
    app = call["app"]

    assert app.state.shutting_down() is False
    call["server"].should_exit = True
    assert app.state.shutting_down() is True

"""`cafleet server`: defaults, the loopback rule, the token, and a light CLI.

uvicorn's Server.run is replaced by a recorder, so the command builds the real app (on the
fake container) and its server without listening anywhere.
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest
from fastapi.testclient import TestClient

import cafleet.container

TOKEN = "a-long-enough-token-123"
REFUSAL = (
    "Error: refusing to listen on {host} without CAFLEET_WEBUI_TOKEN;"
    " the admin WebUI can type into member panes.\n"
)


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch, container) -> list[dict[str, Any]]:
    """What each uvicorn server would have run; the app runs on the fake container."""
    import uvicorn

    calls: list[dict[str, Any]] = []

    def record(server: uvicorn.Server) -> None:
        config = server.config
        calls.append(
            {
                "app": config.app,
                "host": config.host,
                "port": config.port,
                "workers": config.workers,
                "server": server,
            }
        )

    monkeypatch.setattr(uvicorn.Server, "run", record)
    monkeypatch.setattr(cafleet.container, "build_container", lambda _settings: container)
    return calls


def test_defaults_come_from_the_settings(run, served) -> None:
    result = run("server", env={"CAFLEET_BROKER_HOST": "127.0.0.2", "CAFLEET_BROKER_PORT": "8123"})

    assert result.exit_code == 0, result.output
    [call] = served
    assert (call["host"], call["port"], call["workers"]) == ("127.0.0.2", 8123, 1)
    assert result.stdout == (
        "cafleet admin WebUI on http://127.0.0.2:8123/ (API under /api, docs at /docs)\n"
    )
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


def test_on_loopback_no_token_is_asked_and_foreign_host_names_are_refused(
    run, served, alpha
) -> None:
    run("server", env={"CAFLEET_WEBUI_TOKEN": TOKEN})
    client = TestClient(served[0]["app"], base_url="http://127.0.0.1:8000")

    assert client.get("/api/fleets").status_code == 200
    assert client.get("/api/fleets", headers={"Host": "rebound.example:8000"}).status_code == 400


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


@pytest.mark.parametrize(
    "argv",
    [["--help"], ["--version"], ["server", "--help"], ["message", "send", "--help"]],
)
def test_help_never_imports_the_web_stack(argv: list[str]) -> None:
    probe = (
        "import sys\n"
        "from cafleet.entrypoints.cli.main import main\n"
        "try:\n"
        f"    main({argv!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        "web = ('fastapi', 'uvicorn', 'starlette', 'pydantic', 'anyio')\n"
        "loaded = [m for m in sys.modules if m.split('.')[0] in web]\n"
        "sys.stderr.write(repr(sorted(loaded)))\n"
    )

    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=False
    )

    assert done.returncode == 0
    assert done.stderr == "[]"


def test_event_streams_end_once_the_server_begins_to_stop(run, served, alpha) -> None:
    run("server")
    [call] = served
    app = call["app"]

    assert app.state.shutting_down() is False
    call["server"].should_exit = True
    assert app.state.shutting_down() is True

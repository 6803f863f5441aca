"""HerdrClient against the fake herdr server (and a few raw sockets): wire format, one request
per connection, the once-per-process ping and its protocol warning, error mapping."""

from __future__ import annotations

import json
import os
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.fakes.herdr_server import FakeHerdrServer

from cafleet.adapters.herdr.client import (
    MAX_REQUEST_BYTES,
    HerdrClient,
    HerdrRequestFailed,
    socket_path,
)
from cafleet.domain.errors import Unavailable
from cafleet.domain.panes import PaneGone


def short_socket(tmp_path: Path, name: str) -> str:
    """A socket path short enough for AF_UNIX."""
    path = tmp_path / name
    return str(path) if len(str(path)) < 100 else f"/tmp/{os.getpid()}-{name}"


# --------------------------------------------------------------------------- the wire


def test_every_request_opens_its_own_connection(server: FakeHerdrServer) -> None:
    client = HerdrClient(server.socket_path)

    client.call("pane.list")
    client.call("pane.get", {"pane_id": server.root_pane})
    client.call("pane.list")

    assert server.methods() == ["ping", "pane.list", "pane.get", "pane.list"]
    assert server.connections == 4


def test_the_result_object_is_returned_with_its_type(server: FakeHerdrServer) -> None:
    result = HerdrClient(server.socket_path).call("pane.get", {"pane_id": server.root_pane})

    assert result["type"] == "pane_info"
    assert result["pane"]["pane_id"] == server.root_pane
    assert result["pane"]["workspace_id"] == "w1"
    assert result["pane"]["tab_id"] == "w1:t1"


def test_a_request_is_one_json_line_with_a_string_id(tmp_path: Path) -> None:
    path = short_socket(tmp_path, "raw.sock")
    received: list[bytes] = []
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(1)

    def answer_once() -> None:
        conn, _ = listener.accept()
        with conn:
            data = b""
            while not data.endswith(b"\n"):
                data += conn.recv(4096)
            received.append(data)
            request = json.loads(data)
            reply = {"id": request["id"], "result": {"type": "ok", "unknown_field": [1, 2]}}
            conn.sendall(json.dumps(reply).encode() + b"\n")

    thread = threading.Thread(target=answer_once)
    thread.start()
    try:
        result = HerdrClient(path).request("pane.close", {"pane_id": "w1:p2"})
    finally:
        thread.join(timeout=5)
        listener.close()
        os.unlink(path)

    assert result == {"type": "ok", "unknown_field": [1, 2]}
    assert received[0].count(b"\n") == 1
    request = json.loads(received[0])
    assert isinstance(request["id"], str)
    assert request["method"] == "pane.close"
    assert request["params"] == {"pane_id": "w1:p2"}


def test_a_request_over_one_mib_is_refused_before_anything_is_sent(
    server: FakeHerdrServer,
) -> None:
    client = HerdrClient(server.socket_path)
    client.call("pane.list")
    before = server.connections

    with pytest.raises(Unavailable) as raised:
        client.call(
            "pane.send_text", {"pane_id": server.root_pane, "text": "x" * MAX_REQUEST_BYTES}
        )

    assert "at most 1048576" in raised.value.message
    assert server.connections == before


# --------------------------------------------------------------------------- ping


def test_ping_happens_once_per_process_and_socket(server: FakeHerdrServer) -> None:
    HerdrClient(server.socket_path).call("pane.list")
    HerdrClient(server.socket_path).call("pane.list")

    assert server.methods() == ["ping", "pane.list", "pane.list"]


def test_an_older_protocol_warns_once(tmp_path: Path) -> None:
    warnings: list[str] = []
    with FakeHerdrServer(protocol=18, version="0.7.0") as old:
        client = HerdrClient(old.socket_path, warn=warnings.append)
        client.call("pane.list")
        HerdrClient(old.socket_path, warn=warnings.append).call("pane.list")

    assert len(warnings) == 1
    assert "protocol 18" in warnings[0]
    assert "tested with protocol 20" in warnings[0]


def test_the_warning_goes_to_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    with FakeHerdrServer(protocol=12) as old:
        HerdrClient(old.socket_path).call("pane.list")

    assert capsys.readouterr().err.startswith(f"warning: the herdr server at {old.socket_path}")


@pytest.mark.parametrize("protocol", [19, 20, 22, 99])  # 19: herdr 0.8.0, same socket API
def test_the_tested_and_newer_protocols_are_accepted_silently(protocol: int) -> None:
    warnings: list[str] = []
    with FakeHerdrServer(protocol=protocol) as current:
        HerdrClient(current.socket_path, warn=warnings.append).call("pane.list")

    assert warnings == []


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("pane.get", {"pane_id": "w1:p77"}),
        ("pane.split", {"target_pane_id": "w1:p77", "direction": "right"}),
        ("pane.current", {"caller_pane_id": "w1:p77"}),
    ],
)
def test_pane_not_found_raises_pane_gone_naming_the_requested_pane(
    server: FakeHerdrServer, method: str, params: dict[str, str]
) -> None:
    with pytest.raises(PaneGone) as raised:
        HerdrClient(server.socket_path).call(method, params)

    assert raised.value.pane_id == "w1:p77"


def test_other_error_codes_become_unavailable_with_method_code_and_message(
    server: FakeHerdrServer,
) -> None:
    with pytest.raises(HerdrRequestFailed) as raised:
        HerdrClient(server.socket_path).call(
            "pane.send_keys", {"pane_id": server.root_pane, "keys": ["bogus"]}
        )

    assert isinstance(raised.value, Unavailable)
    assert raised.value.code == "invalid_key"
    assert raised.value.message == "herdr pane.send_keys failed: invalid_key: unsupported key bogus"
    assert server.inputs(server.root_pane) == []  # keys are validated before any byte


def test_an_unknown_method_is_reported_like_any_other_error(server: FakeHerdrServer) -> None:
    with pytest.raises(HerdrRequestFailed) as raised:
        HerdrClient(server.socket_path).call("pane.teleport", {})

    assert raised.value.message == (
        "herdr pane.teleport failed: invalid_request: unknown method pane.teleport"
    )


def test_an_injected_error_code_is_passed_through(server: FakeHerdrServer) -> None:
    server.fail("pane.send_text", "pane_send_failed", "broken pipe")

    with pytest.raises(HerdrRequestFailed) as raised:
        HerdrClient(server.socket_path).call(
            "pane.send_text", {"pane_id": server.root_pane, "text": "x"}
        )

    assert raised.value.message == "herdr pane.send_text failed: pane_send_failed: broken pipe"


def test_a_missing_socket_cannot_be_reached(tmp_path: Path) -> None:
    path = str(tmp_path / "absent.sock")

    with pytest.raises(Unavailable) as raised:
        HerdrClient(path).call("pane.list")

    assert raised.value.message == (
        f"cannot reach the herdr server at {path}: No such file or directory"
    )
    assert not isinstance(raised.value, PaneGone)


def test_a_socket_nobody_listens_on_cannot_be_reached(tmp_path: Path) -> None:
    path = short_socket(tmp_path, "stale.sock")
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(path)
    stale.close()  # the file stays, nobody listens: what a crashed server leaves
    try:
        with pytest.raises(Unavailable) as raised:
            HerdrClient(path).call("pane.list")
    finally:
        os.unlink(path)

    assert raised.value.message == f"cannot reach the herdr server at {path}: Connection refused"


@pytest.fixture
def mute_server(tmp_path: Path) -> Iterator[tuple[str, list[socket.socket]]]:
    """Accepts connections, reads, never answers (until closed)."""
    path = short_socket(tmp_path, "mute.sock")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(4)
    held: list[socket.socket] = []
    try:
        yield path, held
    finally:
        for conn in held:
            conn.close()
        listener.close()
        os.unlink(path)


def test_a_server_that_does_not_answer_times_out(
    mute_server: tuple[str, list[socket.socket]],
) -> None:
    path, _ = mute_server

    with pytest.raises(Unavailable) as raised:
        HerdrClient(path, timeout=0.2).request("pane.list", {})

    assert raised.value.message == "herdr pane.list timed out after 0.2s"


def test_a_server_that_hangs_up_without_a_reply_is_reported(tmp_path: Path) -> None:
    path = short_socket(tmp_path, "rude.sock")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(1)

    def hang_up() -> None:
        conn, _ = listener.accept()
        conn.recv(4096)
        conn.close()

    thread = threading.Thread(target=hang_up)
    thread.start()
    try:
        with pytest.raises(Unavailable) as raised:
            HerdrClient(path).request("pane.list", {})
    finally:
        thread.join(timeout=5)
        listener.close()
        os.unlink(path)

    assert raised.value.message == (
        "herdr pane.list failed: the server closed the connection without a reply"
    )


# --------------------------------------------------------------------------- socket path


def test_the_socket_path_comes_from_herdr_socket_path_first() -> None:
    env = {"HERDR_SOCKET_PATH": "/run/h.sock", "HERDR_SESSION": "team", "HOME": "/home/u"}

    assert socket_path(env) == "/run/h.sock"


def test_a_named_session_has_its_own_socket() -> None:
    env = {"HERDR_SESSION": "team", "HOME": "/home/u"}

    assert socket_path(env) == "/home/u/.config/herdr/sessions/team/herdr.sock"


def test_the_default_socket_lives_in_the_config_directory() -> None:
    assert socket_path({"HOME": "/home/u"}) == "/home/u/.config/herdr/herdr.sock"


def test_the_config_directory_follows_xdg_config_home() -> None:
    env = {"XDG_CONFIG_HOME": "/cfg", "HERDR_SESSION": "team", "HOME": "/home/u"}

    assert socket_path(env) == "/cfg/herdr/sessions/team/herdr.sock"
    assert socket_path({"XDG_CONFIG_HOME": "/cfg", "HOME": "/home/u"}) == "/cfg/herdr/herdr.sock"


@pytest.mark.parametrize("session", ["default", "", "bad/name", "..", "x" * 65])
def test_the_default_session_and_names_herdr_ignores_use_the_default_socket(
    session: str,
) -> None:
    env = {"HERDR_SESSION": session, "HOME": "/home/u"}

    assert socket_path(env) == "/home/u/.config/herdr/herdr.sock"


def test_without_home_the_config_directory_is_in_the_temporary_directory() -> None:
    assert socket_path({"TMPDIR": "/scratch"}) == "/scratch/herdr/herdr.sock"
    assert socket_path({}) == "/tmp/herdr/herdr.sock"

"""The admin API over real HTTP: uvicorn, a SQLite file written by the CLI, a tmux pane."""

from __future__ import annotations

import json
import shlex
import sqlite3
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx2
import pytest

pytestmark = pytest.mark.tmux


def task_ids(response: httpx2.Response) -> list[int]:
    assert response.status_code == 200, response.text
    return [m["task_id"] for m in response.json()["messages"]]


def cli_send(served, sender: int, to: int, text: str) -> int:
    sent = served.workspace.json(
        "message",
        "send",
        "--fleet-id",
        str(served.fleet.fleet_id),
        "--agent-id",
        str(sender),
        "--to",
        str(to),
        "--text",
        text,
    )
    task_id: int = sent["task"]["id"]
    return task_id


def test_the_fleet_created_by_the_cli_is_served(served) -> None:
    with served.client() as client:
        fleets = client.get("/api/fleets").json()
        agents = client.get("/api/agents").json()["agents"]
        monitor = client.get("/api/monitor").json()

    assert {"fleet_id": served.fleet.fleet_id, "name": "served"}.items() <= fleets[-1].items()
    assert [(a["agent_id"], a["kind"]) for a in agents][:2] == [
        (served.fleet.director, "director"),
        (served.fleet.admin, "administrator"),
    ]
    assert agents[0]["monitor"]["interval_seconds"] == 180
    assert monitor["running"] is False


def test_a_cli_message_is_in_the_timeline_inbox_and_sent_lists(served) -> None:
    director, admin = served.fleet.director, served.fleet.admin
    first = cli_send(served, director, admin, "first from the CLI")
    second = cli_send(served, director, admin, "second\nwith two lines")

    with served.client() as client:
        timeline = client.get("/api/timeline")
        inbox = client.get(f"/api/agents/{admin}/inbox", params={"limit": 1})
        older = client.get(f"/api/agents/{admin}/inbox", params={"before": second, "limit": 1})
        sent = client.get(f"/api/agents/{director}/sent")

    assert task_ids(timeline)[:2] == [second, first]
    newest = timeline.json()["messages"][0]
    assert newest["body"] == "second\nwith two lines"
    assert (newest["from_agent_name"], newest["to_agent_name"]) == ("Director", "Administrator")
    assert newest["delivery"]["state"] == "skipped"
    assert newest["delivery"]["error"] == "no-placement"
    assert task_ids(inbox) == [second]
    assert task_ids(older) == [first]
    assert task_ids(sent)[:2] == [second, first]


def test_a_webui_send_reaches_the_cli_and_never_types_into_a_shell(served) -> None:
    with served.client() as client:
        response = client.post(
            "/api/messages/send",
            json={"to_agent_id": served.fleet.director, "text": "from the browser"},
        )
    assert response.status_code == 200, response.text
    task_id = response.json()["task_id"]

    polled = served.workspace.json(
        "message",
        "poll",
        "--fleet-id",
        str(served.fleet.fleet_id),
        "--agent-id",
        str(served.fleet.director),
    )
    shown = served.workspace.json(
        "message",
        "show",
        "--full",
        "--fleet-id",
        str(served.fleet.fleet_id),
        "--agent-id",
        str(served.fleet.director),
        "--task-id",
        str(task_id),
    )

    assert task_id in [m["id"] for m in polled]
    [delivery] = shown["deliveries"]
    # the Director's pane runs a shell, so the preview is skipped rather than typed into it
    assert delivery["state"] == "skipped"
    assert delivery["error"].startswith("not-agent:")
    assert "from the browser" not in served.tmux.run("capture-pane", "-p", "-t", "main")


def test_a_webui_broadcast_writes_a_summary_the_cli_can_show(served) -> None:
    with served.client() as client:
        response = client.post("/api/messages/send", json={"to_agent_id": "*", "text": "all"})

    assert response.status_code == 200, response.text
    assert response.json()["status"] == "completed"
    shown = served.workspace.json(
        "message",
        "show",
        "--fleet-id",
        str(served.fleet.fleet_id),
        "--agent-id",
        str(served.fleet.admin),
        "--task-id",
        str(response.json()["task_id"]),
    )
    assert shown["task"]["kind"] == "broadcast_summary"


def test_refused_sends_write_nothing(served) -> None:
    db = Path(served.workspace.env["CAFLEET_DATABASE_URL"].removeprefix("sqlite:///"))
    before = count_tasks(db)

    with served.client() as client:
        empty = client.post("/api/messages/send", json={"to_agent_id": 1, "text": "  "})
        foreign = client.post(
            "/api/messages/send",
            json={"to_agent_id": 1, "text": "x", "from_agent_id": served.fleet.director},
        )
        unknown = client.post("/api/messages/send", json={"to_agent_id": 424242, "text": "x"})

    assert (empty.status_code, empty.json()) == (400, {"detail": "text may not be empty"})
    assert foreign.json() == {"detail": "from_agent must be the fleet Administrator"}
    assert (unknown.status_code, unknown.json()) == (404, {"detail": "Agent not found"})
    assert count_tasks(db) == before


def count_tasks(db: Path) -> int:
    conn = sqlite3.connect(db)
    try:
        return int(conn.execute("SELECT count(*) FROM tasks").fetchone()[0])
    finally:
        conn.close()


def test_a_monitor_patch_is_what_the_cli_then_shows(served) -> None:
    fid, director = served.fleet.fleet_id, served.fleet.director
    db = Path(served.workspace.env["CAFLEET_DATABASE_URL"].removeprefix("sqlite:///"))
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute(
        "UPDATE monitor_config SET last_stall_check_at = '2026-01-01T00:00:00.000000+00:00'"
        " WHERE agent_id = ?",
        (director,),
    )
    conn.close()

    with served.client() as client:
        path = f"/api/agents/{director}/monitor"
        changed = client.patch(path, json={"interval_seconds": 300, "enabled": False})
        unchanged = client.patch(path, json={})
        invalid = client.patch(path, json={"interval_seconds": 0})
        client.patch(path, json={"enabled": True, "interval_seconds": 180})

    assert changed.json() == {"interval_seconds": 300, "last_ping_at": None, "enabled": False}
    assert unchanged.json() == changed.json()
    assert invalid.status_code == 422
    shown = served.workspace.json(
        "monitor", "config", "--fleet-id", str(fid), "--member-id", str(director)
    )
    assert shown["interval_seconds"] == 180
    conn = sqlite3.connect(db)
    [(stall,)] = conn.execute(
        "SELECT last_stall_check_at FROM monitor_config WHERE agent_id = ?", (director,)
    ).fetchall()
    conn.close()
    assert stall is None


def test_other_fleets_stay_invisible(served) -> None:
    other = served.create_fleet("neighbour")
    cli_send_in(served, other, "private")

    with served.client() as client:
        agents = [a["agent_id"] for a in client.get("/api/agents").json()["agents"]]
        inbox = client.get(f"/api/agents/{other.admin}/inbox")
        monitor = client.get(f"/api/agents/{other.director}/monitor")
        send = client.post("/api/messages/send", json={"to_agent_id": other.director, "text": "x"})
        timeline = client.get("/api/timeline").json()["messages"]

    assert other.director not in agents
    assert (inbox.status_code, inbox.json()) == (404, {"detail": "Agent not found"})
    assert (monitor.status_code, monitor.json()) == (404, {"detail": "Agent not enrolled"})
    assert (send.status_code, send.json()) == (404, {"detail": "Agent not found"})
    assert "private" not in [m["body"] for m in timeline]


def cli_send_in(served, fleet, text: str) -> None:
    served.workspace.ok(
        "message",
        "send",
        "--fleet-id",
        str(fleet.fleet_id),
        "--agent-id",
        str(fleet.director),
        "--to",
        str(fleet.admin),
        "--text",
        text,
    )


def test_a_fleet_deleted_by_the_cli_is_read_only(served) -> None:
    doomed = served.create_fleet("doomed")
    cli_send_in(served, doomed, "last words")
    served.workspace.ok("fleet", "delete", "--fleet-id", str(doomed.fleet_id), "--keep-panes")

    with served.client(**{"X-Fleet-Id": str(doomed.fleet_id)}) as client:
        timeline = client.get("/api/timeline")
        send = client.post("/api/messages/send", json={"to_agent_id": "*", "text": "hello?"})
        fleets = client.get("/api/fleets").json()
        every = client.get("/api/fleets?include_deleted=true").json()

    assert [m["body"] for m in timeline.json()["messages"]] == ["last words"]
    read_only = f"fleet {doomed.fleet_id} is deleted; its history is read-only"
    assert (send.status_code, send.json()) == (409, {"detail": read_only})
    assert doomed.fleet_id not in [f["fleet_id"] for f in fleets]
    [listed] = [f for f in every if f["fleet_id"] == doomed.fleet_id]
    assert listed["deleted_at"] is not None


def test_cross_site_writes_and_foreign_host_names_are_refused(served) -> None:
    with served.client() as client:
        cross = client.post(
            "/api/messages/send",
            json={"to_agent_id": "*", "text": "x"},
            headers={"Origin": "http://evil.example"},
        )
        form = client.post(
            "/api/messages/send",
            content=b"to_agent_id=*&text=x",
            headers={"Content-Type": "application/x-www-form-urlencoded"},
        )
        rebound = client.get("/api/fleets", headers={"Host": "evil.example"})
        own = client.post(
            "/api/messages/send",
            json={"to_agent_id": served.fleet.admin, "text": "own origin"},
            headers={"Origin": served.base_url},
        )

    assert (cross.status_code, cross.json()) == (403, {"detail": "cross-origin request refused"})
    assert (form.status_code, form.json()) == (
        415,
        {"detail": "Content-Type must be application/json"},
    )
    assert (rebound.status_code, rebound.json()) == (400, {"detail": "unexpected Host header"})
    assert own.status_code == 200


def test_the_page_and_the_schema_are_served(served) -> None:
    with served.client() as client:
        page = client.get("/")
        deep = client.get("/fleets/1/agents")
        schema = client.get("/openapi.json").json()
        unknown = client.get("/api/unknown")

    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert deep.text == page.text
    assert schema["info"]["title"] == "CAFleet Admin"
    assert "/api/messages/send" in schema["paths"]
    assert unknown.json() == {"detail": "Not Found"}


# --- the live event stream ----------------------------------------------------------------


class EventReader:
    """Reads a server-sent event stream on a thread, collecting (event, data) pairs."""

    def __init__(self, client: httpx2.Client) -> None:
        self.events: list[tuple[str, dict[str, Any]]] = []
        self.opened = threading.Event()
        self.status: int | None = None
        self._client = client
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        event = None
        try:
            with self._client.stream("GET", "/api/events") as response:
                self.status = response.status_code
                for line in response.iter_lines():
                    if line.startswith("retry:"):
                        self.opened.set()
                    elif line.startswith("event: "):
                        event = line.removeprefix("event: ")
                    elif line.startswith("data: ") and event is not None:
                        self.events.append((event, json.loads(line.removeprefix("data: "))))
        except httpx2.HTTPError:
            pass  # the test closed the client
        finally:
            self.opened.set()

    def wait_for(self, name: str, timeout: float = 15) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for event, data in self.events:
                if event == name:
                    return data
            time.sleep(0.05)
        raise AssertionError(f"no {name!r} event within {timeout}s; got {self.events}")


def test_a_cli_send_arrives_on_the_event_stream(served) -> None:
    client = served.client()
    reader = EventReader(client)
    try:
        assert reader.opened.wait(15)
        assert reader.status == 200
        task_id = cli_send(served, served.fleet.director, served.fleet.admin, "live!")

        message = reader.wait_for("message")
        state = reader.wait_for("state")
    finally:
        client.close()

    assert message == {
        "fleet_id": served.fleet.fleet_id,
        "changed": ["messages"],
        "task_id": task_id,
    }
    assert "deliveries" in state["changed"]


def test_an_open_stream_does_not_keep_the_server_from_stopping(
    workspace, private_tmux, launch
) -> None:
    made = workspace.json("fleet", "create", "--name", "short-lived", **private_tmux.env)
    server = launch()
    client = httpx2.Client(
        base_url=server.base_url,
        headers={**server.bearer, "X-Fleet-Id": str(made["fleet_id"])},
        timeout=30,
        trust_env=False,
    )
    reader = EventReader(client)
    try:
        assert reader.opened.wait(15)
        assert reader.status == 200
        started = time.monotonic()
        code = server.stop()
        elapsed = time.monotonic() - started
    finally:
        client.close()

    assert code == 0
    assert elapsed < 10
    assert "Traceback" not in server.output()


# --- starting the server ------------------------------------------------------------------


def test_without_a_database_the_server_does_not_start(tmp_path: Path, served) -> None:
    missing = f"sqlite:///{tmp_path / 'missing.db'}"

    done = served.workspace.cli("server", "--port", "1", CAFLEET_DATABASE_URL=missing)

    assert done.code == 1
    assert done.stderr == (
        f"Error: database {tmp_path / 'missing.db'} does not exist;"
        " run 'cafleet setup' to create it\n"
    )


def test_a_busy_port_is_one_line_before_any_banner_and_keeps_the_running_servers_token(
    served,
) -> None:
    port = served.base_url.rpartition(":")[2]
    token_file = served.workspace.root / "run" / "cafleet" / f"webui-{port}.token"
    before = token_file.read_text()

    done = served.workspace.cli("server", "--port", port)

    assert done.code == 1
    assert done.stdout == ""
    assert done.stderr == f"Error: port {port} is in use on 127.0.0.1; pass --port\n"
    assert token_file.read_text() == before
    with served.client() as client:
        assert client.get("/api/fleets").status_code == 200


def test_beyond_loopback_without_a_token_it_refuses_before_listening(served) -> None:
    done = served.workspace.cli("server", "--host", "0.0.0.0", "--port", "1")

    assert done.code == 1
    assert done.stdout == ""
    assert done.stderr == (
        "Error: refusing to listen on 0.0.0.0 without CAFLEET_WEBUI_TOKEN;"
        " the admin WebUI can type into member panes.\n"
    )


@pytest.mark.parametrize(
    "argv",
    [
        [
            "message",
            "send",
            "--fleet-id",
            "{fid}",
            "--agent-id",
            "{director}",
            "--to",
            "{admin}",
            "--text",
            "probe",
        ],
        ["message", "poll", "--fleet-id", "{fid}", "--agent-id", "{admin}"],
        ["member", "list", "--fleet-id", "{fid}"],
        ["fleet", "list"],
    ],
)
def test_hot_commands_never_import_the_web_stack(served, argv: list[str]) -> None:
    ids = {
        "fid": served.fleet.fleet_id,
        "director": served.fleet.director,
        "admin": served.fleet.admin,
    }
    args = [a.format(**ids) for a in argv]
    probe = (
        "import sys\n"
        "from cafleet.entrypoints.cli.main import main\n"
        "code = 0\n"
        "try:\n"
        f"    main({args!r})\n"
        "except SystemExit as exc:\n"
        "    code = exc.code or 0\n"
        "web = ('fastapi', 'uvicorn', 'starlette', 'pydantic')\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in web)\n"
        "sys.stderr.write(f'{code} {loaded!r}')\n"
    )

    done = subprocess.run(
        [sys.executable, "-c", probe],
        env=served.workspace.env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert done.stderr == "0 []"


def test_a_members_agent_status_and_its_delivery_attempts_are_served_live(served) -> None:
    crew = served.create_fleet("crew")
    demo_agent = shlex.join([sys.executable, "-m", "cafleet.demo.agent"])
    member = served.workspace.json(
        "member", "create",
        "--fleet-id", str(crew.fleet_id),
        "--agent-id", str(crew.director),
        "--name", "coder",
        "--description", "Writes code",
        "--coding-agent", "custom",
        "--agent-command", demo_agent,
        "--text", "You are coder.",
        **served.tmux.env,
    )  # fmt: skip
    listed = served.workspace.json("member", "list", "--fleet-id", str(crew.fleet_id))
    task_id = cli_send(
        replace(served, fleet=crew), crew.director, member["agent_id"], "status, please"
    )

    client = served.client(**{"X-Fleet-Id": str(crew.fleet_id)})
    reader = EventReader(client)
    try:
        agents = {a["agent_id"]: a for a in client.get("/api/agents").json()["agents"]}
        inbox = client.get(f"/api/agents/{member['agent_id']}/inbox").json()["messages"]
        assert reader.opened.wait(15)
        served.tmux.run("kill-pane", "-t", member["placement"]["mux_pane_id"])
        state = reader.wait_for("state")
        after = {a["agent_id"]: a for a in client.get("/api/agents").json()["agents"]}
    finally:
        client.close()

    [cli_row] = listed
    row = agents[member["agent_id"]]
    # a custom command tells nothing about itself: unknown while its pane runs, as the CLI says
    assert (row["agent_status"], row["agent_status_since"]) == ("unknown", None)
    assert (cli_row["agent_status"], cli_row["agent_status_since"]) == ("unknown", None)
    for builtin in (crew.director, crew.admin):
        assert (agents[builtin]["agent_status"], agents[builtin]["agent_status_since"]) == (
            None,
            None,
        )
    [message] = inbox
    assert message["task_id"] == task_id
    [typed] = message["deliveries"]
    assert (typed["attempt"], typed["channel"], typed["state"]) == (1, "keys", "sent")
    assert typed["confirmed_at"] is None
    assert message["delivery"] == typed
    # the pane went away: the open stream says the roster changed, and it now reads exited
    assert "agents" in state["changed"]
    assert after[member["agent_id"]]["agent_status"] == "exited"


# --- the token, on loopback too ----------------------------------------------------------


def test_on_loopback_every_api_route_refuses_a_request_without_the_token(served) -> None:
    before = count_tasks(Path(served.workspace.root / "cafleet.db"))
    fleet = {"X-Fleet-Id": str(served.fleet.fleet_id)}
    with httpx2.Client(base_url=served.base_url, timeout=30, trust_env=False) as bare:
        reads = [bare.get(path, headers=fleet) for path in ("/api/fleets", "/api/agents")]
        events = f"/api/events?fleet_id={served.fleet.fleet_id}"
        with bare.stream("GET", events, headers=fleet) as opened:  # an open stream never ends
            stream = (opened.status_code, None if opened.status_code == 200 else opened.read())
        send = bare.post(
            "/api/messages/send",
            json={"to_agent_id": served.fleet.admin, "text": "no token"},
            headers={**fleet, "Authorization": "Bearer not-the-token-at-all"},
        )
        page = bare.get("/")

    refusal = (401, {"detail": "missing or invalid token"})
    for refused in [*reads, send]:
        assert (refused.status_code, refused.json()) == refusal
    assert stream == (401, json.dumps(refusal[1], separators=(",", ":")).encode())
    assert count_tasks(Path(served.workspace.root / "cafleet.db")) == before
    assert page.status_code == 200  # the page loads; it brings the token from its address


def test_the_generated_token_is_in_a_0600_file_until_the_server_stops(workspace, launch) -> None:
    server = launch()
    address, token = server.printed() or ("", None)
    port = server.base_url.rpartition(":")[2]
    path = workspace.root / "run" / "cafleet" / f"webui-{port}.token"

    assert address == server.base_url + "/"
    assert token is not None and len(token) >= 43
    assert server.output().count(token) == 1
    assert path.read_text() == token + "\n"
    assert path.stat().st_mode & 0o777 == 0o600
    assert f"The token is in {path};" in server.output()
    with httpx2.Client(base_url=server.base_url, timeout=30, trust_env=False) as client:
        assert client.get("/api/fleets", headers=server.bearer).status_code == 200

    assert server.stop() == 0
    assert not path.exists()


def test_a_token_of_the_users_is_required_on_loopback_and_never_printed(workspace, launch) -> None:
    token = "a-token-of-the-users-own-0123"
    server = launch(CAFLEET_WEBUI_TOKEN=token)

    with httpx2.Client(base_url=server.base_url, timeout=30, trust_env=False) as client:
        assert client.get("/api/fleets").status_code == 401
        assert client.get("/api/fleets", headers=server.bearer).status_code == 200
    assert token not in server.output()
    assert list((workspace.root / "run" / "cafleet").glob("*.token")) == []

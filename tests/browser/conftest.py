"""Fixtures for the browser tests of the admin WebUI.

The tests drive Debian's Chromium (headless, through Playwright with the system executable:
nothing is downloaded) against a real `cafleet server` subprocess on a free loopback port. The
server works on a temporary database holding one fleet whose Director is the first pane of a
private tmux server and whose members run the built-in demo agent, so pushes, ACKs and the
"not delivered" marker are real.

Everything is skipped when Chromium, tmux or the `playwright` package is missing. Install the
browser with `apt-get install chromium`.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from support.cli import CAFLEET, run_cafleet
from support.tmux import clean_environment, private_tmux, require_tmux

if TYPE_CHECKING:
    from playwright.sync_api import Page, Playwright

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SERVER_START_TIMEOUT = 30.0
PRINTED = "cafleet admin WebUI on "
PRINTED_ADDRESS = re.compile(re.escape(PRINTED) + r"http://\S+/\?token=(\S+)")
FLEET_NAME = "web-demo"


def chromium_path() -> str | None:
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return None


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def run_cli(env: Mapping[str, str], *args: str, check: bool = True) -> str:
    """`cafleet <args>` with exactly `env`; returns stdout (exit 0 required when check)."""
    done = run_cafleet(*args, env=env)
    assert done.code == 0 or not check, (args, done.stdout, done.stderr)
    return done.stdout


@dataclass
class WebFleet:
    """One fleet served by a running `cafleet server`."""

    base_url: str
    env: dict[str, str]
    fleet_id: int
    fleet_name: str
    director: int
    admin: int
    members: dict[str, int] = field(default_factory=dict)
    printed_url: str = ""  # the address `cafleet server` printed: the page, with ?token=
    token: str = ""

    def page_url(self, route: str = "") -> str:
        """The page at `route` (`#/fleets/...`), opened with the token as the printed address
        carries it."""
        return f"{self.base_url}/?token={self.token}{route}"

    def cli(self, *args: str) -> str:
        return run_cli(self.env, *args)

    def cli_json(self, *args: str) -> Any:
        return json.loads(self.cli("--json", *args))

    def api(self, path: str) -> Any:
        request = urllib.request.Request(
            self.base_url + path,
            headers={"X-Fleet-Id": str(self.fleet_id), "Authorization": f"Bearer {self.token}"},
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.load(response)

    @property
    def dashboard_url(self) -> str:
        return self.page_url(f"#/fleets/{self.fleet_id}/agents")


def _wait_for_server(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + SERVER_START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"cafleet server exited early:\n{log.read_text(errors='replace')}")
        try:
            with urllib.request.urlopen(url + "/api/fleets", timeout=2):
                return
        except urllib.error.HTTPError:
            return  # it answers (e.g. 401 without a token)
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            time.sleep(0.1)
    pytest.fail(f"cafleet server did not answer:\n{log.read_text(errors='replace')}")


def _start_server(
    argv: list[str], env: Mapping[str, str], log: Path
) -> tuple[subprocess.Popen[bytes], str]:
    """Runs a server command (with `{port}` filled in) and waits until /api answers."""
    port = free_port()
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [arg.replace("{port}", str(port)) for arg in argv],
            env=dict(env),
            stdout=sink,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
    base_url = f"http://127.0.0.1:{port}"
    try:
        _wait_for_server(base_url, process, log)
    except BaseException:
        _stop(process)
        raise
    return process, base_url


def _stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)


@pytest.fixture(scope="module")
def web_fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebFleet]:
    """A database with one fleet (Director in a private tmux pane, two demo-agent members)
    and `cafleet server` listening on a free loopback port."""
    if chromium_path() is None:
        pytest.skip("chromium is not installed (apt-get install chromium)")
    tmux_binary = require_tmux()
    pytest.importorskip("playwright.sync_api")

    root = tmp_path_factory.mktemp("webui")
    home = root / "home"
    home.mkdir()
    runtime = root / "run"
    runtime.mkdir(mode=0o700)
    env = clean_environment(
        HOME=str(home),
        CAFLEET_DATABASE_URL=f"sqlite:///{root / 'cafleet.db'}",
        XDG_RUNTIME_DIR=str(runtime),
        CAFLEET_SUBMIT_DELAY_CUSTOM="0.1",
    )
    server: subprocess.Popen[bytes] | None = None
    with private_tmux(tmux_binary, "cafleet-web", (200, 50)) as tmux:
        try:
            pane_env = dict(env, **tmux.env)
            run_cli(env, "setup", "db")
            # team commands need the skills install
            run_cli(env, "setup", "skill", "--agent", "claude", check=False)
            made = json.loads(run_cli(pane_env, "--json", "fleet", "create", "--name", FLEET_NAME))
            fleet = WebFleet(
                base_url="",
                env=pane_env,
                fleet_id=made["fleet_id"],
                fleet_name=FLEET_NAME,
                director=made["director"]["agent_id"],
                admin=made["administrator_agent_id"],
            )
            agent_command = shlex.join([sys.executable, "-m", "cafleet.demo.agent"])
            for member, description in (
                ("coder", "Writes code"),
                ("Code Reviewer", "Reviews code"),
            ):
                created = fleet.cli_json(
                    "member", "create",
                    "--fleet-id", str(fleet.fleet_id),
                    "--agent-id", str(fleet.director),
                    "--name", member,
                    "--description", description,
                    "--coding-agent", "custom",
                    "--agent-command", agent_command,
                    "--text", f"You are {member}.",
                )  # fmt: skip
                fleet.members[member] = created["agent_id"]

            argv = [*CAFLEET, "server", "--host", "127.0.0.1", "--port", "{port}"]
            server, fleet.base_url = _start_server(argv, env, root / "server.log")
            printed = PRINTED_ADDRESS.search((root / "server.log").read_text(errors="replace"))
            assert printed, (root / "server.log").read_text(errors="replace")
            fleet.printed_url, fleet.token = (
                printed.group(0).removeprefix(PRINTED),
                printed.group(1),
            )
            yield fleet
        finally:
            if server is not None:
                _stop(server)


@pytest.fixture(scope="module")
def playwright_driver(web_fleet: WebFleet) -> Iterator[Playwright]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as driver:
        yield driver


@dataclass
class BrowserPage:
    page: Page
    console_errors: list[str]
    allowed: re.Pattern[str] | None = None
    blocked: list[str] = field(default_factory=list)  # requests beyond loopback (offline)

    def unexpected_errors(self) -> list[str]:
        allowed = self.allowed
        return [e for e in self.console_errors if allowed is None or not allowed.search(e)]


@pytest.fixture
def open_page(
    playwright_driver: Playwright, tmp_path: Path
) -> Iterator[Callable[..., BrowserPage]]:
    """Opens Chromium with a fresh profile; fails the test on any console or page error."""
    contexts: list[Any] = []
    opened: list[BrowserPage] = []

    def open_(
        url: str,
        *,
        color_scheme: str = "light",
        allow_errors: str | None = None,
        width: int = 1360,
        offline: bool = False,
    ) -> BrowserPage:
        """allow_errors: a regex of console errors the test expects (e.g. a 404 it provokes).
        offline: every request beyond loopback is aborted and recorded in `blocked`."""
        profile = tmp_path / f"profile-{len(contexts)}"
        context = playwright_driver.chromium.launch_persistent_context(
            str(profile),
            executable_path=chromium_path(),
            headless=True,
            args=CHROMIUM_FLAGS,
            viewport={"width": width, "height": 820},
            color_scheme=color_scheme,  # type: ignore[arg-type]
        )
        context.set_default_timeout(10_000)
        contexts.append(context)
        page = context.pages[0] if context.pages else context.new_page()
        errors: list[str] = []
        page.on(
            "console",
            lambda message: errors.append(message.text) if message.type == "error" else None,
        )
        page.on("pageerror", lambda error: errors.append(str(error)))
        browser_page = BrowserPage(page, errors, re.compile(allow_errors) if allow_errors else None)
        if offline:

            def beyond_loopback(route: Any) -> None:
                browser_page.blocked.append(route.request.url)
                route.abort("internetdisconnected")

            context.route(re.compile(r"^(?!https?://127\.0\.0\.1[:/])"), beyond_loopback)
        page.goto(url)
        opened.append(browser_page)
        return browser_page

    yield open_
    for context in contexts:
        context.close()
    for browser_page in opened:
        assert browser_page.unexpected_errors() == []

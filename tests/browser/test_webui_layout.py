"""The WebUI at a phone's width and a desktop's, clock times and day separators in the
timeline, and the API reference at /docs with the network beyond loopback cut off.

Set CAFLEET_SCREENSHOTS=1 to keep the two layout screenshots as docs/webui-420.png and
docs/webui-1400.png.
"""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.tmux, pytest.mark.slow]

# The fixtures' classes live in conftest.py, which test modules never import.
WebFleet = Any
OpenPage = Callable[..., Any]

DOCS = Path(__file__).resolve().parents[2] / "docs"
EARLIER = "The plan: split the login form into two steps."
LATER = "Status: the first step is merged."


def expect(target: Any) -> Any:
    from playwright.sync_api import expect as playwright_expect

    playwright_expect.set_options(timeout=10_000)
    return playwright_expect(target)


@pytest.fixture(scope="module")
def two_days(web_fleet: WebFleet) -> None:
    """Two messages, the first moved two days back in the database itself."""
    coder, director = web_fleet.members["coder"], web_fleet.director
    for sender, to, text in ((director, coder, EARLIER), (coder, director, LATER)):
        web_fleet.cli(
            "message", "send",
            "--fleet-id", str(web_fleet.fleet_id),
            "--agent-id", str(sender),
            "--to", str(to),
            "--text", text,
        )  # fmt: skip
    earlier = (datetime.now(UTC) - timedelta(days=2)).isoformat(timespec="microseconds")
    database = web_fleet.env["CAFLEET_DATABASE_URL"].removeprefix("sqlite:///")
    with sqlite3.connect(database) as conn:
        moved = conn.execute(
            "UPDATE tasks SET created_at = ? WHERE text = ?",
            (earlier, EARLIER),
        ).rowcount
    assert moved == 1


@pytest.mark.parametrize("width", [420, 1400])
def test_the_dashboard_fits_its_width_with_clock_times_and_day_separators(
    web_fleet: WebFleet, open_page: OpenPage, two_days: None, tmp_path: Path, width: int
) -> None:
    page = open_page(web_fleet.dashboard_url, width=width).page
    later = page.locator(".entry").filter(has_text=LATER)
    expect(later).to_be_visible()
    expect(page.locator(".entry").filter(has_text=EARLIER)).to_be_visible()

    assert page.evaluate("document.documentElement.scrollWidth") <= width
    header = page.locator(".topbar")
    for control in ("Refresh", "Switch to dark theme"):
        box = header.get_by_role("button", name=control).bounding_box()
        assert box is not None and box["x"] + box["width"] <= width, control
    times = page.locator(".entry .entry-time").all_inner_texts()
    assert times and all(re.fullmatch(r"\d\d:\d\d", t) for t in times), times
    expect(later.locator(".entry-time")).to_have_attribute("title", re.compile(r"ago · "))
    separators = page.locator(".day-separator").all_inner_texts()
    assert len(separators) >= 2, separators
    assert separators[-1] == "Today"
    order = page.locator(".day-separator, .entry").evaluate_all(
        "items => items.map(i => i.classList.contains('day-separator') ? 'day' : i.innerText)"
    )
    today = max(i for i, item in enumerate(order) if item == "day")
    assert any(EARLIER in item for item in order[:today])
    assert any(LATER in item for item in order[today:])

    page.mouse.move(0, 0)
    shot = tmp_path / f"webui-{width}.png"
    page.screenshot(path=str(shot))
    assert shot.stat().st_size > 10_000
    if os.environ.get("CAFLEET_SCREENSHOTS") == "1":
        shutil.copyfile(shot, DOCS / shot.name)


def test_the_api_reference_renders_offline(web_fleet: WebFleet, open_page: OpenPage) -> None:
    opened = open_page(
        f"{web_fleet.base_url}/docs", offline=True, allow_errors="ERR_INTERNET_DISCONNECTED"
    )
    paths = opened.page.locator(".opblock-summary-path")
    expect(paths.first).to_be_visible()

    shown = set(paths.all_inner_texts())
    assert {"/api/fleets", "/api/timeline", "/api/messages/send"} <= {
        p.replace("\u200b", "") for p in shown
    }
    assert opened.blocked == []
    # the cut is real: a request beyond loopback is refused and recorded
    probe = "https://cdn.jsdelivr.net/npm/swagger-ui-dist@5/swagger-ui.css"
    assert opened.page.evaluate(f"fetch('{probe}').then(() => 'got', () => 'refused')") == (
        "refused"
    )
    assert opened.blocked == [probe]

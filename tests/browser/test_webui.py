"""The admin WebUI in a real browser against a real `cafleet server`.

Set CAFLEET_WEBUI_SCREENSHOT=<path.png> to also keep the dashboard screenshot taken by
test_dashboard_screenshot (docs/webui-dashboard.png is made that way).
"""

from __future__ import annotations

import os
import re
import shutil
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.tmux, pytest.mark.slow]

# The fixtures' classes live in conftest.py, which test modules never import.
WebFleet = Any
OpenPage = Callable[..., Any]


def expect(target: Any) -> Any:
    from playwright.sync_api import expect as playwright_expect

    playwright_expect.set_options(timeout=10_000)
    return playwright_expect(target)


SERVER_ERROR = r"^Failed to load resource: .* 500 \(Internal Server Error\)$"


def unique(label: str) -> str:
    return f"{label} {uuid.uuid4().hex[:8]}"


def inbox_with(fleet: WebFleet, agent_id: int, body: str) -> list[dict[str, Any]]:
    messages = fleet.api(f"/api/agents/{agent_id}/inbox")["messages"]
    return [m for m in messages if m["body"] == body]


def send_from_composer(page: Any, text: str) -> None:
    box = page.get_by_role("textbox", name="Message")
    box.fill(text)
    box.press("Enter")
    expect(box).to_have_value("")


def test_fleet_picker_opens_the_dashboard(web_fleet: WebFleet, open_page: OpenPage) -> None:
    page = open_page(web_fleet.page_url()).page
    expect(page).to_have_url(re.compile(r"#/fleets$"))
    expect(page.get_by_role("heading", name="Select a Fleet")).to_be_visible()
    card = page.get_by_test_id("fleet-card").filter(has_text=web_fleet.fleet_name)
    expect(card).to_contain_text(f"#{web_fleet.fleet_id}")
    expect(card).to_contain_text(re.compile(r"4 agents · created \w{3} \d{1,2}, \d{4}"))

    card.click()
    expect(page).to_have_url(re.compile(rf"#/fleets/{web_fleet.fleet_id}/agents$"))
    crumbs = page.get_by_role("navigation", name="Breadcrumb")
    expect(crumbs).to_have_text(f"Fleets/{web_fleet.fleet_name}")
    expect(page.get_by_text("Sending as Administrator")).to_be_visible()
    pill = page.get_by_test_id("monitor-pill")
    expect(pill).to_have_text("Monitor stopped")
    expect(pill).to_have_attribute(
        "title",
        "No cafleet monitor running — start it with"
        f" 'cafleet monitor start --fleet-id {web_fleet.fleet_id}'",
    )
    expect(page.get_by_test_id("live-indicator")).to_have_attribute("data-connected", "true")

    agents = page.get_by_role("navigation", name="Agents")
    admin_row = agents.locator(f'[data-agent-id="{web_fleet.admin}"]')
    expect(admin_row).to_contain_text("Administrator")
    expect(admin_row.locator(".badge-admin")).to_have_text("Admin")
    director_row = agents.locator(f'[data-agent-id="{web_fleet.director}"]')
    expect(director_row.locator(".avatar")).to_have_text("DI")
    reviewer = agents.locator(f'[data-agent-id="{web_fleet.members["Code Reviewer"]}"]')
    expect(reviewer.locator(".avatar")).to_have_text("CR")
    expect(reviewer.locator(".badge-monitor")).to_have_text("monitoring on")


def test_fleet_picker_error_and_empty_states(web_fleet: WebFleet, open_page: OpenPage) -> None:
    page = open_page(web_fleet.page_url("#/fleets"), allow_errors=SERVER_ERROR).page
    expect(page.get_by_test_id("fleet-card").first).to_be_visible()

    page.route("**/api/fleets*", lambda route: route.fulfill(status=500, json={"detail": "x"}))
    page.reload()
    expect(page.get_by_role("alert")).to_contain_text("Failed to load fleets")

    page.unroute("**/api/fleets*")
    page.route("**/api/fleets*", lambda route: route.fulfill(status=200, json=[]))
    page.get_by_role("button", name="Retry").click()
    expect(page.get_by_text("No fleets found.")).to_be_visible()
    expect(page.locator("main code")).to_contain_text("cafleet fleet create")


def test_unknown_fleet_returns_to_the_picker(web_fleet: WebFleet, open_page: OpenPage) -> None:
    # the browser itself logs the API's 404 answers
    page = open_page(
        web_fleet.page_url("#/fleets/987654/agents"),
        allow_errors=r"^Failed to load resource: .* 404 \(Not Found\)$",
    ).page
    expect(page).to_have_url(re.compile(r"#/fleets$"))
    expect(page.get_by_role("heading", name="Select a Fleet")).to_be_visible()


def test_send_to_one_agent(web_fleet: WebFleet, open_page: OpenPage) -> None:
    page = open_page(web_fleet.dashboard_url).page
    coder = web_fleet.members["coder"]
    box = page.get_by_role("textbox", name="Message")

    box.press_sequentially("@co")
    options = page.get_by_role("option")
    expect(options).to_have_count(2)
    expect(options.nth(0)).to_contain_text("@coder")
    box.press("ArrowDown")
    expect(options.nth(1)).to_have_attribute("aria-selected", "true")
    box.press("ArrowUp")
    box.press("Tab")
    expect(box).to_have_value("@coder ")
    expect(options).to_have_count(0)

    body = unique("please review")
    box.press_sequentially(body)
    box.press("Enter")
    expect(box).to_have_value("")

    entry = page.locator(".entry").filter(has_text=body)
    expect(entry).to_contain_text("@coder")
    # the demo agent acknowledges the preview it was sent: the ack shows up by itself
    ack = entry.locator(".chip.ack")
    expect(ack).to_have_text("[ack]", timeout=20_000)
    expect(ack).to_have_attribute("title", re.compile(r"^@coder — \d{4}-\d\d-\d\dT"))

    stored = inbox_with(web_fleet, coder, body)
    assert len(stored) == 1
    assert stored[0]["from_agent_id"] == web_fleet.admin
    shown = web_fleet.cli_json(
        "message", "show",
        "--fleet-id", str(web_fleet.fleet_id),
        "--agent-id", str(coder),
        "--task-id", str(stored[0]["task_id"]),
        "--full",
    )  # fmt: skip
    assert shown["task"]["text"] == body
    assert shown["task"]["to_agent_id"] == coder


def test_broadcast_to_all(web_fleet: WebFleet, open_page: OpenPage) -> None:
    page = open_page(web_fleet.dashboard_url).page
    body = unique("standup in 5")
    send_from_composer(page, f"@all {body}")

    entry = page.locator(".entry").filter(has_text=body)
    expect(entry.locator(".chip.mention")).to_have_text(["@Director", "@coder", "@Code Reviewer"])
    # the Director's pane runs a shell, so its preview is skipped and marked
    director_chip = entry.locator(".recipient").filter(has_text="@Director")
    marker = director_chip.locator(".not-delivered")
    expect(marker).to_have_text("not delivered", timeout=15_000)
    expect(marker).to_have_attribute("title", re.compile(r"^not-agent:"))

    for member in web_fleet.members.values():
        assert len(inbox_with(web_fleet, member, body)) == 1
    polled = web_fleet.cli_json(
        "message", "poll",
        "--fleet-id", str(web_fleet.fleet_id),
        "--agent-id", str(web_fleet.director),
    )  # fmt: skip
    assert [m["text"] for m in polled if m["text"] == body] == [body]
    assert inbox_with(web_fleet, web_fleet.admin, body) == []


def test_composer_validation(web_fleet: WebFleet, open_page: OpenPage) -> None:
    page = open_page(web_fleet.dashboard_url).page
    box = page.get_by_role("textbox", name="Message")
    expect(box).to_have_attribute("placeholder", "@agent or @all message...")
    expect(page.get_by_text("Enter to send · Shift+Enter newline")).to_be_visible()
    error = page.locator("#composer-error")
    cases = {
        "hello there": "Start the message with @<agent> or @all",
        "@nobody hi": "No active agent named '@nobody'",
        "@coder   ": "Message body is empty",
        "@coder @director hi": (
            "Multi-recipient unicast not supported in first cut; use @all for broadcast"
        ),
        "@administrator hi": "No active agent named '@administrator'",
    }
    for text, message in cases.items():
        box.fill(text)
        box.press("End")
        box.press("Enter")
        expect(error).to_have_text(message)

    box.fill("")
    box.press_sequentially("@")
    options = page.get_by_role("option")
    expect(options).to_have_count(4)
    expect(options.first).to_contain_text("@all")
    expect(page.get_by_role("listbox")).not_to_contain_text("administrator")
    box.press("Escape")
    expect(options).to_have_count(0)
    box.press_sequentially("adm")
    expect(options).to_have_count(0)


def test_agent_drawer_monitoring(web_fleet: WebFleet, open_page: OpenPage) -> None:
    page = open_page(web_fleet.dashboard_url, allow_errors=SERVER_ERROR).page
    coder = web_fleet.members["coder"]
    page.get_by_role("navigation", name="Agents").locator(f'[data-agent-id="{coder}"]').click()
    expect(page).to_have_url(re.compile(rf"#/fleets/{web_fleet.fleet_id}/agents/{coder}$"))
    drawer = page.get_by_test_id("agent-drawer")
    expect(drawer.get_by_role("heading", name="coder")).to_be_visible()
    expect(drawer).to_contain_text("Active")
    expect(drawer).to_contain_text("Writes code")
    expect(drawer).to_contain_text("Last ping:")

    interval = drawer.get_by_label("Interval (s)")
    expect(interval).to_have_value("720")
    interval.fill("0")
    drawer.get_by_role("button", name="Save").click()
    expect(drawer.get_by_role("alert")).to_have_text("Interval must be a whole number ≥ 1.")

    interval.fill("90")
    drawer.get_by_role("button", name="Save").click()
    expect(drawer.get_by_text("Interval saved.")).to_be_visible()
    config_args = (
        "monitor", "config", "--fleet-id", str(web_fleet.fleet_id), "--member-id", str(coder)
    )  # fmt: skip
    assert web_fleet.cli_json(*config_args)["interval_seconds"] == 90

    drawer.get_by_role("button", name="Disable").click()
    expect(drawer.locator(".section-head .badge")).to_have_text("Disabled")
    assert web_fleet.cli_json(*config_args)["enabled"] is False
    sidebar_badge = page.locator(f'.sidebar [data-agent-id="{coder}"] .badge-monitor')
    expect(sidebar_badge).to_have_attribute("title", "Monitoring disabled")
    drawer.get_by_role("button", name="Enable").click()
    expect(drawer.locator(".section-head .badge")).to_have_text("Enabled")
    assert web_fleet.cli_json(*config_args) == {
        "agent_id": coder,
        "interval_seconds": 90,
        "last_ping_at": None,
        "enabled": True,
    }

    # a server error while saving or toggling shows the drawer's own messages
    page.route(
        "**/api/agents/*/monitor",
        lambda route: (
            route.fulfill(status=500, json={"detail": "boom"})
            if route.request.method == "PATCH"
            else route.fallback()
        ),
    )
    interval.fill("45")
    drawer.get_by_role("button", name="Save").click()
    expect(drawer.get_by_role("alert")).to_have_text("Failed to update interval.")
    drawer.get_by_role("button", name="Disable").click()
    expect(drawer.get_by_role("alert")).to_have_text("Failed to toggle monitoring.")
    page.unroute("**/api/agents/*/monitor")
    assert web_fleet.cli_json(*config_args)["interval_seconds"] == 90

    expect(drawer.get_by_role("tab", name=re.compile("Inbox"))).to_have_attribute(
        "aria-selected", "true"
    )
    drawer.get_by_role("tab", name=re.compile("Sent")).click()
    expect(drawer.get_by_role("tabpanel")).to_be_visible()
    page.keyboard.press("Escape")
    expect(drawer).to_have_count(0)
    expect(page).to_have_url(re.compile(rf"#/fleets/{web_fleet.fleet_id}/agents$"))


def test_members_show_their_agent_status(web_fleet: WebFleet, open_page: OpenPage) -> None:
    page = open_page(web_fleet.dashboard_url).page
    sidebar = page.get_by_role("navigation", name="Agents")
    coder = web_fleet.members["coder"]
    # the demo agent is a custom command, which tells nothing about itself: unknown
    badge = sidebar.locator(f'[data-agent-id="{coder}"] .badge-agent')
    expect(badge).to_have_attribute("data-agent-status", "unknown")
    expect(badge).to_contain_text("unknown")
    director = sidebar.locator(f'[data-agent-id="{web_fleet.director}"]')
    expect(director.locator(".badge-agent")).to_have_count(0)

    sidebar.locator(f'[data-agent-id="{coder}"]').click()
    drawer = page.get_by_test_id("agent-drawer")
    expect(drawer.locator(".drawer-badges .badge-agent")).to_contain_text("unknown")


def test_deleted_fleet_is_read_only(web_fleet: WebFleet, open_page: OpenPage) -> None:
    made = web_fleet.cli_json("fleet", "create", "--name", "retired")
    fleet_id = made["fleet_id"]
    body = unique("last words")
    web_fleet.cli(
        "message", "send",
        "--fleet-id", str(fleet_id),
        "--agent-id", str(made["director"]["agent_id"]),
        "--to", str(made["administrator_agent_id"]),
        "--text", body,
    )  # fmt: skip
    web_fleet.cli("fleet", "delete", "--fleet-id", str(fleet_id))

    page = open_page(web_fleet.page_url("#/fleets")).page
    deleted = page.get_by_role("region", name="Deleted fleets")
    card = deleted.get_by_test_id("deleted-fleet-card").filter(has_text=f"#{fleet_id}")
    expect(card).to_contain_text("retired")
    expect(card).to_contain_text(re.compile(r"deleted \w{3} \d{1,2}, \d{4}"))
    live = page.get_by_test_id("fleet-card").filter(has_text=web_fleet.fleet_name)
    expect(live).to_be_visible()
    expect(deleted.get_by_test_id("fleet-card")).to_have_count(0)

    card.click()
    expect(page).to_have_url(re.compile(rf"#/fleets/{fleet_id}/agents$"))
    entry = page.locator(".entry").filter(has_text=body)
    expect(entry).to_be_visible()
    expect(entry.locator(".not-delivered")).to_have_attribute("title", "no-placement")
    box = page.get_by_role("textbox", name="Message")
    expect(box).to_be_disabled()
    expect(box).to_have_attribute("placeholder", "Fleet deleted — its history is read-only")
    expect(page.get_by_test_id("read-only-note")).to_contain_text("nothing can be sent")
    expect(page.get_by_text("Sending as")).to_have_count(0)
    agents = page.get_by_role("navigation", name="Agents")
    expect(agents.locator(".agent-row.is-deregistered")).to_have_count(2)

    agents.locator(f'[data-agent-id="{made["director"]["agent_id"]}"]').click()
    drawer = page.get_by_test_id("agent-drawer")
    expect(drawer).to_contain_text(
        "Fleet deleted — its history is read-only; its monitoring ended."
    )
    expect(drawer.get_by_role("button", name=re.compile("Enable|Disable"))).to_have_count(0)


def test_cli_message_appears_without_reload(web_fleet: WebFleet, open_page: OpenPage) -> None:
    page = open_page(web_fleet.dashboard_url).page
    expect(page.get_by_test_id("live-indicator")).to_have_attribute("data-connected", "true")
    page.evaluate("window.__sameDocument = true")
    body = unique("hello from the CLI")
    web_fleet.cli(
        "message", "send",
        "--fleet-id", str(web_fleet.fleet_id),
        "--agent-id", str(web_fleet.members["coder"]),
        "--to", str(web_fleet.director),
        "--text", body,
    )  # fmt: skip
    entry = page.locator(".entry").filter(has_text=body)
    expect(entry).to_be_visible(timeout=4_000)  # the event stream, not the 5 s poll
    expect(entry.locator(".entry-from")).to_have_text("coder")
    assert page.evaluate("window.__sameDocument") is True


def test_theme_toggle_persists(web_fleet: WebFleet, open_page: OpenPage) -> None:
    page = open_page(web_fleet.page_url(), color_scheme="dark").page
    html = page.locator("html")
    expect(html).to_have_attribute("data-theme", "dark")
    page.get_by_role("button", name="Switch to light theme").click()
    expect(html).to_have_attribute("data-theme", "light")
    assert page.evaluate("localStorage.getItem('cafleet-admin-theme')") == "light"
    page.reload(wait_until="commit")
    page.wait_for_selector("html[data-theme]", state="attached")
    assert page.evaluate("document.documentElement.dataset.theme") == "light"


def test_dashboard_screenshot(web_fleet: WebFleet, open_page: OpenPage, tmp_path: Path) -> None:
    """A small conversation, then a picture of the dashboard with the drawer open."""
    coder, reviewer = web_fleet.members["coder"], web_fleet.members["Code Reviewer"]
    for to, text in (
        (coder, "ping 1"),
        (reviewer, "Please review PR #12 once coder has pushed the fix."),
    ):
        web_fleet.cli(
            "message", "send",
            "--fleet-id", str(web_fleet.fleet_id),
            "--agent-id", str(web_fleet.director),
            "--to", str(to),
            "--text", text,
        )  # fmt: skip
    page = open_page(web_fleet.dashboard_url).page
    send_from_composer(page, "@all Stand-up in 5 minutes: post your status.")
    stand_up = page.locator(".entry").filter(has_text="Stand-up in 5 minutes")
    expect(stand_up.locator(".chip.ack")).to_have_count(2, timeout=20_000)
    expect(page.locator(".entry").filter(has_text="pong 1")).to_be_visible(timeout=20_000)
    page.locator(f'.sidebar [data-agent-id="{coder}"]').click()
    drawer = page.get_by_test_id("agent-drawer")
    expect(drawer.locator(".message-row").first).to_be_visible()
    expect(drawer.get_by_test_id("live-pane")).to_contain_text("You are coder.")
    page.mouse.move(0, 0)
    shot = tmp_path / "dashboard.png"
    page.screenshot(path=str(shot))
    assert shot.stat().st_size > 10_000
    keep = os.environ.get("CAFLEET_WEBUI_SCREENSHOT")
    if keep:
        shutil.copyfile(shot, keep)


def test_the_printed_address_opens_the_page_and_leaves_the_address_bar(
    web_fleet: WebFleet, open_page: OpenPage
) -> None:
    page = open_page(web_fleet.printed_url).page

    expect(page.get_by_test_id("fleet-card").first).to_be_visible()
    expect(page.get_by_role("dialog", name="Access token required")).to_have_count(0)
    expect(page).to_have_url(re.compile(r"^http://127\.0\.0\.1:\d+/#/fleets$"))
    assert web_fleet.token not in page.url
    assert page.evaluate("sessionStorage.getItem('cafleet-admin-token')") == web_fleet.token
    page.get_by_test_id("fleet-card").filter(has_text=web_fleet.fleet_name).click()
    expect(page.get_by_test_id("live-indicator")).to_have_attribute("data-connected", "true")
    # an @name resolves against the roster: wait until it is listed
    expect(page.locator("[data-agent-id]").filter(has_text="coder").first).to_be_visible()
    body = unique("through the printed address")
    send_from_composer(page, f"@coder {body}")
    expect(page.locator(".entry", has_text=body)).to_be_visible()
    assert len(inbox_with(web_fleet, web_fleet.members["coder"], body)) == 1


def test_token_is_asked_once_per_session(web_fleet: WebFleet, open_page: OpenPage) -> None:
    # opened without ?token=; the browser logs each 401 the API answers before the token is known
    opened = open_page(
        web_fleet.base_url + "/",
        allow_errors=r"^Failed to load resource: .* 401 \(Unauthorized\)$",
    )
    page = opened.page
    dialog = page.get_by_role("dialog", name="Access token required")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("The admin WebUI always needs its access token.")
    dialog.get_by_label("Access token").fill("wrong-token-wrong-token")
    dialog.get_by_role("button", name="Continue").click()
    expect(dialog.get_by_role("alert")).to_have_text("That token was not accepted.")
    dialog.get_by_label("Access token").fill(web_fleet.token)
    dialog.get_by_role("button", name="Continue").click()
    expect(dialog).to_have_count(0)
    expect(page.get_by_test_id("fleet-card").first).to_be_visible()
    stored = page.evaluate("sessionStorage.getItem('cafleet-admin-token')")
    assert stored == web_fleet.token

    asked = len(opened.console_errors)
    page.get_by_test_id("fleet-card").first.click()
    expect(page.get_by_test_id("live-indicator")).to_have_attribute("data-connected", "true")
    page.reload()
    expect(page.get_by_role("navigation", name="Agents")).to_contain_text("coder")
    expect(dialog).to_have_count(0)
    assert len(opened.console_errors) == asked

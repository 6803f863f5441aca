"""Live panes, the grid, search and replies in a real browser against a real `cafleet server`.

Text is typed into a member's tmux pane with `tmux send-keys`; the page must show it through
the event stream. Set CAFLEET_SCREENSHOTS=1 to keep docs/webui-drawer-live.png,
docs/webui-grid.png and docs/webui-search.png.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.tmux, pytest.mark.slow]

# The fixtures' classes live in conftest.py, which test modules never import.
WebFleet = Any
OpenPage = Callable[..., Any]

DOCS = Path(__file__).resolve().parents[2] / "docs"
LIVE_WITHIN_MS = 2_000  # typed into the pane -> shown in the drawer
# coloured output the demo agents print with their `!<cmd>` (the screen cleared first), so the
# panes show colours as a terminal does
CLEAR = r"\033[H\033[2J\033[3J"
TEST_RUN = (
    rf"!printf '{CLEAR}\033[1;34m$ make test\033[0m\n\033[32m✓\033[0m auth: 12 passed"
    r"\n\033[32m✓\033[0m api: 31 passed\n\033[33m!\033[0m \033[2mslow: login flow 2.4s\033[0m"
    r"\n\033[38;5;208mcoverage 87%%\033[0m \033[7m done \033[0m\n'"
)
REVIEW = (
    rf"!printf '{CLEAR}\033[1;34m$ git diff --stat main\033[0m\n src/login.ts | 14"
    r" \033[32m+++++++++\033[31m-----\033[0m\n src/api.ts   |  3 \033[32m++\033[31m-\033[0m"
    r"\n\033[3mreview:\033[0m \033[38;2;120;160;255mPR #12\033[0m \033[4mapproved\033[0m\n'"
)
CONVERSATION = (
    ("Director", "Code Reviewer", "Please review PR #12 once coder has pushed the fix to staging."),
    ("coder", "Director", "Pushed the login fix to staging; all tests pass."),
    ("Code Reviewer", "Director", "Reviewing PR #12 on staging now."),
)


def expect(target: Any) -> Any:
    from playwright.sync_api import expect as playwright_expect

    playwright_expect.set_options(timeout=10_000)
    return playwright_expect(target)


def unique(label: str) -> str:
    return f"{label}{uuid.uuid4().hex[:8]}"


def tmux_socket(fleet: WebFleet) -> str:
    return str(fleet.env["TMUX"]).split(",", 1)[0]


def pane_of(fleet: WebFleet, agent_id: int) -> str:
    shown = fleet.cli_json(
        "member", "show", "--fleet-id", str(fleet.fleet_id), "--member-id", str(agent_id)
    )
    pane = shown["placement"]["mux_pane_id"]
    assert isinstance(pane, str) and pane.startswith("%"), shown
    return pane


def send_keys(fleet: WebFleet, agent_id: int, *keys: str, literal: bool = False) -> None:
    """`tmux send-keys` into the agent's pane on the fleet's private tmux server."""
    flags = ["-l"] if literal else []
    target = ["-t", pane_of(fleet, agent_id)]
    subprocess.run(
        ["tmux", "-S", tmux_socket(fleet), "send-keys", *target, *flags, *keys],
        check=True,
        capture_output=True,
        timeout=10,
    )


def run_in_pane(fleet: WebFleet, agent_id: int, command: str) -> None:
    """Types `!<cmd>` and Enter into a demo agent, which runs it and prints its output."""
    send_keys(fleet, agent_id, command, literal=True)
    send_keys(fleet, agent_id, "Enter")


@pytest.fixture(scope="module", autouse=True)
def conversation(web_fleet: WebFleet) -> None:
    """A few messages, so the timeline and the search have something to show."""
    ids = {"Director": web_fleet.director, **web_fleet.members}
    for sender, recipient, text in CONVERSATION:
        web_fleet.cli(
            "message", "send",
            "--fleet-id", str(web_fleet.fleet_id),
            "--agent-id", str(ids[sender]),
            "--to", str(ids[recipient]),
            "--text", text,
        )  # fmt: skip


def keep(shot: Path, name: str) -> None:
    assert shot.stat().st_size > 10_000
    if os.environ.get("CAFLEET_SCREENSHOTS") == "1":
        shutil.copyfile(shot, DOCS / name)


def test_the_drawer_shows_what_is_typed_into_the_members_pane(
    web_fleet: WebFleet, open_page: OpenPage, tmp_path: Path
) -> None:
    coder = web_fleet.members["coder"]
    page = open_page(web_fleet.page_url(f"#/fleets/{web_fleet.fleet_id}/agents/{coder}")).page
    drawer = page.get_by_test_id("agent-drawer")
    expect(drawer.get_by_test_id("coding-agent")).to_have_text("custom")
    expect(drawer.get_by_test_id("unread")).to_have_text(re.compile(r"^\d+$"))
    screen = drawer.get_by_test_id("live-pane")
    expect(screen).to_contain_text("You are coder.")  # the demo agent's first line

    typed = unique("typed-live-")
    send_keys(web_fleet, coder, typed, literal=True)
    try:
        expect(screen).to_contain_text(typed, timeout=LIVE_WITHIN_MS)
    finally:
        send_keys(web_fleet, coder, "C-u")  # clear the demo agent's composer again

    run_in_pane(web_fleet, coder, TEST_RUN)
    expect(screen).not_to_contain_text("You are coder.")  # the output cleared the screen
    expect(screen).to_contain_text("coverage 87%")
    expect(screen.locator("span.ansi-fg-2").first).to_have_text("✓")
    expect(screen.locator("span.ansi-bold.ansi-fg-4")).to_have_text("$ make test")
    assert "\x1b" not in screen.inner_text()

    # closing the drawer ends the watch: the stream reconnects without it
    with page.expect_request(re.compile(r"/api/events\?fleet_id=\d+$")):
        page.keyboard.press("Escape")
    expect(drawer).to_have_count(0)

    page.get_by_role("navigation", name="Agents").locator(f'[data-agent-id="{coder}"]').click()
    expect(screen).to_contain_text("coverage 87%")
    page.mouse.move(0, 0)
    shot = tmp_path / "drawer.png"
    page.screenshot(path=str(shot))
    keep(shot, "webui-drawer-live.png")


def test_the_grid_shows_every_member_and_opens_a_drawer(
    web_fleet: WebFleet, open_page: OpenPage, tmp_path: Path
) -> None:
    page = open_page(web_fleet.dashboard_url, width=1400).page
    page.get_by_role("navigation", name="Views").get_by_role("link", name="Panes").click()
    expect(page).to_have_url(re.compile(rf"#/fleets/{web_fleet.fleet_id}/grid$"))

    tiles = page.get_by_test_id("grid-tile")
    expect(tiles).to_have_count(len(web_fleet.members))
    for name, agent_id in web_fleet.members.items():
        tile = page.locator(f'[data-testid="grid-tile"][data-agent-id="{agent_id}"]')
        expect(tile.locator(".tile-title")).to_have_text(
            re.compile(rf"^{re.escape(name)} · \w+ · \d+ unread$")
        )
        expect(tile.get_by_test_id("live-pane")).to_contain_text(re.compile(r"\S"))

    reviewer = web_fleet.members["Code Reviewer"]
    typed = unique("grid-live-")
    send_keys(web_fleet, reviewer, typed, literal=True)
    try:
        reviewer_tile = page.locator(f'[data-testid="grid-tile"][data-agent-id="{reviewer}"]')
        expect(reviewer_tile.get_by_test_id("live-pane")).to_contain_text(
            typed, timeout=LIVE_WITHIN_MS
        )
    finally:
        send_keys(web_fleet, reviewer, "C-u")
    run_in_pane(web_fleet, reviewer, REVIEW)
    reviewer_screen = reviewer_tile.get_by_test_id("live-pane")
    expect(reviewer_screen).to_contain_text("PR #12 approved")  # the output, not the command
    expect(reviewer_screen).not_to_contain_text("You are Code Reviewer.")  # cleared

    page.mouse.move(0, 0)
    shot = tmp_path / "grid.png"
    page.screenshot(path=str(shot))
    keep(shot, "webui-grid.png")

    reviewer_tile.click()
    expect(page).to_have_url(re.compile(rf"#/fleets/{web_fleet.fleet_id}/grid/{reviewer}$"))
    drawer = page.get_by_test_id("agent-drawer")
    expect(drawer.get_by_role("heading", name="Code Reviewer")).to_be_visible()
    expect(drawer.get_by_test_id("live-pane")).to_be_visible()
    expect(tiles).to_have_count(len(web_fleet.members))  # the grid stays beside the drawer


def test_search_finds_a_message_sent_from_the_cli(
    web_fleet: WebFleet, open_page: OpenPage, tmp_path: Path
) -> None:
    coder = web_fleet.members["coder"]
    word = unique("zebra")
    body = f"Deploy <i>{word}</i> to staging after the review"
    web_fleet.cli(
        "message", "send",
        "--fleet-id", str(web_fleet.fleet_id),
        "--agent-id", str(coder),
        "--to", str(web_fleet.director),
        "--text", body,
    )  # fmt: skip
    page = open_page(web_fleet.dashboard_url, width=1400).page
    page.get_by_role("searchbox", name="Search messages").fill(word)

    results = page.get_by_test_id("search-results")
    hit = results.locator(".search-hit").first
    expect(hit).to_be_visible()
    expect(results.locator(".search-hit")).to_have_count(1)
    expect(hit.locator("mark")).to_have_text(word)
    expect(hit.locator(".hit-head")).to_contain_text("coder → Director")
    expect(hit.locator(".hit-snippet")).to_contain_text(f"<i>{word}</i>")  # shown as text
    expect(hit.locator("i")).to_have_count(0)

    hit.click()
    entry = page.locator(".entry.is-focused")
    expect(entry).to_contain_text(body)
    expect(entry).to_be_in_viewport()
    expect(results).to_have_count(0)

    # a word of several messages: best first, each with its matched words marked
    page.get_by_role("searchbox", name="Search messages").fill("staging")
    expect(results.locator(".search-hit")).to_have_count(4)  # three above, and this one
    expect(results.locator("mark").first).to_have_text(re.compile("^staging$", re.I))
    page.mouse.move(0, 0)
    shot = tmp_path / "search.png"
    page.screenshot(path=str(shot))
    keep(shot, "webui-search.png")


def test_replying_to_a_message_the_administrator_received(
    web_fleet: WebFleet, open_page: OpenPage
) -> None:
    coder = web_fleet.members["coder"]
    question = unique("Which branch? ")
    sent = web_fleet.cli_json(
        "message", "send",
        "--fleet-id", str(web_fleet.fleet_id),
        "--agent-id", str(coder),
        "--to", str(web_fleet.admin),
        "--text", question,
    )  # fmt: skip
    task_id = sent["task"]["id"]
    page = open_page(web_fleet.dashboard_url).page

    page.locator(".entry").filter(has_text=question).get_by_role(
        "button", name=f"Reply to #{task_id}"
    ).click()
    chip = page.get_by_test_id("reply-chip")
    expect(chip).to_contain_text(f"replying to #{task_id}")
    box = page.get_by_role("textbox", name="Message")
    expect(box).to_have_value("@coder ")
    expect(box).to_be_focused()

    chip.get_by_role("button", name="Clear reply").click()
    expect(chip).to_have_count(0)
    page.locator(".entry").filter(has_text=question).get_by_role(
        "button", name=f"Reply to #{task_id}"
    ).click()
    answer = unique("main, please ")
    box.press_sequentially(answer)
    box.press("Enter")
    expect(box).to_have_value("")
    expect(chip).to_have_count(0)

    entry = page.locator(".entry").filter(has_text=answer)
    expect(entry.locator(".reply-ref")).to_have_text(f"re: #{task_id}")
    inbox = web_fleet.api(f"/api/agents/{coder}/inbox")["messages"]
    [stored] = [m for m in inbox if m["body"] == answer]
    assert stored["in_reply_to"] == task_id
    assert stored["thread_id"] == task_id
    assert stored["from_agent_id"] == web_fleet.admin

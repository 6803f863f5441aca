"""Pane titles on a real tmux server: `message send` titles the recipient's pane with its
name and unread count, `ack` brings the count down; the title lives in a pane option that a
program in the pane cannot overwrite (the border a spawn turns on shows it: panes/
test_panes_spawn.py)."""

from __future__ import annotations

import pytest
from tests.support.cli_messages import Messages

from cafleet.adapters.tmux.formats import BORDER_FORMAT


@pytest.fixture
def msg(cli, fleet):
    return Messages(cli, fleet)


def shown(tmux, pane_id: str, fmt: str) -> str:
    return tmux.run("display-message", "-p", "-t", pane_id, fmt).strip()


def pane_of(migrated, agent_id: int) -> str:
    row = migrated.row("SELECT mux_pane_id FROM agent_placements WHERE agent_id = ?", agent_id)
    return row["mux_pane_id"]


def test_mail_titles_the_recipients_pane_and_reading_it_counts_down(
    msg, fleet, add_member, migrated, tmux
):
    coder = add_member(fleet, "coder")
    pane = pane_of(migrated, coder)

    first = msg.send(fleet.director, coder, "one")
    msg.send(fleet.director, coder, "two")
    after_two = shown(tmux, pane, "#{@cafleet-title}|#{pane_title}")
    msg.ok("ack", coder, "--task-id", first)

    assert after_two == f"coder #{coder} · 2 unread|coder #{coder} · 2 unread"
    assert shown(tmux, pane, "#{@cafleet-title}") == f"coder #{coder} · 1 unread"


def test_a_program_renaming_its_pane_does_not_hide_the_title(
    msg, fleet, add_member, migrated, tmux
):
    coder = add_member(fleet, "coder")
    pane = pane_of(migrated, coder)
    msg.send(fleet.director, coder, "one")

    tmux.run("select-pane", "-t", pane, "-T", "something the agent set")  # as an OSC 2 would

    assert shown(tmux, pane, "#{@cafleet-title}") == f"coder #{coder} · 1 unread"
    tmux.run("set-option", "-w", "-t", pane, "pane-border-format", BORDER_FORMAT)
    assert shown(tmux, pane, "#{E:pane-border-format}").strip() == f"coder #{coder} · 1 unread"


def test_one_send_titles_every_recipient_of_a_broadcast(msg, fleet, add_member, migrated, tmux):
    members = {name: add_member(fleet, name) for name in ("a", "b", "c")}

    msg.ok("broadcast", fleet.director, "--text", "standup")

    for name, agent in members.items():
        title = shown(tmux, pane_of(migrated, agent), "#{@cafleet-title}")
        assert title == f"{name} #{agent} · 1 unread"


def test_a_message_to_an_agent_without_a_pane_titles_nothing(msg, fleet, add_member, tmux):
    loose = add_member(fleet, "loose", pane_id=None)

    msg.send(fleet.director, loose, "queued")

    titles = tmux.run("list-panes", "-a", "-F", "#{@cafleet-title}").split()
    assert titles == [] or all("loose" not in t for t in titles)

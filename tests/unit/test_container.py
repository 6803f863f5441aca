"""build_fake_container(): the dependency-injection wiring with every adapter faked."""

from __future__ import annotations

import pytest

from cafleet.adapters.fake.store import MemoryStore
from cafleet.application.members.registry import ListMode
from cafleet.composition.container import build_fake_container
from cafleet.domain.delivery import DeliveryState
from cafleet.domain.placement import CodingAgent, Multiplexer, PushTarget
from cafleet.settings import Settings


@pytest.fixture
def container():
    return build_fake_container()


def test_the_fake_container_defaults_to_an_in_memory_database_url(container) -> None:
    settings = container.settings()

    assert settings.database_url == "sqlite://"
    assert settings.database_path is None


def test_the_fake_container_uses_the_memory_store(container) -> None:
    assert isinstance(container.uow(), MemoryStore)
    assert container.uow() is container.uow()


def test_fleets_messaging_and_members_share_one_store(container) -> None:
    made = container.fleets().create("demo", CodingAgent.CLAUDE)
    fid, director, admin = (
        made.fleet.fleet_id,
        made.director.agent_id,
        made.administrator.agent_id,
    )

    sent = container.messaging().send(fid, director, admin, "hello admin")
    polled = container.messaging().poll(fid, admin)
    listing = container.members().list(fid, ListMode.ALL)

    assert [m.task_id for m in polled] == [sent.message.task_id]
    assert sent.delivery.state is DeliveryState.SKIPPED
    assert sent.delivery.error == "no-placement"
    assert [v.agent.agent_id for v in listing.members] == [director, admin]
    assert [r.fleet.fleet_id for r in container.fleets().list()] == [fid]


def test_a_push_to_a_pane_the_fake_server_does_not_know_is_settled_as_gone(container) -> None:
    made = container.fleets().create("demo", CodingAgent.CLAUDE)
    pane = made.placement
    container.pane_drivers()(pane.backend, pane.socket).panes.clear()  # the pane went away

    sent = container.messaging().send(
        made.fleet.fleet_id, made.administrator.agent_id, made.director.agent_id, "hi"
    )

    assert sent.delivery.state is DeliveryState.SKIPPED
    assert sent.delivery.error == "pane-gone"


def test_the_fake_container_accepts_explicit_settings() -> None:
    settings = Settings.from_environ(
        {"CAFLEET_DATABASE_URL": "sqlite://", "CAFLEET_MAX_TEXT_LEN": "7", "HOME": "/h"}
    )

    assert build_fake_container(settings).settings().max_text_len == 7


def test_the_keystroke_sender_uses_the_settings_profiles() -> None:
    settings = Settings.from_environ(
        {
            "CAFLEET_DATABASE_URL": "sqlite://",
            "CAFLEET_SUBMIT_DELAY_CLAUDE": "0.7",
            "CAFLEET_AGENT_COMMANDS_CODEX": "codex-dev",
            "HOME": "/h",
        }
    )
    keystrokes = build_fake_container(settings).keystrokes()

    claude = PushTarget(1, Multiplexer.TMUX, "s", "%1", CodingAgent.CLAUDE)
    codex = PushTarget(1, Multiplexer.TMUX, "s", "%1", CodingAgent.CODEX)
    assert keystrokes.profile(claude).submit_delay == 0.7
    assert keystrokes.accepted_commands(claude) == ("claude",)
    assert keystrokes.accepted_commands(codex) == ("codex-dev",)

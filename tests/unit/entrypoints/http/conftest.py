"""The admin API on the fake container: an in-memory store, a clock that only moves when told,
fake multiplexer servers. A small world is seeded through the container's units of work and
services; requests go through FastAPI's TestClient.

Helpers are exposed as fixtures so test modules never import this file.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from dependency_injector import providers
from fastapi import FastAPI
from fastapi.testclient import TestClient

from cafleet.adapters.fake.clock import FakeClock
from cafleet.adapters.fake.pane_driver import FakePaneDriver
from cafleet.adapters.fake.process import FakeProcess
from cafleet.application.fleets import FleetCreated
from cafleet.composition.container import Container, build_fake_container
from cafleet.domain.delivery import DeliveryState
from cafleet.domain.fleet import Agent, CardKind
from cafleet.domain.message import Message
from cafleet.domain.monitor import MonitorSchedule
from cafleet.domain.placement import CodingAgent, Placement
from cafleet.entrypoints.http.app import create_app
from cafleet.entrypoints.http.events import StreamLimits

START = datetime(2026, 1, 1, 8, 0, tzinfo=UTC)
HOST = "admin-host"
PID = 4242


@pytest.fixture
def clock() -> FakeClock:
    # one millisecond per reading, so every write has its own time (as in production)
    return FakeClock(START, step=timedelta(milliseconds=1))


@pytest.fixture
def process() -> FakeProcess:
    return FakeProcess(PID, HOST)


@pytest.fixture
def container(clock: FakeClock, process: FakeProcess) -> Container:
    built = build_fake_container()
    built.clock.override(providers.Object(clock))
    built.process.override(providers.Object(process))
    return built


@dataclass
class Fleets:
    """Builds fleets and agents through the container, and reads the end state back."""

    container: Container

    def create(self, name: str = "alpha") -> FleetCreated:
        return self.container.fleets().create(name, CodingAgent.CLAUDE)

    def member(
        self,
        made: FleetCreated,
        name: str = "worker",
        *,
        pane: str | None = None,
        card_kind: CardKind | None = None,
        launch_pad: str | None = None,
    ) -> int:
        """A member beside the Director. pane: a live pane running claude on the fleet's
        fake tmux server (None: no pane exists there, so pushes find it gone). launch_pad:
        where its agent reports its status."""
        clock = self.container.clock()
        with self.container.uow()(write=True) as uow:
            now = clock.now()
            agent_id = uow.agents.add(
                Agent(0, made.fleet.fleet_id, name, f"{name} description", now, card_kind=card_kind)
            )
            uow.placements.add(
                Placement(
                    agent_id,
                    made.director.agent_id,
                    made.placement.backend,
                    made.placement.session,
                    made.placement.window_id,
                    pane or f"%gone{agent_id}",
                    CodingAgent.CLAUDE,
                    now,
                    made.placement.socket,
                    ready_at=now,
                    launch_pad=launch_pad,
                )
            )
            if card_kind is None:
                uow.monitor.enroll(MonitorSchedule(agent_id, 720))
            uow.commit()
        if pane is not None:
            self.server(made).add_pane("claude", pane_id=pane)
        return agent_id

    def server(self, made: FleetCreated) -> FakePaneDriver:
        driver: FakePaneDriver = self.container.pane_drivers()(
            made.placement.backend, made.placement.socket
        )
        return driver

    def send(self, made: FleetCreated, sender: int, to: int, text: str) -> int:
        sent = self.container.messaging().send(made.fleet.fleet_id, sender, to, text)
        return sent.message.task_id

    def deregister(self, agent_id: int) -> None:
        with self.container.uow()(write=True) as uow:
            agent = uow.agents.get(agent_id)
            assert agent is not None
            uow.agents.save(agent.retired(self.container.clock().now()))
            uow.placements.remove(agent_id)
            uow.monitor.unenroll(agent_id)
            uow.commit()

    def delete(self, made: FleetCreated) -> None:
        self.container.fleets().delete(made.fleet.fleet_id, keep_panes=True)

    def schedule(self, agent_id: int) -> MonitorSchedule | None:
        with self.container.uow()() as uow:
            return uow.monitor.get(agent_id)

    def save_schedule(self, schedule: MonitorSchedule) -> None:
        with self.container.uow()(write=True) as uow:
            uow.monitor.save(schedule)
            uow.commit()

    def delivery_state(self, task_id: int, agent_id: int) -> DeliveryState | None:
        with self.container.uow()() as uow:
            row = uow.deliveries.get(task_id, agent_id)
        return None if row is None else row.state

    def message(self, task_id: int) -> Message | None:
        with self.container.uow()() as uow:
            return uow.messages.get(task_id)


@pytest.fixture
def fleets(container: Container) -> Fleets:
    return Fleets(container)


@pytest.fixture
def alpha(fleets: Fleets) -> FleetCreated:
    return fleets.create("alpha")


@pytest.fixture
def build(tmp_path: Path) -> Path:
    """An empty folder standing in for the SPA build (no index.html yet)."""
    path = tmp_path / "webui"
    path.mkdir()
    return path


@pytest.fixture
def make_client(container: Container, build: Path) -> Callable[..., TestClient]:
    """A TestClient on create_app(container, **options); the app is created on call, after
    the test seeded or overrode whatever it needs."""

    def make(*, raise_errors: bool = True, **options: Any) -> TestClient:
        options.setdefault("webui_build", build)
        options.setdefault("stream_limits", StreamLimits(poll_seconds=0.01, max_seconds=0.05))
        app: FastAPI = create_app(container, **options)
        return TestClient(app, raise_server_exceptions=raise_errors)

    return make


@pytest.fixture
def client(make_client: Callable[..., TestClient]) -> TestClient:
    return make_client()


def fleet_header(fleet_id: int) -> dict[str, str]:
    return {"X-Fleet-Id": str(fleet_id)}


@pytest.fixture
def scoped() -> Callable[[int], dict[str, str]]:
    """The X-Fleet-Id header for a fleet id."""
    return fleet_header

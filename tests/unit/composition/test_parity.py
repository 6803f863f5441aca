"""Every entrypoint's root gives each service the same collaborators.

The roots: the CLI's Components on this host's adapters, the container of `cafleet server`
and `monitor start`, and the fake container of the tests. A service is compared by the
shape of what it holds, followed into the application objects it holds: an adapter counts
as the port it implements (a fake and a real one are the same there), anything else as its
class. A feature that one root leaves out (a None, a missing drainer) shows as a difference.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from dependency_injector import providers

from cafleet.composition.components import Components, resolved
from cafleet.composition.container import Container, build_container, build_fake_container
from cafleet.settings import Settings

SERVICES = (
    "keystrokes",
    "fleets",
    "member_panes",
    "member_removal",
    "member_spawner",
    "members",
    "messaging",
    "monitoring",
    "pane_titles",
    "relay",
    "search",
    "skills",
    "admin",
    "pane_watch",
)
CONTAINER_NAMES = {"monitoring": "monitor"}  # the container's name where it differs
DEPTH = 4  # how far into the objects a service holds


def port_of(value: object) -> str | None:
    """The port an adapter implements, by the first base class declared in the ports."""
    for base in type(value).__mro__[1:]:
        if base.__module__.startswith("cafleet.application.ports."):
            return base.__name__
    return None


def shape(value: object, depth: int = DEPTH) -> Any:
    value = resolved(value)
    kind = type(value)
    module = kind.__module__
    if isinstance(value, bool | int | float):
        return value  # a limit or a wait: every root reads the same settings
    if isinstance(value, dict) and depth > 0:
        return {str(key): shape(v, depth - 1) for key, v in value.items()}
    if value is None or not module.startswith("cafleet."):
        return "callable" if callable(value) and value is not None else kind.__name__
    if module.startswith("cafleet.adapters."):
        return f"port {port_of(value) or kind.__name__}"
    if depth == 0 or not hasattr(value, "__dict__"):
        return kind.__name__
    held = {name: shape(v, depth - 1) for name, v in sorted(vars(value).items())}
    return (kind.__name__, held)


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    (tmp_path / "cafleet.db").touch(mode=0o600)  # opened, never read: no unit of work is begun
    return {
        "HOME": str(tmp_path),
        "PATH": os.environ.get("PATH", ""),
        "XDG_RUNTIME_DIR": str(runtime),
        "CAFLEET_DATABASE_URL": f"sqlite:///{tmp_path / 'cafleet.db'}",
        "CAFLEET_START_TIMEOUT": "7",  # not the default: a root that ignores it differs
    }


@pytest.fixture
def roots(env: dict[str, str]) -> dict[str, Any]:
    settings = Settings.from_environ(env)
    server = build_container(settings)
    fake = build_fake_container(settings)
    for container in (server, fake):
        container.environ.override(providers.Object(env))
    return {"cli": Components(settings, env), "server": server, "fake": fake}


def service_of(root: Components | Container, name: str) -> object:
    if isinstance(root, Components):
        return getattr(root, name)
    return getattr(root, CONTAINER_NAMES.get(name, name))()


@pytest.mark.parametrize("name", SERVICES)
def test_every_root_gives_the_service_the_same_collaborators(
    roots: dict[str, Any], name: str
) -> None:
    shapes = {root: shape(service_of(made, name)) for root, made in roots.items()}

    assert shapes["server"] == shapes["cli"]
    assert shapes["fake"] == shapes["cli"]


def test_the_shape_tells_a_missing_collaborator(roots: dict[str, Any]) -> None:
    """The comparison can fail: a service without its drainer has another shape."""
    from cafleet.application.messaging.service import MessagingService

    made = roots["cli"]
    bare = MessagingService(made.uow, made.clock, made.notifier, made.pane_locks)

    assert shape(bare) != shape(made.messaging)

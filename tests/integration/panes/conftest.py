"""Fixtures for the end-to-end pane tests; the helpers live in `panes_support`."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

# The test modules import `panes_support` by name; this keeps that working whatever
# --import-mode pytest runs with (importlib mode does not put test directories on sys.path).
HERE = str(Path(__file__).resolve().parent)
if HERE not in sys.path:
    sys.path.insert(0, HERE)

from panes_support import (  # noqa: E402
    CAFLEET,
    SUBMIT_DELAY,
    TMUX,
    PaneFleet,
    clean_environment,
)

from support.tmux import private_tmux  # noqa: E402

DB_NAME = "cafleet.db"


@pytest.fixture(scope="session")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """HOME and database as `cafleet setup` leaves them (database + skills), made once.

    The skills gate needs a recorded skills install before any fleet command; a claude home
    is all `setup` needs to find (the members themselves are custom). Each test gets a copy.
    """
    where = tmp_path_factory.mktemp("cafleet-setup")
    (where / "home" / ".claude").mkdir(parents=True)
    done = subprocess.run(
        [*CAFLEET, "setup"],
        env=clean_environment(
            HOME=str(where / "home"), CAFLEET_DATABASE_URL=f"sqlite:///{where / DB_NAME}"
        ),
        cwd=where,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0 and done.stderr == "", done
    return where


@pytest.fixture
def bare_pane_fleet(tmp_path: Path, prepared: Path) -> Iterator[PaneFleet]:
    """A fresh private tmux server and database, no fleet yet; the server is always killed."""
    if TMUX is None:
        pytest.skip("tmux is not installed")
    home = tmp_path / "home"
    shutil.copytree(prepared / "home", home)
    for path in prepared.glob(f"{DB_NAME}*"):  # the database (and WAL files, if any)
        shutil.copy2(path, tmp_path / path.name)
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    db_path = tmp_path / DB_NAME
    with private_tmux(
        TMUX, "cafleet-it", (220, 60), environment=clean_environment(HOME=str(home)), cwd=home
    ) as tmux:
        env = clean_environment(
            HOME=str(home),
            XDG_RUNTIME_DIR=str(runtime),
            CAFLEET_DATABASE_URL=f"sqlite:///{db_path}",
            CAFLEET_SUBMIT_DELAY_CUSTOM=SUBMIT_DELAY,
            TMUX=f"{tmux.socket},0,0",
            TMUX_PANE=tmux.pane_id,
        )
        fleet = PaneFleet(tmp_path, home, db_path, tmux, env)
        yield fleet
        # Shown only when the test failed: what each member received and what its pane shows.
        for member in fleet.members:
            print(f"--- {member.name} ({member.pane}) log:")
            for event in member.events():
                print(f"  {event}")
            print(f"--- {member.name} screen:")
            print(tmux.run("capture-pane", "-p", "-t", member.pane, check=False))


@pytest.fixture
def pane_fleet(bare_pane_fleet: PaneFleet) -> PaneFleet:
    """A fleet whose Director is the first pane of the private tmux server."""
    fleet = bare_pane_fleet
    made = fleet.json("fleet", "create", "--name", "t", "--coding-agent", "custom")
    fleet.fleet_id = made["fleet_id"]
    fleet.director = made["director"]["agent_id"]
    fleet.admin = made["administrator_agent_id"]
    assert made["director"]["placement"]["mux_pane_id"] == fleet.tmux.pane_id
    return fleet

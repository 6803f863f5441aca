"""This machine's name as placements record it, and the drivers' refusal of other hosts."""

from __future__ import annotations

import os

import pytest

from cafleet.adapters.multiplexers import SystemPaneDrivers
from cafleet.adapters.system.hosts import this_host
from cafleet.domain.errors import Invalid
from cafleet.domain.panes import PaneElsewhere
from cafleet.domain.placement import Multiplexer


def test_the_host_is_cafleet_host_else_the_machine_s_name() -> None:
    assert this_host({"CAFLEET_HOST": " laptop.local "}) == "laptop.local"
    assert this_host({}) == os.uname().nodename
    assert this_host({"CAFLEET_HOST": ""}) == os.uname().nodename


@pytest.mark.parametrize("bad", ["two words", "-leading", "a/b", "x" * 64, "é"])
def test_a_host_name_that_could_not_be_a_machine_s_is_one_clear_error(bad: str) -> None:
    with pytest.raises(Invalid) as raised:
        this_host({"CAFLEET_HOST": bad})

    assert raised.value.message.startswith("CAFLEET_HOST must be 1-63 letters")
    assert "\n" not in raised.value.message


def test_the_system_drivers_refuse_a_pane_of_another_host_before_asking_any_server() -> None:
    drivers = SystemPaneDrivers({"CAFLEET_HOST": "laptop"})

    with pytest.raises(PaneElsewhere) as raised:
        drivers(Multiplexer.TMUX, "/nonexistent/socket", "build-server")

    assert raised.value.message == (
        "the pane is on host 'build-server', not this one ('laptop'); run the command there"
    )
    assert drivers.reaches("laptop") and drivers.reaches(None)
    assert not drivers.reaches("build-server")
    assert drivers(Multiplexer.TMUX, "/nonexistent/socket", "laptop") is drivers(
        Multiplexer.TMUX, "/nonexistent/socket"
    )

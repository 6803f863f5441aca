"""The keystroke steps for many panes, on a driver without `PaneBatches`: pane by pane."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from cafleet.application.ports.panes import PaneBatches, PaneDriver, Typing
from cafleet.domain.errors import CafleetError
from cafleet.domain.panes import Key, PaneInfo


def steps_of(driver: PaneDriver) -> PaneBatches:
    return driver if isinstance(driver, PaneBatches) else OneByOne(driver)


class OneByOne(PaneBatches):
    def __init__(self, driver: PaneDriver) -> None:
        self._driver = driver

    def panes_of(self, pane_ids: Sequence[str]) -> dict[str, PaneInfo | None]:
        return {pane: self._driver.pane(pane) for pane in pane_ids}

    def captures(self, pane_ids: Sequence[str], lines: int) -> dict[str, str | CafleetError]:
        screens: dict[str, str | CafleetError] = {}
        for pane in pane_ids:
            try:
                screens[pane] = self._driver.capture(pane, lines)
            except CafleetError as exc:
                screens[pane] = exc
        return screens

    def write_all(self, typings: Sequence[Typing]) -> dict[str, CafleetError]:
        failures: dict[str, CafleetError] = {}
        for typing in typings:
            try:
                if typing.paste:
                    self._driver.paste_text(typing.pane_id, typing.text)
                else:
                    self._driver.type_text(typing.pane_id, typing.text)
            except CafleetError as exc:
                failures[typing.pane_id] = exc
        return failures

    def press_all(self, pane_ids: Sequence[str], key: Key) -> dict[str, CafleetError]:
        failures: dict[str, CafleetError] = {}
        for pane in pane_ids:
            try:
                self._driver.send_keys(pane, key)
            except CafleetError as exc:
                failures[pane] = exc
        return failures


def label_each(
    label: Callable[[str, str], None], titles: Mapping[str, str]
) -> dict[str, CafleetError]:
    """PaneLabels.label_all for a multiplexer that titles one pane per call."""
    failures: dict[str, CafleetError] = {}
    for pane, title in titles.items():
        try:
            label(pane, title)
        except CafleetError as exc:
            failures[pane] = exc
    return failures

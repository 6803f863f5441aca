"""What CAFleet reads on a coding agent's screen: a dialog's signs at the bottom, the
composer's row or box, an exit question's options, the spawn prompt's mark.

TUIs wrap lines, draw borders and render Markdown, so a screen is compared by its words
(letters and digits) and only where the agent draws the thing looked for.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

DIALOG_ROWS = 15  # a start-up screen: the whole dialog
EXIT_QUESTION_ROWS = 40  # a question on exit, with the list it asks about
# While the agent works, a dialog ends the screen with its keys line ("Esc to cancel"), and
# the messages CAFleet typed stay above the composer: only the last rows may count.
TYPING_DIALOG_ROWS = 3
# the composer sits at the bottom, under at most a few status rows
COMPOSER_ROWS = 6
COMPOSER_MARK_LENGTH = 16  # letters and digits of a text's start: "[cafleet msg 12 from 3"
_BORDERS = " \t│┃|"


@dataclass(frozen=True)
class ComposerBox:
    """A composer drawn as a run of rows starting with `side`, right above a row starting
    with `floor`, near the bottom of the screen (OpenCode's `┃ TEXT` rows over `╹▀▀▀`). The
    transcript's boxes use the same side but end in a blank row, so they are not counted."""

    side: str
    floor: str

    def text(self, screen: str) -> str:
        """The composer's rows (text and footer), joined; empty when no box is found."""
        rows = [row.strip() for row in screen.splitlines()]
        filled = [n for n, row in enumerate(rows) if row]
        floors = [n for n in filled[-COMPOSER_ROWS:] if rows[n].startswith(self.floor)]
        if not floors:
            return ""
        inside: list[str] = []
        for row in reversed(rows[: floors[-1]]):
            if not row.startswith(self.side):
                break
            inside.append(row.removeprefix(self.side))
        return " ".join(reversed(inside))


@dataclass(frozen=True)
class ExitQuestion:
    """A question the agent asks on its exit command before it leaves, and the option that
    confirms the exit (Claude Code's "Background work is running", "1. Exit and stop tasks")."""

    title: str  # lower-case words of the dialog
    choice: str  # lower-case start of the option that exits

    def key(self, screen: str) -> str | None:
        """The key that chooses the exit: the number the screen shows before `choice`,
        while the dialog is at the bottom of the screen (it lists every background task,
        hence the larger window); else None."""
        if sign_at_bottom((self.title,), screen, "", EXIT_QUESTION_ROWS) is None:
            return None
        rows = [row for row in screen.lower().splitlines() if row.strip()][-EXIT_QUESTION_ROWS:]
        for row in rows:
            option = _NUMBERED_OPTION.search(row)
            if option and " ".join(option.group(2).split()).startswith(self.choice):
                return option.group(1)
        return None


_NUMBERED_OPTION = re.compile(r"(\d+)\.\s+(\S.*)")


def sign_at_bottom(signs: Sequence[str], screen: str, ignoring: str, rows: int) -> str | None:
    kept = [row for row in screen.lower().splitlines() if row.strip()]
    bottom = " ".join(" ".join(kept[-rows:]).split())
    own = " ".join(ignoring.lower().split())
    return next((sign for sign in signs if sign in bottom and sign not in own), None)


def composer_row(screen: str, marks: tuple[str, ...]) -> str | None:
    """The lowest row, after any border, that starts with one of `marks` among the last
    COMPOSER_ROWS non-blank rows: the composer's own; None when none does."""
    rows = [row.strip(_BORDERS) for row in screen.splitlines() if row.strip(_BORDERS)]
    return next((row for row in reversed(rows[-COMPOSER_ROWS:]) if row.startswith(marks)), None)


_NOT_ALNUM = re.compile(r"[\W_]+")
PROMPT_MARK_LENGTH = 24


def letters_and_digits(text: str) -> str:
    """`text` as screen matching compares it: lower case, letters and digits only. TUIs
    wrap lines, draw borders and render Markdown (`- x` becomes `• x`), but keep the words."""
    return _NOT_ALNUM.sub("", text.lower())


def prompt_mark(prompt: str) -> str:
    """What of the spawn prompt must show on screen for the SCREEN rule."""
    return letters_and_digits(prompt)[:PROMPT_MARK_LENGTH]


def screen_shows(screen: str, mark: str) -> bool:
    return bool(mark) and mark in letters_and_digits(screen)

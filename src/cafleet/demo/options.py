"""The demo agent's options: its command line and its identity from the environment."""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from dataclasses import dataclass

from cafleet.demo.terminal import PROMPT


@dataclass(frozen=True)
class Options:
    fleet_id: str
    agent_id: str
    prompt: str = ""
    rounds: int = 3
    slow_composer_ms: int = 0
    permission_menu: bool = False
    hold: bool = False  # leave messages for the user to poll and ack
    dialog_on: str = ""  # a submission containing it opens a permission dialog


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="cafleet-demo-agent",
        description="A terminal stand-in for a coding agent; plays ping-pong over cafleet.",
    )
    parser.add_argument("--rounds", type=_positive, default=3, help="ping-pong rounds (3)")
    parser.add_argument(
        "--hold",
        action="store_true",
        help="show message previews but leave the messages for you to poll and ack",
    )
    parser.add_argument(
        "--slow-composer",
        type=_non_negative,
        default=None,
        metavar="MS",
        help="drop an Enter arriving less than MS ms after the last typed or pasted text",
    )
    parser.add_argument(
        "--permission-menu",
        action="store_true",
        help="show a permission menu that a stray Enter approves and Esc dismisses",
    )
    parser.add_argument(
        "--prompt-mark",
        default=PROMPT.strip(),
        metavar="MARK",
        help="the mark the composer's row starts with ('>'; Claude Code's is '❯')",
    )
    parser.add_argument(
        "--dialog-on",
        default="",
        metavar="WORD",
        help="open a permission dialog after a submission containing WORD",
    )
    parser.add_argument("prompt", nargs="*", help="the spawn prompt (the last one counts)")
    return parser.parse_args(argv)


def _positive(value: str) -> int:
    number = _non_negative(value)
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1: {value!r}")
    return number


def _non_negative(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {value!r}") from None
    if number < 0:
        raise argparse.ArgumentTypeError(f"must not be negative: {value!r}")
    return number


def _member_identity() -> tuple[str, str] | str:
    """(fleet_id, agent_id), or the error line."""
    values = []
    for name in ("CAFLEET_FLEET_ID", "CAFLEET_AGENT_ID"):
        value = os.environ.get(name, "").strip()
        if not value:
            return f"{name} is not set; run me as a cafleet member"
        if not (value.isascii() and value.isdigit()) or int(value) < 1:
            return f"{name} is not a positive integer: {value!r}"
        values.append(str(int(value)))
    return values[0], values[1]


def options_from(args: argparse.Namespace) -> Options | str:
    """The agent's options from its arguments and environment, or the error line."""
    identity = _member_identity()
    if isinstance(identity, str):
        return identity
    slow = args.slow_composer
    if slow is None:
        raw = os.environ.get("CAFLEET_DEMO_SLOW_COMPOSER_MS", "").strip() or "0"
        try:
            slow = _non_negative(raw)
        except argparse.ArgumentTypeError as exc:
            return f"CAFLEET_DEMO_SLOW_COMPOSER_MS {exc}"
    return Options(
        fleet_id=identity[0],
        agent_id=identity[1],
        prompt=args.prompt[-1] if args.prompt else "",
        rounds=args.rounds,
        slow_composer_ms=slow,
        permission_menu=args.permission_menu,
        hold=args.hold or os.environ.get("CAFLEET_DEMO_HOLD", "") not in ("", "0"),
        dialog_on=args.dialog_on,
    )

"""Signals and standard output for the foreground commands (monitor start, relay)."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable

import click


def echo_out(line: str) -> None:
    """One line, flushed at once (a log file tails it live)."""
    try:
        click.echo(line)
        sys.stdout.flush()
    except BrokenPipeError:
        # the reader left: later writes, and the flush at exit, go nowhere instead
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        raise


def stop_on_signals() -> Callable[[], bool]:
    """From now on SIGTERM and SIGINT (Ctrl-C) ask the loop to stop: whether one came."""
    stopping: list[int] = []

    def on_signal(signum: int, _frame: object) -> None:
        stopping.append(signum)

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    return lambda: bool(stopping)

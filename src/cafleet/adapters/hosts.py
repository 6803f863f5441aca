"""Which machine this process runs on, as placements record it (`CAFLEET_HOST`)."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping

from cafleet.domain.errors import Invalid

HOST_VARIABLE = "CAFLEET_HOST"
_HOST_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,62}")


def this_host(env: Mapping[str, str]) -> str:
    """`CAFLEET_HOST` when set, else the machine's name (`uname -n`)."""
    named = env.get(HOST_VARIABLE, "").strip()
    if not named:
        return os.uname().nodename or "localhost"
    if not _HOST_NAME.fullmatch(named):
        raise Invalid(
            f"{HOST_VARIABLE} must be 1-63 letters, digits, '.', '_' or '-' (starting with a"
            f" letter or digit), got {named!r}"
        )
    return named


def reach_of(env: Mapping[str, str]) -> Callable[[str | None], bool]:
    """Whether a pane recorded on a host is on this one (a row with no host is taken to be)."""

    def reaches(host: str | None) -> bool:
        return host is None or host == this_host(env)

    return reaches

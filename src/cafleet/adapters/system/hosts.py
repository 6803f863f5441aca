"""Which machine this process runs on, as placements record it (`CAFLEET_HOST`)."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping

from cafleet.domain.errors import Invalid
from cafleet.domain.placement import HOST_NAME_RULE, is_host_name

HOST_VARIABLE = "CAFLEET_HOST"


def this_host(env: Mapping[str, str]) -> str:
    """`CAFLEET_HOST` when set, else the machine's name (`uname -n`)."""
    named = env.get(HOST_VARIABLE, "").strip()
    if not named:
        return os.uname().nodename or "localhost"
    if not is_host_name(named):
        raise Invalid(f"{HOST_VARIABLE} must be {HOST_NAME_RULE}, got {named!r}")
    return named


def reach_of(env: Mapping[str, str]) -> Callable[[str | None], bool]:
    """Whether a pane recorded on a host is on this one (a row with no host is taken to be)."""

    def reaches(host: str | None) -> bool:
        return host is None or host == this_host(env)

    return reaches

"""Which multiplexer the calling process runs in, decided from its environment."""

from __future__ import annotations

from collections.abc import Mapping

from cafleet.domain.errors import Unavailable
from cafleet.domain.placement import Multiplexer


def resolve_multiplexer(env: Mapping[str, str]) -> Multiplexer:
    chosen = env.get("CAFLEET_MULTIPLEXER")
    if chosen:
        names = sorted(m.value for m in Multiplexer)
        if chosen not in names:
            raise Unavailable(
                f"CAFLEET_MULTIPLEXER={chosen!r} is not a supported multiplexer"
                f" (expected one of: {', '.join(names)})"
            )
        return Multiplexer(chosen)
    in_herdr = env.get("HERDR_ENV", "") not in ("", "0")
    in_tmux = bool(env.get("TMUX"))
    if in_herdr and env.get("HERDR_PANE_ID"):
        return Multiplexer.HERDR  # herdr leaves an inherited TMUX in its panes' environment
    if in_herdr and in_tmux:
        raise Unavailable(
            "ambiguous multiplexer environment: both HERDR_ENV and TMUX are set;"
            " set CAFLEET_MULTIPLEXER to 'tmux' or 'herdr' to disambiguate"
        )
    if in_herdr:
        return Multiplexer.HERDR
    if in_tmux:
        return Multiplexer.TMUX
    raise Unavailable(
        "no supported multiplexer detected: neither HERDR_ENV nor TMUX is set;"
        " run cafleet inside a tmux or herdr session, or set CAFLEET_MULTIPLEXER"
    )

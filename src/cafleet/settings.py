"""Settings from CAFLEET_* environment variables, validated on demand.

Plain dataclasses and explicit parsers rather than pydantic-settings: every CLI
call validates its settings, and importing pydantic-settings alone costs more
than the rest of a hot command (docs/benchmarks.md, import costs). Each parser gives the
one-line message a user sees.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from cafleet.domain import bounds
from cafleet.domain.errors import Invalid
from cafleet.domain.identity import AGENT_VARIABLE, SECRET_VARIABLE, MemberCredential
from cafleet.domain.placement import CodingAgent, Multiplexer

if TYPE_CHECKING:
    from cafleet.domain.agents.profile import ReadyRule
    from cafleet.domain.agents.registry import AgentProfiles, ProfileOverrides
    from cafleet.domain.delivery import Channel

T = TypeVar("T")

AGENT_BACKENDS = tuple(agent.value for agent in CodingAgent)
DEFAULT_START_TIMEOUT = 90.0
# the per-agent variables (CAFLEET_<SETTING>_<AGENT>) that override a coding-agent profile
PROFILE_SETTINGS = ("SUBMIT_DELAY", "AGENT_COMMANDS", "AGENT_ARGS", "READY_RULES", "CHANNELS")


@dataclass(frozen=True)
class Settings:
    database_url: str
    database_path: Path | None  # None for an in-memory or a PostgreSQL URL
    broker_host: str = "127.0.0.1"
    broker_port: int = 8000
    webui_token: str | None = None
    max_text_len: int = 200
    max_body_bytes: int = bounds.DEFAULT_MAX_BODY_BYTES
    multiplexer: str | None = None
    monitor_stall_interval: int = 240
    agent_overrides: Mapping[CodingAgent, ProfileOverrides] = field(default_factory=dict)
    start_timeout: float = DEFAULT_START_TIMEOUT
    custom_agent_command: str | None = None
    debug: bool = False
    member: MemberCredential | None = None  # set in a member's own pane only

    @cached_property
    def profiles(self) -> AgentProfiles:
        """The coding-agent profiles with the user's overrides applied."""
        from cafleet.domain.agents.registry import AgentProfiles

        return AgentProfiles.resolved(self.agent_overrides)

    @staticmethod
    def from_environ(env: Mapping[str, str] | None = None) -> Settings:
        """Read and validate every CAFLEET_* setting; the first bad one raises Invalid."""
        env = os.environ if env is None else env
        url = env.get("CAFLEET_DATABASE_URL") or default_database_url(env)
        return Settings(
            database_url=url,
            database_path=None if is_postgres_url(url) else sqlite_path(url),
            broker_host=env.get("CAFLEET_BROKER_HOST") or "127.0.0.1",
            broker_port=_read(env, "CAFLEET_BROKER_PORT", 8000, bounds.PORT.parse_int),
            webui_token=env.get("CAFLEET_WEBUI_TOKEN") or None,
            max_text_len=_read(env, "CAFLEET_MAX_TEXT_LEN", 200, bounds.MAX_TEXT_LEN.parse_int),
            max_body_bytes=_read(
                env,
                "CAFLEET_MAX_BODY_BYTES",
                bounds.DEFAULT_MAX_BODY_BYTES,
                bounds.MAX_BODY_BYTES.parse_int,
            ),
            multiplexer=_read(env, "CAFLEET_MULTIPLEXER", None, _multiplexer),
            monitor_stall_interval=_read(
                env, "CAFLEET_MONITOR_STALL_INTERVAL", 240, bounds.STALL_INTERVAL.parse_int
            ),
            agent_overrides=_all_overrides(env),
            start_timeout=_read(
                env,
                "CAFLEET_START_TIMEOUT",
                DEFAULT_START_TIMEOUT,
                bounds.START_TIMEOUT.parse_float,
            ),
            custom_agent_command=env.get("CAFLEET_CUSTOM_AGENT_COMMAND") or None,
            debug=env.get("CAFLEET_DEBUG", "") not in ("", "0"),
            member=member_credential(env),
        )

    @property
    def on_postgres(self) -> bool:
        return is_postgres_url(self.database_url)

    @property
    def store_name(self) -> str:
        """The store as every process of this host names it: a SQLite file by its absolute
        path, any other store by its URL."""
        path = self.database_path
        return str(path.absolute()) if path else self.database_url

    def require_database_path(self) -> Path:
        if self.database_path is None:
            raise Invalid("database URL has no file path")
        return self.database_path


def member_credential(env: Mapping[str, str]) -> MemberCredential | None:
    """The identity `member create` put in a member's pane; None anywhere else."""
    secret = env.get(SECRET_VARIABLE)
    if not secret:
        return None
    agent_id = _read(env, AGENT_VARIABLE, None, bounds.ID.parse_int)
    if agent_id is None:
        raise Invalid(f"{SECRET_VARIABLE} is set but {AGENT_VARIABLE} is not")
    return MemberCredential(agent_id, secret)


def default_database_url(env: Mapping[str, str]) -> str:
    home = env.get("HOME") or str(Path.home())
    return f"sqlite:///{home}/.local/share/cafleet/cafleet_v2.db"


POSTGRES_SCHEMES = ("postgresql", "postgresql+psycopg")
SUPPORTED_URLS = "only sqlite:/// and postgresql+psycopg:// URLs are supported"


def is_postgres_url(url: str) -> bool:
    """A PostgreSQL URL (psycopg 3, `pip install cafleet[postgres]`)."""
    scheme, sep, _ = url.partition("://")
    return bool(sep) and scheme in POSTGRES_SCHEMES


def sqlite_path(url: str) -> Path | None:
    """The file of a sqlite:/// URL; `~` is deliberately not expanded."""
    scheme, sep, rest = url.partition("://")
    if not sep or not (scheme == "sqlite" or scheme.startswith("sqlite+")):
        raise Invalid(f"unsupported database URL '{url}'; {SUPPORTED_URLS}")
    if rest in ("", "/", "/:memory:"):
        return None
    if not rest.startswith("/"):
        raise Invalid(f"unsupported database URL '{url}'; {SUPPORTED_URLS}")
    path = rest[1:].split("?", 1)[0]
    if path.startswith("~"):  # else `setup db` would make a directory named `~` here
        raise Invalid(
            f"database URL '{url}' starts its path with '~', which is not expanded inside a URL;"
            " give an absolute path (sqlite:////abs/path.db)"
        )
    return Path(path)


def _read(env: Mapping[str, str], name: str, default: T, parse: Callable[[str], T]) -> T:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        return parse(raw)
    except ValueError as exc:
        raise Invalid(f"invalid value for {name}: {raw!r} ({exc})") from None


def _multiplexer(raw: str) -> str:
    """Checked up front, though only commands that find the caller's pane use it."""
    names = sorted(m.value for m in Multiplexer)
    if raw not in names:
        raise ValueError(f"expected one of: {', '.join(names)}")
    return raw


def _all_overrides(env: Mapping[str, str]) -> dict[CodingAgent, ProfileOverrides]:
    """Each agent's overrides; none at all (and the profiles not even imported, which a hot
    command that never types into a pane does not pay for) where no such variable is set."""
    names = {f"CAFLEET_{setting}_{agent.value.upper()}" for setting in PROFILE_SETTINGS
             for agent in CodingAgent}  # fmt: skip
    if not any(env.get(name) for name in names):
        return {}
    return {agent: _overrides(env, agent) for agent in CodingAgent}


def _overrides(env: Mapping[str, str], agent: CodingAgent) -> ProfileOverrides:
    """CAFLEET_SUBMIT_DELAY_, _AGENT_COMMANDS_, _AGENT_ARGS_, _READY_RULES_ and
    _CHANNELS_<AGENT>."""
    from cafleet.domain.agents.registry import ProfileOverrides

    suffix = agent.value.upper()
    delay = _read(env, f"CAFLEET_SUBMIT_DELAY_{suffix}", None, bounds.SUBMIT_DELAY.parse_float)
    rules = _read(env, f"CAFLEET_READY_RULES_{suffix}", None, _rules_for(agent))
    channels = _read(env, f"CAFLEET_CHANNELS_{suffix}", None, _channels_for(agent))
    if agent is CodingAgent.CUSTOM:  # its names and flags come from its command template
        return ProfileOverrides(submit_delay=delay, ready_rules=rules, channels=channels)
    return ProfileOverrides(
        submit_delay=delay,
        foreground_names=_read(env, f"CAFLEET_AGENT_COMMANDS_{suffix}", None, _names),
        extra_args=_read(env, f"CAFLEET_AGENT_ARGS_{suffix}", (), _arguments),
        ready_rules=rules,
        channels=channels,
    )


def _arguments(raw: str) -> tuple[str, ...]:
    try:
        return tuple(shlex.split(raw))
    except ValueError as exc:
        raise ValueError(f"expected shell words: {exc}") from None


def _rules_for(agent: CodingAgent) -> Callable[[str], tuple[ReadyRule, ...]]:
    """A parser of readiness rules that accepts only those this agent can satisfy."""
    from cafleet.domain.agents.registry import PROFILES

    possible = {rule.value: rule for rule in PROFILES[agent].possible_rules}

    def parse(raw: str) -> tuple[ReadyRule, ...]:
        names = [n.strip() for n in raw.split(",") if n.strip()]
        if not names or any(name not in possible for name in names):
            raise ValueError(f"expected a comma-separated list of {', '.join(possible)}")
        return tuple(possible[name] for name in names)

    return parse


def _channels_for(agent: CodingAgent) -> Callable[[str], tuple[Channel, ...]]:
    """A parser of delivery channels that accepts only this agent's; `keys` is always the
    last rung, so naming it alone switches the native channels off."""
    from cafleet.domain.agents.registry import possible_channels
    from cafleet.domain.delivery import Channel

    possible = {channel.value: channel for channel in possible_channels(agent)}

    def parse(raw: str) -> tuple[Channel, ...]:
        names = [n.strip() for n in raw.split(",") if n.strip()]
        if not names or any(name not in possible for name in names):
            raise ValueError(f"expected a comma-separated list of {', '.join(possible)}")
        return tuple(possible[n] for n in names if possible[n] is not Channel.KEYS)

    return parse


def _names(raw: str) -> tuple[str, ...]:
    names = tuple(n.strip() for n in raw.split(",") if n.strip())
    if not names:
        raise ValueError("expected a comma-separated list of command names")
    return names

"""Settings from CAFLEET_* variables: defaults, one-line validation errors, database URLs."""

from __future__ import annotations

from pathlib import Path

import pytest

from cafleet.domain.agents.profile import LaunchContext, ReadyRule
from cafleet.domain.agents.registry import PROFILES
from cafleet.domain.delivery import Channel
from cafleet.domain.errors import Invalid
from cafleet.domain.placement import CodingAgent
from cafleet.settings import Settings

CLAUDE, CODEX, OPENCODE, CUSTOM = (
    CodingAgent.CLAUDE,
    CodingAgent.CODEX,
    CodingAgent.OPENCODE,
    CodingAgent.CUSTOM,
)

HOME = "/home/tester"


def settings(**env: str) -> Settings:
    return Settings.from_environ({"HOME": HOME, **env})


def invalid(**env: str) -> str:
    with pytest.raises(Invalid) as raised:
        settings(**env)
    return raised.value.message


def test_defaults() -> None:
    s = settings()

    assert s.database_url == "sqlite:////home/tester/.local/share/cafleet/cafleet_v2.db"
    assert s.database_path == Path("/home/tester/.local/share/cafleet/cafleet_v2.db")
    assert s.broker_host == "127.0.0.1"
    assert s.broker_port == 8000
    assert s.webui_token is None
    assert s.max_text_len == 200
    assert s.multiplexer is None
    assert s.monitor_stall_interval == 240
    assert dict(s.agent_overrides) == {}  # no override set: every profile as it ships
    assert s.start_timeout == 90.0
    profiles = s.profiles
    assert {a: profiles[a].submit_delay for a in CodingAgent} == {
        CLAUDE: 0.05, CODEX: 0.05, OPENCODE: 0.1, CUSTOM: 0.2,
    }  # fmt: skip
    assert {a: profiles[a].foreground_names for a in CodingAgent} == {
        CLAUDE: ("claude",),
        CODEX: ("codex", "node"),
        OPENCODE: ("opencode", "node", "bun"),
        CUSTOM: (),
    }
    assert {a: profiles[a].ready_rules for a in CodingAgent} == {
        CLAUDE: (ReadyRule.HOOK, ReadyRule.SCREEN, ReadyRule.WAIT),
        CODEX: (ReadyRule.SCREEN, ReadyRule.WAIT),
        OPENCODE: (ReadyRule.HTTP, ReadyRule.WAIT),
        CUSTOM: (ReadyRule.WAIT,),
    }
    assert all(profiles[a].extra_args == () for a in CodingAgent)
    assert dict(profiles.profiles) == dict(PROFILES)
    assert s.custom_agent_command is None
    assert s.debug is False


def test_the_default_database_follows_home() -> None:
    s = Settings.from_environ({"HOME": "/srv/other"})

    assert s.database_path == Path("/srv/other/.local/share/cafleet/cafleet_v2.db")


def test_empty_values_mean_the_default() -> None:
    s = settings(
        CAFLEET_DATABASE_URL="",
        CAFLEET_MAX_TEXT_LEN="",
        CAFLEET_BROKER_PORT="",
        CAFLEET_SUBMIT_DELAY_CODEX="",
        CAFLEET_AGENT_COMMANDS_CLAUDE="",
        CAFLEET_AGENT_ARGS_CODEX="",
        CAFLEET_READY_RULES_CLAUDE="",
        CAFLEET_START_TIMEOUT="",
    )

    assert s.database_path == Path("/home/tester/.local/share/cafleet/cafleet_v2.db")
    assert (s.max_text_len, s.broker_port, s.start_timeout) == (200, 8000, 90.0)
    assert s.profiles[CODEX].submit_delay == 0.05
    assert s.profiles[CODEX].extra_args == ()
    assert s.profiles[CLAUDE].foreground_names == ("claude",)
    assert s.profiles[CLAUDE].ready_rules == PROFILES[CLAUDE].ready_rules


def test_valid_overrides_are_parsed() -> None:
    s = settings(
        CAFLEET_BROKER_HOST="0.0.0.0",
        CAFLEET_BROKER_PORT="65535",
        CAFLEET_WEBUI_TOKEN="0123456789abcdef",
        CAFLEET_MAX_TEXT_LEN="1",
        CAFLEET_MULTIPLEXER="herdr",
        CAFLEET_MONITOR_STALL_INTERVAL="-1",
        CAFLEET_SUBMIT_DELAY_CLAUDE="0",
        CAFLEET_SUBMIT_DELAY_CUSTOM="10",
        CAFLEET_AGENT_COMMANDS_CODEX=" codex , node,, ",
        CAFLEET_CUSTOM_AGENT_COMMAND="my-agent --model {model}",
        CAFLEET_DEBUG="1",
    )

    assert (s.broker_host, s.broker_port, s.webui_token) == ("0.0.0.0", 65535, "0123456789abcdef")
    assert (s.max_text_len, s.multiplexer, s.monitor_stall_interval) == (1, "herdr", -1)
    assert s.profiles[CLAUDE].submit_delay == 0.0
    assert s.profiles[CUSTOM].submit_delay == 10.0
    assert s.profiles[CODEX].submit_delay == PROFILES[CODEX].submit_delay
    assert s.profiles[CODEX].foreground_names == ("codex", "node")
    assert s.custom_agent_command == "my-agent --model {model}"
    assert s.debug is True


def test_agent_commands_override_the_foreground_names() -> None:
    s = settings(CAFLEET_AGENT_COMMANDS_CLAUDE="claude,node", CAFLEET_AGENT_COMMANDS_OPENCODE="oc")

    assert s.profiles[CLAUDE].foreground_names == ("claude", "node")
    assert s.profiles[OPENCODE].foreground_names == ("oc",)
    assert s.profiles[CODEX].foreground_names == ("codex", "node")


def test_a_custom_agent_takes_its_names_and_flags_from_its_command_template() -> None:
    # not even read, so not an error
    s = settings(CAFLEET_AGENT_COMMANDS_CUSTOM=" , ", CAFLEET_AGENT_ARGS_CUSTOM="'unclosed")

    assert s.agent_overrides[CUSTOM].foreground_names is None
    assert s.agent_overrides[CUSTOM].extra_args == ()
    assert (s.profiles[CUSTOM].foreground_names, s.profiles[CUSTOM].extra_args) == ((), ())


def test_a_custom_agent_takes_a_submit_delay_and_ready_rules() -> None:
    s = settings(CAFLEET_SUBMIT_DELAY_CUSTOM="1", CAFLEET_READY_RULES_CUSTOM="screen,wait")

    assert s.profiles[CUSTOM].submit_delay == 1.0
    assert s.profiles[CUSTOM].ready_rules == (ReadyRule.SCREEN, ReadyRule.WAIT)


def test_agent_args_are_split_like_shell_words() -> None:
    s = settings(
        CAFLEET_AGENT_ARGS_CLAUDE="--add-dir '/srv/shared docs' --verbose",
        CAFLEET_AGENT_ARGS_CODEX='-c model_reasoning_effort="high"',
    )

    assert s.profiles[CLAUDE].extra_args == ("--add-dir", "/srv/shared docs", "--verbose")
    assert s.profiles[CODEX].extra_args == ("-c", "model_reasoning_effort=high")
    assert s.profiles[OPENCODE].extra_args == ()


def test_agent_args_come_before_the_prompt() -> None:
    s = settings(CAFLEET_AGENT_ARGS_CODEX="--search")

    argv = s.profiles[CODEX].argv(LaunchContext(binary="/b/codex", name="n", prompt="go"))

    assert argv[-3:] == ["--search", "--", "go"]


@pytest.mark.parametrize(
    ("raw", "rules"),
    [
        ("hook", (ReadyRule.HOOK,)),
        ("screen,wait", (ReadyRule.SCREEN, ReadyRule.WAIT)),
        (" wait , hook ,, ", (ReadyRule.WAIT, ReadyRule.HOOK)),
        ("screen", (ReadyRule.SCREEN,)),
    ],
)
def test_ready_rules_are_a_comma_list(raw: str, rules: tuple[ReadyRule, ...]) -> None:
    s = settings(CAFLEET_READY_RULES_CLAUDE=raw)

    assert s.profiles[CLAUDE].ready_rules == rules
    assert s.profiles[CODEX].ready_rules == PROFILES[CODEX].ready_rules


@pytest.mark.parametrize(
    ("agent", "raw", "channels"),
    [
        (CLAUDE, "keys", ()),
        (CLAUDE, "claude-hook, keys", (Channel.CLAUDE_HOOK,)),
        (OPENCODE, "keys", ()),
        (OPENCODE, "opencode-http", (Channel.OPENCODE_HTTP,)),
    ],
)
def test_channels_are_a_comma_list_and_keys_alone_turns_the_native_ones_off(
    agent: CodingAgent, raw: str, channels: tuple[Channel, ...]
) -> None:
    s = settings(**{f"CAFLEET_CHANNELS_{agent.value.upper()}": raw})

    assert s.profiles[agent].channels == channels
    assert settings().profiles[agent].channels == PROFILES[agent].channels


@pytest.mark.parametrize(("raw", "seconds"), [("1", 1.0), ("2.5", 2.5), (" 3600 ", 3600.0)])
def test_start_timeout_is_parsed(raw: str, seconds: float) -> None:
    assert settings(CAFLEET_START_TIMEOUT=raw).start_timeout == seconds


def test_the_profiles_are_resolved_once() -> None:
    s = settings(CAFLEET_SUBMIT_DELAY_OPENCODE="1.5")

    assert s.profiles is s.profiles
    assert s.profiles[OPENCODE].submit_delay == 1.5


def test_debug_zero_is_off() -> None:
    assert settings(CAFLEET_DEBUG="0").debug is False


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        (
            "CAFLEET_MAX_TEXT_LEN",
            "abc",
            "invalid value for CAFLEET_MAX_TEXT_LEN: 'abc'"
            " (expected an integer between 1 and 1000000)",
        ),
        (
            "CAFLEET_MAX_TEXT_LEN",
            "0",
            "invalid value for CAFLEET_MAX_TEXT_LEN: '0'"
            " (expected an integer between 1 and 1000000)",
        ),
        (
            "CAFLEET_MAX_TEXT_LEN",
            "-3",
            "invalid value for CAFLEET_MAX_TEXT_LEN: '-3'"
            " (expected an integer between 1 and 1000000)",
        ),
        (
            "CAFLEET_BROKER_PORT",
            "70000",
            "invalid value for CAFLEET_BROKER_PORT: '70000'"
            " (expected an integer between 1 and 65535)",
        ),
        (
            "CAFLEET_BROKER_PORT",
            "0",
            "invalid value for CAFLEET_BROKER_PORT: '0' (expected an integer between 1 and 65535)",
        ),
        (
            "CAFLEET_BROKER_PORT",
            "http",
            "invalid value for CAFLEET_BROKER_PORT: 'http'"
            " (expected an integer between 1 and 65535)",
        ),
        (
            "CAFLEET_SUBMIT_DELAY_CODEX",
            "x",
            "invalid value for CAFLEET_SUBMIT_DELAY_CODEX: 'x'"
            " (expected a number of seconds between 0 and 10)",
        ),
        (
            "CAFLEET_SUBMIT_DELAY_CODEX",
            "11",
            "invalid value for CAFLEET_SUBMIT_DELAY_CODEX: '11'"
            " (expected a number of seconds between 0 and 10)",
        ),
        (
            "CAFLEET_SUBMIT_DELAY_CUSTOM",
            "-0.5",
            "invalid value for CAFLEET_SUBMIT_DELAY_CUSTOM: '-0.5'"
            " (expected a number of seconds between 0 and 10)",
        ),
        (
            "CAFLEET_SUBMIT_DELAY_OPENCODE",
            "nan",
            "invalid value for CAFLEET_SUBMIT_DELAY_OPENCODE: 'nan'"
            " (expected a number of seconds between 0 and 10)",
        ),
        (
            "CAFLEET_MONITOR_STALL_INTERVAL",
            "soon",
            "invalid value for CAFLEET_MONITOR_STALL_INTERVAL: 'soon'"
            " (expected an integer up to 86400; 0 or less turns stall checks off)",
        ),
        (
            "CAFLEET_AGENT_COMMANDS_CLAUDE",
            " , ",
            "invalid value for CAFLEET_AGENT_COMMANDS_CLAUDE: ' , '"
            " (expected a comma-separated list of command names)",
        ),
        (
            "CAFLEET_AGENT_ARGS_CLAUDE",
            "--add-dir 'unclosed",
            'invalid value for CAFLEET_AGENT_ARGS_CLAUDE: "--add-dir \'unclosed"'
            " (expected shell words: No closing quotation)",
        ),
        (
            "CAFLEET_AGENT_ARGS_OPENCODE",
            '"',
            "invalid value for CAFLEET_AGENT_ARGS_OPENCODE: '\"'"
            " (expected shell words: No closing quotation)",
        ),
        (
            "CAFLEET_READY_RULES_CODEX",
            "screen,guess",
            "invalid value for CAFLEET_READY_RULES_CODEX: 'screen,guess'"
            " (expected a comma-separated list of screen, wait)",
        ),
        (
            "CAFLEET_READY_RULES_CLAUDE",
            " , ",
            "invalid value for CAFLEET_READY_RULES_CLAUDE: ' , '"
            " (expected a comma-separated list of hook, screen, wait)",
        ),
        (  # only opencode has a server to ask
            "CAFLEET_READY_RULES_CLAUDE",
            "http,screen",
            "invalid value for CAFLEET_READY_RULES_CLAUDE: 'http,screen'"
            " (expected a comma-separated list of hook, screen, wait)",
        ),
        (
            "CAFLEET_READY_RULES_OPENCODE",
            "hook",
            "invalid value for CAFLEET_READY_RULES_OPENCODE: 'hook'"
            " (expected a comma-separated list of http, screen, wait)",
        ),
        (
            "CAFLEET_READY_RULES_CUSTOM",
            "HOOK",
            "invalid value for CAFLEET_READY_RULES_CUSTOM: 'HOOK'"
            " (expected a comma-separated list of screen, wait)",
        ),
        (
            "CAFLEET_CHANNELS_CLAUDE",
            "opencode-http",
            "invalid value for CAFLEET_CHANNELS_CLAUDE: 'opencode-http'"
            " (expected a comma-separated list of claude-hook, herdr-prompt, keys)",
        ),
        (
            "CAFLEET_CHANNELS_CODEX",
            "claude-hook",
            "invalid value for CAFLEET_CHANNELS_CODEX: 'claude-hook'"
            " (expected a comma-separated list of codex-queue, herdr-prompt, keys)",
        ),
        (
            "CAFLEET_START_TIMEOUT",
            "0",
            "invalid value for CAFLEET_START_TIMEOUT: '0'"
            " (expected a number of seconds between 1 and 3600)",
        ),
        (
            "CAFLEET_START_TIMEOUT",
            "3601",
            "invalid value for CAFLEET_START_TIMEOUT: '3601'"
            " (expected a number of seconds between 1 and 3600)",
        ),
        (
            "CAFLEET_START_TIMEOUT",
            "soon",
            "invalid value for CAFLEET_START_TIMEOUT: 'soon'"
            " (expected a number of seconds between 1 and 3600)",
        ),
        (
            "CAFLEET_START_TIMEOUT",
            "nan",
            "invalid value for CAFLEET_START_TIMEOUT: 'nan'"
            " (expected a number of seconds between 1 and 3600)",
        ),
        (
            "CAFLEET_START_TIMEOUT",
            "inf",
            "invalid value for CAFLEET_START_TIMEOUT: 'inf'"
            " (expected a number of seconds between 1 and 3600)",
        ),
    ],
)
def test_an_invalid_value_gives_one_exact_line(name: str, value: str, message: str) -> None:
    text = invalid(**{name: value})

    assert text == message
    assert "\n" not in text


@pytest.mark.parametrize(
    "url",
    [
        "mysql+pymysql:///cafleet",
        "postgresql+psycopg2://user@localhost/cafleet",
        "cafleet.db",
        "sqlite:/relative.db",
        "sqlite://host/x.db",
    ],
)
def test_an_unsupported_url_is_rejected(url: str) -> None:
    assert invalid(CAFLEET_DATABASE_URL=url) == (
        f"unsupported database URL '{url}'; only sqlite:/// and postgresql+psycopg:// URLs"
        " are supported"
    )


@pytest.mark.parametrize("scheme", ["postgresql", "postgresql+psycopg"])
def test_a_postgresql_url_names_a_store_without_a_file(scheme: str) -> None:
    settings = Settings.from_environ({"CAFLEET_DATABASE_URL": f"{scheme}://u@db.example/fleet"})

    assert settings.on_postgres
    assert settings.database_path is None


@pytest.mark.parametrize(
    ("url", "path"),
    [
        ("sqlite:////abs/x.db", Path("/abs/x.db")),
        ("sqlite:///rel.db", Path("rel.db")),
        ("sqlite:///sub/dir/rel.db", Path("sub/dir/rel.db")),
        ("sqlite+pysqlite:///rel.db", Path("rel.db")),
        ("sqlite+pysqlite:////abs/x.db", Path("/abs/x.db")),
        ("sqlite:///rel/~x.db", Path("rel/~x.db")),
    ],
)
def test_sqlite_url_paths(url: str, path: Path) -> None:
    s = settings(CAFLEET_DATABASE_URL=url)

    assert s.database_url == url
    assert s.database_path == path
    assert s.require_database_path() == path


def test_a_relative_url_stays_relative_to_the_current_directory() -> None:
    assert (
        not settings(CAFLEET_DATABASE_URL="sqlite:///rel.db").require_database_path().is_absolute()
    )


@pytest.mark.parametrize("url", ["sqlite:///~/x.db", "sqlite:///~alice/x.db"])
def test_a_url_path_starting_with_tilde_is_refused_since_it_is_not_expanded(url: str) -> None:
    with pytest.raises(Invalid) as raised:
        settings(CAFLEET_DATABASE_URL=url)

    assert raised.value.message == (
        f"database URL '{url}' starts its path with '~', which is not expanded inside a URL;"
        " give an absolute path (sqlite:////abs/path.db)"
    )


@pytest.mark.parametrize("url", ["sqlite://", "sqlite:///:memory:", "sqlite+pysqlite://"])
def test_an_in_memory_url_has_no_file_path(url: str) -> None:
    s = settings(CAFLEET_DATABASE_URL=url)

    assert s.database_path is None
    with pytest.raises(Invalid) as raised:
        s.require_database_path()
    assert raised.value.message == "database URL has no file path"


def test_the_body_limit_defaults_to_one_mib_and_takes_its_whole_range() -> None:
    assert settings().max_body_bytes == 1024 * 1024
    assert settings(CAFLEET_MAX_BODY_BYTES="1").max_body_bytes == 1
    assert settings(CAFLEET_MAX_BODY_BYTES=str(64 * 1024 * 1024)).max_body_bytes == 64 * 1024 * 1024


def test_the_largest_stall_interval_is_a_day_and_any_negative_turns_it_off() -> None:
    assert settings(CAFLEET_MONITOR_STALL_INTERVAL="86400").monitor_stall_interval == 86400
    assert settings(CAFLEET_MONITOR_STALL_INTERVAL="-99999999").monitor_stall_interval == -99999999


BODY_RANGE = "(expected an integer between 1 and 67108864)"
STALL_RANGE = "(expected an integer up to 86400; 0 or less turns stall checks off)"


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("CAFLEET_MAX_BODY_BYTES", "0", BODY_RANGE),
        ("CAFLEET_MAX_BODY_BYTES", "-1", BODY_RANGE),
        ("CAFLEET_MAX_BODY_BYTES", str(64 * 1024 * 1024 + 1), BODY_RANGE),
        ("CAFLEET_MAX_BODY_BYTES", "1e6", BODY_RANGE),
        ("CAFLEET_MAX_BODY_BYTES", "9" * 5000, BODY_RANGE),
        ("CAFLEET_MONITOR_STALL_INTERVAL", "86401", STALL_RANGE),
        ("CAFLEET_MONITOR_STALL_INTERVAL", str(2**63 - 1), STALL_RANGE),
        ("CAFLEET_MONITOR_STALL_INTERVAL", "9" * 5000, STALL_RANGE),
        ("CAFLEET_MAX_TEXT_LEN", "1000001", "(expected an integer between 1 and 1000000)"),
        ("CAFLEET_BROKER_PORT", "9" * 5000, "(expected an integer between 1 and 65535)"),
        ("CAFLEET_START_TIMEOUT", "inf", "(expected a number of seconds between 1 and 3600)"),
        ("CAFLEET_START_TIMEOUT", "1e400", "(expected a number of seconds between 1 and 3600)"),
        ("CAFLEET_SUBMIT_DELAY_CLAUDE", "-inf", "(expected a number of seconds between 0 and 10)"),
    ],
)
def test_every_number_setting_is_bounded(name: str, value: str, expected: str) -> None:
    with pytest.raises(Invalid) as caught:
        settings(**{name: value})

    assert caught.value.message == f"invalid value for {name}: {value!r} {expected}"


@pytest.mark.parametrize("value", ["screen", "TMUX", "tmux "])
def test_an_unknown_multiplexer_is_refused_naming_the_allowed_ones(value: str) -> None:
    assert invalid(CAFLEET_MULTIPLEXER=value) == (
        f"invalid value for CAFLEET_MULTIPLEXER: {value!r} (expected one of: herdr, tmux)"
    )

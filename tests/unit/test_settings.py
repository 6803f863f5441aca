"""Settings from CAFLEET_* variables: defaults, one-line validation errors, database URLs."""

from __future__ import annotations

from pathlib import Path

import pytest

from cafleet.domain.errors import Invalid
from cafleet.settings import Settings

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
    assert dict(s.submit_delays) == {"claude": 1.0, "codex": 1.0, "opencode": 1.0, "custom": 0.2}
    assert dict(s.agent_commands) == {
        "claude": ("claude", "node"),
        "codex": ("codex", "node"),
        "opencode": ("opencode", "node", "bun"),
    }
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
    )

    assert s.database_path == Path("/home/tester/.local/share/cafleet/cafleet_v2.db")
    assert (s.max_text_len, s.broker_port, s.submit_delays["codex"]) == (200, 8000, 1.0)


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
    assert s.submit_delays["claude"] == 0.0
    assert s.submit_delays["custom"] == 10.0
    assert s.agent_commands["codex"] == ("codex", "node")
    assert s.custom_agent_command == "my-agent --model {model}"
    assert s.debug is True


def test_debug_zero_is_off() -> None:
    assert settings(CAFLEET_DEBUG="0").debug is False


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        (
            "CAFLEET_MAX_TEXT_LEN",
            "abc",
            "invalid value for CAFLEET_MAX_TEXT_LEN: 'abc' (expected an integer >= 1)",
        ),
        (
            "CAFLEET_MAX_TEXT_LEN",
            "0",
            "invalid value for CAFLEET_MAX_TEXT_LEN: '0' (expected an integer >= 1)",
        ),
        (
            "CAFLEET_MAX_TEXT_LEN",
            "-3",
            "invalid value for CAFLEET_MAX_TEXT_LEN: '-3' (expected an integer >= 1)",
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
            "invalid value for CAFLEET_MONITOR_STALL_INTERVAL: 'soon' (expected an integer)",
        ),
        (
            "CAFLEET_AGENT_COMMANDS_CLAUDE",
            " , ",
            "invalid value for CAFLEET_AGENT_COMMANDS_CLAUDE: ' , '"
            " (expected a comma-separated list of command names)",
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
        "postgresql://user@localhost/cafleet",
        "mysql+pymysql:///cafleet",
        "cafleet.db",
        "sqlite:/relative.db",
        "sqlite://host/x.db",
    ],
)
def test_a_non_sqlite_url_is_rejected(url: str) -> None:
    assert invalid(CAFLEET_DATABASE_URL=url) == (
        f"unsupported database URL '{url}'; only sqlite:/// URLs are supported"
    )


@pytest.mark.parametrize(
    ("url", "path"),
    [
        ("sqlite:////abs/x.db", Path("/abs/x.db")),
        ("sqlite:///rel.db", Path("rel.db")),
        ("sqlite:///sub/dir/rel.db", Path("sub/dir/rel.db")),
        ("sqlite+pysqlite:///rel.db", Path("rel.db")),
        ("sqlite+pysqlite:////abs/x.db", Path("/abs/x.db")),
        ("sqlite:///~/x.db", Path("~/x.db")),
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


def test_tilde_is_not_expanded_in_a_user_url() -> None:
    path = settings(CAFLEET_DATABASE_URL="sqlite:///~/x.db").require_database_path()

    assert str(path) == "~/x.db"
    assert not path.is_absolute()


@pytest.mark.parametrize("url", ["sqlite://", "sqlite:///:memory:", "sqlite+pysqlite://"])
def test_an_in_memory_url_has_no_file_path(url: str) -> None:
    s = settings(CAFLEET_DATABASE_URL=url)

    assert s.database_path is None
    with pytest.raises(Invalid) as raised:
        s.require_database_path()
    assert raised.value.message == "database URL has no file path"

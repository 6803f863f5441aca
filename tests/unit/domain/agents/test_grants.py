"""What Claude Code and Codex need in their own settings to run `cafleet` as the Director."""

from __future__ import annotations

import pytest

from cafleet.domain.agents.grants import claude_grant, codex_grant

USER = "/home/me/.claude/settings.json"
PROJECT = "/home/me/project/.claude/settings.json"


def allowing(*rules: str) -> dict[str, object]:
    return {"permissions": {"allow": list(rules)}}


@pytest.mark.parametrize(
    "rule", ["Bash(cafleet:*)", "Bash(cafleet *)", "Bash(cafleet*)", "Bash", "Bash(*)"]
)
def test_a_rule_that_allows_cafleet_grants_claude(rule: str) -> None:
    grant = claude_grant([(USER, allowing("Edit", rule)), (PROJECT, None)])

    assert (grant.granted, grant.line) == (True, f"allow rule for cafleet in {USER}")


def test_the_projects_settings_count_too() -> None:
    grant = claude_grant([(USER, {"theme": "dark"}), (PROJECT, allowing("Bash(cafleet:*)"))])

    assert grant.granted and PROJECT in grant.line


@pytest.mark.parametrize(
    "settings",
    [None, {}, allowing("Bash(cafleetx:*)", "Bash(git:*)"), {"permissions": {"allow": "Bash"}},
     {"permissions": {"deny": ["Bash(cafleet:*)"]}}, ["Bash(cafleet:*)"]],
)  # fmt: skip
def test_without_such_a_rule_the_user_is_told_what_to_add_where(settings: object) -> None:
    grant = claude_grant([(USER, settings), (PROJECT, None)])

    assert not grant.granted
    assert grant.line == f'add "Bash(cafleet:*)" to permissions.allow in {USER}'


CONFIG = "/home/me/.codex/config.toml"
DATA = "/home/me/.local/share/cafleet"


def test_codex_without_sandbox_options_is_told_both() -> None:
    grant = codex_grant(CONFIG, {"model": "gpt-5"}, [DATA])

    assert not grant.granted
    assert grant.line == (
        f'set network_access = true and writable_roots = ["{DATA}"] under'
        f" [sandbox_workspace_write] in {CONFIG}"
    )


def test_codex_with_both_grants_is_granted() -> None:
    config = {"sandbox_workspace_write": {"network_access": True, "writable_roots": [f"{DATA}/"]}}

    assert codex_grant(CONFIG, config, [DATA]).granted


def test_codex_keeps_the_users_roots_and_adds_the_missing_ones() -> None:
    config = {"sandbox_workspace_write": {"network_access": True, "writable_roots": ["/srv/x"]}}

    grant = codex_grant(CONFIG, config, [DATA, "/run/user/1000/cafleet"])

    assert not grant.granted
    assert 'writable_roots = ["/srv/x", "/home/me/.local/share/cafleet", "/run/user/' in grant.line
    assert "network_access" not in grant.line


def test_codex_without_a_sandbox_needs_nothing() -> None:
    assert codex_grant(CONFIG, {"sandbox_mode": "danger-full-access"}, [DATA]).granted


def test_codex_with_no_directory_to_write_needs_only_the_socket() -> None:
    """PostgreSQL: no database file, and the runtime directory in the temporary one."""
    grant = codex_grant(CONFIG, None, [])

    assert grant.line == f"set network_access = true under [sandbox_workspace_write] in {CONFIG}"

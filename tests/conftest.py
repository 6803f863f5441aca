"""Plugins every suite can use (fixtures that need no suite of their own)."""

pytest_plugins = ["support.postgres_fixtures", "support.tmux"]

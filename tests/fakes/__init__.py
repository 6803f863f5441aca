"""Test doubles that stand in for external programs (servers speaking a real wire format)."""

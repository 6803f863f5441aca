"""Tests that run the real coding-agent CLIs offline against a scripted model server."""

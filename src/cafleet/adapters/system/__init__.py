"""This machine: clock, processes, hosts, git (standard library only)."""

"""Members: the registry, spawning and readiness, removal, status, their panes."""

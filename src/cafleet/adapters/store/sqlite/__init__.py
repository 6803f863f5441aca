"""The storage ports on the standard sqlite3 module: the CLI's hot path (docs/architecture.md)."""

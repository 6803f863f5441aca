"""CAFleet: a SQLite message broker and pane driver for teams of coding agents."""

__version__ = "0.1.0"

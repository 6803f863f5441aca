"""`cafleet demo` and the built-in demo agent: stand-ins for the outside world that drive
the CLI the way a user and a coding agent do, from outside the hexagon."""

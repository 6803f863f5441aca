"""The coding agents' own files and programs."""

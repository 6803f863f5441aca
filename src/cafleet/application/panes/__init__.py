"""The one way anything touches a pane: keystrokes, steps, gatherings, teardown."""

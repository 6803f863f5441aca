"""The module a member's pane runs to start its agent: `python -m <LAUNCH_MODULE> <launch file>`.

One name for every way a pane is started (launch pads, herdr's typed launch line, tmux server
jobs). Imports nothing, so the launcher and the hook stay cheap to import.
"""

LAUNCH_MODULE = "cafleet.entrypoints.processes.launch"

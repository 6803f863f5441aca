"""`python -m cafleet.launch`, kept for one release: members started before
the move name this module in their launch files or hook settings."""

import sys

from cafleet.entrypoints.processes.launch import main

if __name__ == "__main__":
    sys.exit(main())

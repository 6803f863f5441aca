"""`python -m cafleet.hook`, kept for one release: members started before
the move name this module in their launch files or hook settings."""

import sys

from cafleet.entrypoints.processes.hook import main

if __name__ == "__main__":
    sys.exit(main())

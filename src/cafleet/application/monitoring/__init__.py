"""The monitor: its loop, schedules and the slot only one loop holds."""

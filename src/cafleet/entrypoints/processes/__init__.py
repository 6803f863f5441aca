"""The programs CAFleet starts itself (`python -m ...`); never typed by a user."""

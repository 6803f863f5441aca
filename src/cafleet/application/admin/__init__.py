"""What the WebUI reads and does."""

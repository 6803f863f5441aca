"""The relay: panes on another host, driven through the store."""

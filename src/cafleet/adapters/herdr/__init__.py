"""herdr (herdr.dev) through its Unix-socket JSON API: client, pane driver, pane locator."""

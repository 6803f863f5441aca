"""The admin WebUI server: a FastAPI app over the application services.

Import `cafleet.entrypoints.http.app` for the app factory. This package module
imports nothing, so the CLI can use `binding` without loading the web stack.
"""

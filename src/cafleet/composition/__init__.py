"""The one place that builds CAFleet's object graph (components.py); the container for the
long-running entrypoints and tests (container.py) and the fakes (fakes.py) build on it.

Importing this package loads only components.py, which imports only the standard library."""

from cafleet.composition.components import Adapters, Components

__all__ = ["Adapters", "Components"]

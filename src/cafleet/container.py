"""Kept for callers of the old module name: the container lives in cafleet.composition."""

from cafleet.composition.container import Container, build_container, build_fake_container

__all__ = ["Container", "build_container", "build_fake_container"]

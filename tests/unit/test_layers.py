"""The house's rules, read from the source (every import, lazy ones and type-only ones too):
the domain depends on the standard library alone, the application adds the domain, adapters
never reach up into the composition or the entrypoints, and no two modules import each other
round a circle."""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "cafleet"
# (_sha2 is 3.12's name of 3.11's _sha256: each list knows only its own)
STDLIB = frozenset(sys.stdlib_module_names) | {"__future__", "_sha2", "_sha256"}
# layer -> the cafleet layers it may import besides itself (and the standard library)
ALLOWED = {
    "domain": (),
    "application": ("domain",),
}
NEVER_FROM_ADAPTERS = ("cafleet.composition", "cafleet.container", "cafleet.entrypoints")


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def modules() -> dict[str, Path]:
    return {
        module_name(path): path
        for path in PACKAGE.rglob("*.py")
        if "migrations" not in path.relative_to(PACKAGE).parts
    }


def imports_of(path: Path) -> Iterator[str]:
    """Every module an import statement of the file names, at any depth."""
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module
            # `from cafleet.x import y` imports module cafleet.x.y when there is one
            yield from (f"{node.module}.{a.name}" for a in node.names)


def cafleet_imports(path: Path) -> set[str]:
    known = modules()
    return {name for name in imports_of(path) if name in known}


def layer_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_inner_layers_import_only_the_standard_library_and_the_layers_below(layer: str) -> None:
    broken = []
    for module, path in sorted(modules().items()):
        if layer_of(module) != layer:
            continue
        for name in sorted(set(imports_of(path))):
            top = name.split(".")[0]
            if top == "cafleet":
                if name in modules() and layer_of(name) not in (layer, *ALLOWED[layer]):
                    broken.append(f"{module} imports {name}")
            elif top not in STDLIB:
                broken.append(f"{module} imports {name} (not the standard library)")
    assert broken == []


def test_adapters_never_import_the_composition_or_the_entrypoints() -> None:
    broken = [
        f"{module} imports {name}"
        for module, path in sorted(modules().items())
        if layer_of(module) == "adapters"
        for name in sorted(cafleet_imports(path))
        if name.startswith(NEVER_FROM_ADAPTERS)
    ]
    assert broken == []


def test_no_modules_import_each_other_round_a_circle() -> None:
    graph = {module: cafleet_imports(path) - {module} for module, path in modules().items()}
    # a package's __init__ is imported with any of its modules: it is not an edge back
    graph = {m: {n for n in names if not m.startswith(n + ".")} for m, names in graph.items()}
    circles = []
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(module: str) -> None:
        state[module] = 1
        path.append(module)
        for name in sorted(graph.get(module, ())):
            if state.get(name) == 1:
                circles.append(" -> ".join([*path[path.index(name) :], name]))
            elif name not in state:
                visit(name)
        path.pop()
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module)
    assert circles == []

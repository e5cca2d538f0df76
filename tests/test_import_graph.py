"""The package structure (issue 24): no import cycles between modules, no module over 400 lines.

The import graph is read with ``ast`` from every module of the four packages (nothing is imported):
an edge A -> B for each ``import B`` / ``from B import x`` / ``from pkg import B`` in A, wherever it
stands (top level, inside a function, under ``TYPE_CHECKING``: a cycle through a lazy or type-only
import is still two modules that cannot be understood one before the other). An import of one of the
module's own ancestor packages is not an edge (a lazily loaded package's ``__init__`` imports none of
its submodules). ``graphlib`` then orders the modules, and fails on a cycle, naming it.
"""

from __future__ import annotations

import ast
import graphlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("convergence", "problems", "proofs_check", "reports")
MAX_LINES = 400


def _modules() -> dict[str, tuple[Path, bool]]:
    """Every module of the four packages: dotted name -> (file, is a package's __init__)."""
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            found[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return found


MODULES = _modules()


def _edges(name: str, path: Path, is_package: bool) -> set[str]:
    """The modules of the four packages that ``name`` imports (module docstring)."""
    targets = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                parts = name.split(".") if is_package else name.split(".")[:-1]
                base = ".".join(parts[: len(parts) - (node.level - 1)] + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            targets += [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names]
        elif isinstance(node, ast.Import):
            targets += [a.name for a in node.names]
    edges = set()
    for target in targets:
        while target and target not in MODULES:
            target = target.rpartition(".")[0]
        if target and target != name and not name.startswith(target + "."):
            edges.add(target)
    return edges


def test_the_import_graph_has_no_cycle() -> None:
    graph = {name: _edges(name, path, is_package) for name, (path, is_package) in MODULES.items()}
    assert len(graph) > 200 and graph["reports.cli"]  # the scan sees every module and its imports
    try:
        tuple(graphlib.TopologicalSorter(graph).static_order())
    except graphlib.CycleError as error:
        pytest.fail(f"import cycle: {' -> '.join(error.args[1])}")


def test_a_cycle_is_found() -> None:
    with pytest.raises(graphlib.CycleError):
        tuple(graphlib.TopologicalSorter({"a": {"b"}, "b": {"a"}}).static_order())


def test_no_module_is_over_400_lines() -> None:
    long = {name: n for name, (path, _) in MODULES.items()
            if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not long, f"modules over {MAX_LINES} lines (split them by concept): {long}"

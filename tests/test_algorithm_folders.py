"""Algorithm folders are plug-ins (docs/architecture.md, "Adding an algorithm"): a folder under
``convergence/algorithms/`` (fedavg, fedprox, scaffold, block_cyclic) imports the shared layer
(the modules directly in ``convergence/algorithms/``, the rest of ``convergence``, ``problems``)
and its own modules, and another algorithm only through that folder's package (its public names,
``from ..fedavg import FedAvgEngine``), never one of its modules (its internals). So a new
algorithm is one folder plus one registry line, and changing one algorithm's internals cannot
break another.

The imports are read from the source (ast), relative and absolute, at module and function level.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ALGORITHMS = Path(__file__).resolve().parents[1] / "convergence" / "algorithms"
FOLDERS = sorted(p.name for p in ALGORITHMS.iterdir() if (p / "__init__.py").is_file())


def imported_modules(path: Path, folder: str) -> list[tuple[int, list[str]]]:
    """(line, the absolute names it may import: the module and module.name for each name) of every
    import in ``path``, a module of ``folder``."""
    package = ["convergence", "algorithms", folder]
    out = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            out.append((node.lineno, [module] + [f"{module}.{alias.name}" for alias in node.names]))
        elif isinstance(node, ast.Import):
            out += [(node.lineno, [alias.name]) for alias in node.names]
    return out


def is_internal_of_another(name: str, folder: str, root: Path, folders: list[str]) -> bool:
    """Whether ``name`` is a module of an algorithm folder other than ``folder``."""
    parts = name.split(".")
    return (parts[:2] == ["convergence", "algorithms"] and len(parts) >= 4 and parts[2] != folder
            and parts[2] in folders and (root / parts[2] / f"{parts[3]}.py").is_file())


def foreign_internals(folder: str, root: Path = ALGORITHMS, folders: list[str] = FOLDERS) -> list[str]:
    """``file:line`` for every import of another algorithm folder's module."""
    return [f"{path.relative_to(root)}:{line}" for path in sorted((root / folder).glob("*.py"))
            for line, names in imported_modules(path, folder)
            if any(is_internal_of_another(name, folder, root, folders) for name in names)]


def test_the_folders_are_found() -> None:
    assert {"fedavg", "fedprox", "scaffold", "block_cyclic"} <= set(FOLDERS)


@pytest.mark.parametrize("folder", FOLDERS)
def test_no_folder_imports_another_algorithms_internals(folder: str) -> None:
    assert foreign_internals(folder) == []


def test_the_rule_catches_an_internal_import(tmp_path: Path) -> None:
    """The check itself must be able to fail: ``..fedavg.engine`` and ``from ..fedavg import engine``
    are reported, ``from ..fedavg import FedAvgConfig`` (the package's public name) is not."""
    for folder in ("fedavg", "mine"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "__init__.py").write_text("")
    (tmp_path / "fedavg" / "engine.py").write_text("")
    (tmp_path / "mine" / "engine.py").write_text(
        "from ..fedavg.engine import FedAvgEngine\nfrom ..fedavg import FedAvgConfig\nfrom ..fedavg import engine\n")
    assert foreign_internals("mine", tmp_path, ["fedavg", "mine"]) == ["mine/engine.py:1", "mine/engine.py:3"]

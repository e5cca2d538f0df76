"""Module layout: no module imports a private name (leading underscore) from another module.

DESIGN.md: "everything else is private by a leading underscore, and a private name is never imported
from another module". The scan reads every module of the four packages with ``ast`` (nothing is
imported) and lists each private import as (importer, source module, name):

* ``from M import _name`` (absolute or relative), ``from pkg import _module``;
* ``from pkg._module import ...`` or ``import pkg._module`` from another top-level package (a private
  module such as ``problems._base`` is its own package's business);
* ``alias._name`` where ``alias`` is bound to a module by ``import M as alias`` or ``from pkg import
  module as alias``.

Only names of the four packages count (``os._exit`` is documented API); dunder names
(``__version__``) are not private. There are no exceptions: the last ones (the old run path's shared
reference helpers) went with the one algorithm contract.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("convergence", "problems", "proofs_check", "reports")


class PrivateImport(NamedTuple):
    """One private import: the importing module, the module it reads from, the private name."""

    importer: str
    source: str
    name: str


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _private_module(dotted: str) -> bool:
    return any(_is_private(part) for part in dotted.split("."))


def _resolve(importer: str, is_package: bool, module: str | None, level: int) -> str:
    """The absolute module name of ``from <level dots><module> import ...`` inside ``importer``."""
    if level == 0:
        return module or ""
    parts = importer.split(".") if is_package else importer.split(".")[:-1]
    base = parts[: len(parts) - (level - 1)]
    return ".".join(base + ([module] if module else []))


def private_imports(
    source: str, importer: str, *, is_package: bool = False, is_module: Callable[[str], bool]
) -> set[PrivateImport]:
    """Every private import of one module's source (module docstring); ``is_module(dotted)`` says whether
    a dotted name is a module (for ``from pkg import module as alias``)."""
    found: set[PrivateImport] = set()
    top = importer.split(".")[0]
    module_aliases: dict[str, str] = {}
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            origin = _resolve(importer, is_package, node.module, node.level)
            if origin.split(".")[0] not in PACKAGES:
                continue  # another project's names (os._exit is documented API)
            if _private_module(origin) and origin.split(".")[0] != top:
                found.add(PrivateImport(importer, origin, origin))
            for alias in node.names:
                if _is_private(alias.name):
                    found.add(PrivateImport(importer, origin, alias.name))
                elif is_module(f"{origin}.{alias.name}"):
                    module_aliases[alias.asname or alias.name] = f"{origin}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] not in PACKAGES:
                    continue
                if _private_module(alias.name) and alias.name.split(".")[0] != top:
                    found.add(PrivateImport(importer, alias.name, alias.name))
                if alias.asname:  # import a.b as c binds c to a.b
                    module_aliases[alias.asname] = alias.name
                else:  # import a.b binds a
                    root = alias.name.split(".")[0]
                    module_aliases[root] = root
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Attribute) and _is_private(node.attr)):
            continue
        owner = _dotted(node.value)
        if owner is None or owner.split(".")[0] not in module_aliases:
            continue
        root, *rest = owner.split(".")
        target = ".".join([module_aliases[root], *rest])
        if not rest or is_module(target):
            found.add(PrivateImport(importer, target, node.attr))
    return found


def _dotted(expr: ast.expr) -> str | None:
    """``a.b.c`` for a chain of names and attributes, None for anything else (a call, a subscript)."""
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute):
        owner = _dotted(expr.value)
        return None if owner is None else f"{owner}.{expr.attr}"
    return None


def _module_name(path: Path) -> tuple[str, bool]:
    """(dotted name, is a package's __init__) of a file under ROOT."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        return ".".join(parts[:-1]), True
    return ".".join(parts), False


def _is_repo_module(dotted: str) -> bool:
    path = ROOT.joinpath(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _scan_packages() -> set[PrivateImport]:
    found: set[PrivateImport] = set()
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py*")):
            if path.suffix not in (".py", ".pyi"):
                continue
            name, is_package = _module_name(path)
            found |= private_imports(path.read_text(encoding="utf-8"), name, is_package=is_package,
                                     is_module=_is_repo_module)
    return found


def test_no_module_imports_a_private_name_from_another_module() -> None:
    unexpected = sorted(_scan_packages())
    assert not unexpected, "private names imported across modules (make them public where they belong):\n" + "\n".join(
        f"  {p.importer} imports {p.name} from {p.source}" for p in unexpected)


def test_the_scan_finds_every_kind_of_private_import() -> None:
    def scan(source: str, importer: str, is_package: bool = False) -> set[PrivateImport]:
        return private_imports(source, importer, is_package=is_package, is_module=lambda name: name.endswith("rates"))

    assert scan("from .rates import _is_real, fit_rate\n", "convergence.checks") == {
        PrivateImport("convergence.checks", "convergence.rates", "_is_real")}
    assert scan("from ..convergence.rates import _MIN\n", "proofs_check.sub.module") == {
        PrivateImport("proofs_check.sub.module", "proofs_check.convergence.rates", "_MIN")}
    assert scan("from . import _helpers\n", "proofs_check", is_package=True) == {
        PrivateImport("proofs_check", "proofs_check", "_helpers")}
    assert scan("from convergence._rng import seed_key\n", "proofs_check.falsifier.search") == {
        PrivateImport("proofs_check.falsifier.search", "convergence._rng", "convergence._rng")}
    assert scan("import convergence._rng as rng\n", "reports.cli") == {
        PrivateImport("reports.cli", "convergence._rng", "convergence._rng")}
    assert scan("from convergence import rates as R\nR._is_real(1.0)\n", "proofs_check.framework.claim") == {
        PrivateImport("proofs_check.framework.claim", "convergence.rates", "_is_real")}
    assert scan("import convergence.rates\nconvergence.rates._as_count(1, 'n', minimum=0)\n", "reports.cli") == {
        PrivateImport("reports.cli", "convergence.rates", "_as_count")}
    # a package's own private module, dunders and an object's private attribute are not private imports
    assert scan("from ._base import FederatedProblem\nfrom .x import __version__\n", "problems.quadratic") == set()
    assert scan("import os\nfrom dataclasses import replace\nos._exit(0)\nreplace._x\nself._y = 1\n",
                "proofs_check.constants.regions") == set()


def _lazy_exports(package: Path) -> dict[str, str]:
    """The names a package's ``__init__.pyi`` stub exports, each with the submodule it comes from."""
    exports: dict[str, str] = {}
    for node in ast.parse((package / "__init__.pyi").read_text()).body:
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
            for alias in node.names:
                exports[alias.asname or alias.name] = node.module
    return exports


def test_no_lazy_export_is_shadowed_by_a_submodule_of_the_same_name() -> None:
    """A package's lazily exported name must not equal one of its submodules' names (unless it is that
    module): importing the submodule anywhere binds the package attribute to the module, so
    ``from pkg import name`` then returns the module instead of the function, depending on test order."""
    clashes = []
    for name in PACKAGES:
        package = ROOT / name
        submodules = {path.stem for path in package.glob("*.py")} | {
            path.name for path in package.iterdir() if (path / "__init__.py").exists()}
        clashes += [(name, export, source) for export, source in _lazy_exports(package).items()
                    if export in submodules and export != source]
    assert clashes == []

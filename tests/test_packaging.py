"""The wheel ships every package: each folder with an ``__init__.py`` under the four top-level
packages is found by pyproject.toml's ``[tool.setuptools.packages.find]`` (a folder left out installs
in editable mode but is missing from a plain ``pip install .``, as ``problems.models`` once was), and
nothing else is (the tests, the examples)."""

from __future__ import annotations

import tomllib
from pathlib import Path

from setuptools import find_packages

ROOT = Path(__file__).resolve().parents[1]
TOP_LEVEL = ("convergence", "problems", "proofs_check", "reports")


def test_every_package_folder_is_listed_in_pyproject() -> None:
    find = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]["find"]
    listed = set(find_packages(str(ROOT), include=find["include"]))
    found = {".".join(init.parent.relative_to(ROOT).parts)
             for top in TOP_LEVEL for init in (ROOT / top).rglob("__init__.py")}
    assert TOP_LEVEL[0] in found and "proofs_check.claims.li2020" in found  # the scan sees nested packages
    assert found - listed == set(), f"packages missing from pyproject.toml: {sorted(found - listed)}"
    assert listed - found == set(), f"pyproject.toml lists packages that do not exist: {sorted(listed - found)}"

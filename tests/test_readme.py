"""The README's Python code blocks run as written, so the README cannot rot.

Every ```python block of README.md is executed in a fresh namespace, in a temporary working
directory; a block that defines ``test_*`` functions (the example property test) has them called.
"""

from __future__ import annotations

import os
import re
import sys
import types
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.DOTALL)


def test_readme_has_python_blocks() -> None:
    assert len(BLOCKS) >= 3  # the property test, the API snippet, the export snippet


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_block_runs(index: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FEDBOUND_DATA", str(tmp_path / "data"))  # from_arrays writes here, not to the user's cache
    module = types.ModuleType(f"readme_block_{index}")  # a module of its own, as a user's file would be
    monkeypatch.setitem(sys.modules, module.__name__, module)  # (dataclasses look their module up)
    namespace = module.__dict__
    exec(compile(BLOCKS[index], f"README.md block {index}", "exec"), namespace)
    for name, value in list(namespace.items()):
        if name.startswith("test_") and callable(value):
            value()
    assert os.getcwd() == str(tmp_path)

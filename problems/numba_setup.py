"""What fedbound sets in Numba when Numba loads: each cached kernel compiled once per machine
(``problems.compile_once``) and cached kernels stamped with the kernel packages' source digest
(``problems.kernel_cache``).

``install()`` (run when ``problems`` or ``convergence`` is imported) does it at once if Numba is
loaded, else right after Python executes ``numba.core.dispatcher`` (which imports
``numba.core.caching`` first), through an import-system finder (the documented finder / loader
protocol: it finds nothing itself, it wraps the loader of that one module). So those packages stay
free of a Numba import (~0.4 s of CPU) until a kernel needs one, and both settings are in place
before any of fedbound's kernels is decorated (a cache picks its locator then).
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from types import ModuleType
from typing import Any

from . import compile_once, kernel_cache

__all__ = ["install"]

_DISPATCHER_MODULE = "numba.core.dispatcher"


def install() -> None:
    """Configure Numba now if it is loaded, else when ``numba.core.dispatcher`` loads; idempotent."""
    module = sys.modules.get(_DISPATCHER_MODULE)
    if module is not None:
        _configure(module)
    elif not any(isinstance(finder, _ConfigureOnImport) for finder in sys.meta_path):
        sys.meta_path.insert(0, _ConfigureOnImport())


def _configure(dispatcher_module: ModuleType) -> None:
    compile_once.patch(dispatcher_module)
    kernel_cache.install_locators(sys.modules["numba.core.caching"])


class _ConfigureOnImport(importlib.abc.MetaPathFinder):
    """Configures Numba right after Python executes ``numba.core.dispatcher``."""

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname != _DISPATCHER_MODULE:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None:
            return None
        spec.loader = _ConfiguringLoader(spec.loader)
        return spec


class _ConfiguringLoader(importlib.abc.Loader):
    def __init__(self, loader: Any) -> None:
        self._loader = loader

    def create_module(self, spec: Any) -> Any:
        return self._loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        module.__loader__ = self._loader
        self._loader.exec_module(module)
        _configure(module)

"""Numba's cache of fedbound's kernels, invalidated by any change of fedbound's kernel packages.

Numba stamps each cached function with its own source file only (the file's modification time and
size, ``numba.core.caching``'s locators' ``get_source_stamp``), but a compiled kernel also holds its
callees (linked in and inlined from other files) and the module-level constants it read when it was
compiled (``problems.models.cnn.layout``'s column numbers, thresholds such as
``dense.DENSE_BLAS_MIN_WORK``). Edit a callee's file, or a constant, and Numba loads the old
machine code for every caller whose own file did not change: stale results, silently (measurements
of kernel changes have run the old code that way).

Here every cached function of a guarded package (``KERNEL_PACKAGES``: every ``@njit(cache=True)``
of fedbound lives in ``problems`` or ``convergence``; tests add their own with ``guard``) is
stamped with (Numba's own stamp, the SHA-256 of the contents of every ``.py`` file of the guarded
packages, ``kernel_source_digest``). Numba keeps the stamp in each function's index (``.nbi``) and
drops an index whose stamp differs (recompiling and overwriting it), so any edit to those packages
recompiles the kernels once, and nothing stale is ever loaded. A content digest, not modification
times: a checkout that restores the same files (a branch switch back) keeps its cache. The price:
an edit anywhere in ``problems`` or ``convergence``, kernel or not, recompiles the kernels a run
needs (~190 s of CPU for the whole default ``fedbound verify``); the narrower rule, the files a
kernel module imports directly or not, still covers about 100 of those packages' 150 files (kernel
modules import the run store, the sweeps, the bench), so the simple rule costs little more.

Reliance on Numba's internals (numba 0.68; ``tests/test_kernel_cache.py`` checks them): a cache
finds its locator by asking each class of ``numba.core.caching.CacheImpl._locator_classes`` in
order (``from_function(py_func, source_path)``: an instance, or None to pass), and stores whatever
``get_source_stamp()`` returns (any picklable value) in the index, comparing it on every load
(``IndexDataCacheFile._load_index``). ``install_locators`` puts, in front of that list, a subclass
of each of Numba's own locators that takes only guarded functions and adds the digest to their
stamp; every other function gets Numba's locators as before. It must run before the guarded
modules' kernels are decorated (a cache picks its locator then): ``problems.numba_hooks`` runs it
when Numba loads.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Any

__all__ = ["KERNEL_PACKAGES", "guard", "install_locators", "kernel_source_digest"]

KERNEL_PACKAGES = ("problems", "convergence")

_guarded: list[str] = list(KERNEL_PACKAGES)


def guard(packages: tuple[str, ...]) -> None:
    """Add ``packages`` (top-level names) to the guarded ones; the digest covers their files too."""
    for name in packages:
        if name not in _guarded:
            _guarded.append(name)
    kernel_source_digest.cache_clear()


@functools.lru_cache(maxsize=1)
def kernel_source_digest() -> str:
    """SHA-256 (hex) over the guarded packages' ``.py`` files: each file's path relative to its
    package's parent folder and its bytes, in sorted order; computed once per process (~20 ms)."""
    digest = hashlib.sha256()
    for package in sorted(_guarded):
        spec = importlib.util.find_spec(package)
        for folder in (spec.submodule_search_locations or []) if spec is not None else []:
            root = Path(folder)
            for path in sorted(root.rglob("*.py")):
                digest.update(str(path.relative_to(root.parent)).encode() + b"\0")
                digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def _is_guarded(py_func: Any) -> bool:
    module = getattr(py_func, "__module__", None) or ""
    return module.partition(".")[0] in _guarded


def _fingerprinted(locator: type) -> type:
    """A subclass of Numba's locator class ``locator`` for guarded functions only, whose stamp is
    (Numba's stamp, ``kernel_source_digest()``)."""

    def from_function(cls: type, py_func: Any, py_file: str) -> Any:
        if not _is_guarded(py_func):
            return None
        return super(subclass, cls).from_function(py_func, py_file)

    def get_source_stamp(self: Any) -> Any:
        return (super(subclass, self).get_source_stamp(), kernel_source_digest())

    subclass = type(
        f"Fingerprinted{locator.__name__.lstrip('_')}",
        (locator,),
        {"from_function": classmethod(from_function), "get_source_stamp": get_source_stamp, "__module__": __name__},
    )
    return subclass


def install_locators(caching: ModuleType) -> None:
    """Put the fingerprinted locators in front of ``caching.CacheImpl._locator_classes``
    (``caching`` is ``numba.core.caching``); idempotent."""
    impl = caching.CacheImpl
    if any(getattr(cls, "__module__", None) == __name__ for cls in impl._locator_classes):
        return
    impl._locator_classes = [_fingerprinted(cls) for cls in impl._locator_classes] + list(impl._locator_classes)

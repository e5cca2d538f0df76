"""Dask workers warmed once: a worker plugin that imports fedbound's kernel modules and loads every
compiled kernel Numba's cache holds for them, when the worker joins a sweep's cluster, not on its
first task.

A Dask worker is a process of its own (on this machine or another), so it gets no forked start
(``convergence.sweep``, "Compiling once"): before, its first task imported fedbound (numba, scipy,
the problems) and loaded or compiled each kernel it met, and every sweep's first tasks on a fresh
worker paid that. ``run_dask`` registers ``WarmKernels`` with the cluster before it submits
anything; Dask runs its ``setup`` once on every worker (``idempotent``: registering it again, for
the next sweep, runs nothing on the workers that have it) and on every worker that joins later.

What a worker can load is what Numba's cache holds: the package's ``__pycache__`` folders (the
default), or ``NUMBA_CACHE_DIR``. Workers on this machine share the package's cache with the
driver. Workers on other machines need the same cache: run ``fedbound verify`` (or one sweep) once
on one of them so the kernels are compiled, and give every worker the same ``NUMBA_CACHE_DIR`` on a
shared file system (README, "Dask"); a kernel that is not in the cache is compiled by the first
task that needs it, on each worker that runs one, as before.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
import time
from dataclasses import dataclass
from typing import Any

from distributed import WorkerPlugin

__all__ = ["KERNEL_PACKAGES", "WarmKernels", "WarmedKernels", "load_cached_kernels"]

KERNEL_PACKAGES = ("convergence", "problems")
"""The packages whose modules hold fedbound's Numba kernels (every module is imported)."""


@dataclass(frozen=True)
class WarmedKernels:
    """What ``load_cached_kernels`` did in a process: the cached dispatchers it found, the specialisations
    it loaded from Numba's cache, and its wall seconds (imports included)."""

    dispatchers: int
    loaded: int
    seconds: float


def load_cached_kernels(packages: tuple[str, ...] = KERNEL_PACKAGES) -> WarmedKernels:
    """Import every module of ``packages`` and load, for each cached Numba dispatcher found in them, every
    specialisation its cache index holds for this machine and this version of the function (the index's
    key: signature, target machine, bytecode hash; ``numba.core.caching``). Loading is
    ``Dispatcher.compile(signature)``, which reads the cache before it would compile; an index entry of
    another machine or of an edited function is skipped, so nothing is compiled here."""
    from numba.core.registry import CPUDispatcher

    start = time.perf_counter()
    for name in packages:
        package = importlib.import_module(name)
        for info in pkgutil.walk_packages(package.__path__, f"{name}."):
            importlib.import_module(info.name)
    dispatchers = {id(value): value for module in list(sys.modules.values())
                   if getattr(module, "__name__", "").split(".")[0] in packages
                   for value in vars(module).values()
                   if isinstance(value, CPUDispatcher) and type(value._cache).__name__ == "FunctionCache"}
    loaded = 0
    for dispatcher in dispatchers.values():
        loaded += _load_cached(dispatcher)
    return WarmedKernels(len(dispatchers), loaded, time.perf_counter() - start)


def _load_cached(dispatcher: Any) -> int:
    """Load every specialisation of ``dispatcher`` that its cache holds for this machine and this bytecode;
    how many. (Numba's cache index is read through its private ``_cache_file``: there is no public way to
    list a cache's signatures.)"""
    cache = dispatcher._cache
    codegen = dispatcher.targetctx.codegen()
    loaded = 0
    for signature, magic, hashes in cache._cache_file._load_index():
        if magic == codegen.magic_tuple() and hashes == cache._index_key(signature, codegen)[2]:
            dispatcher.compile(signature)
            loaded += 1
    return loaded


class WarmKernels(WorkerPlugin):
    """The worker plugin (module docstring): ``setup`` runs ``load_cached_kernels`` once per worker and adds
    what it did to the worker's ``fedbound_warmups`` (a list of ``WarmedKernels``, one per setup: what
    ``client.run`` can read back)."""

    name = "fedbound-warm-kernels"
    idempotent = True

    def setup(self, worker: Any) -> None:
        warmed = load_cached_kernels()
        worker.fedbound_warmups = [*getattr(worker, "fedbound_warmups", []), warmed]

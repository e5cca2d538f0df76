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
shared file system (README, "Dask").

Compiling once. A kernel that is not in the cache yet (a cold cache, or a specialisation new to it)
is compiled by the first task that needs it. So that it is compiled once, not by every worker that
meets it at the same time, a sweep submits the first batch of each warm key (``SweepTask.warm_key``)
that has not yet finished a task on the cluster alone, holds the key's other batches back and
submits them when it has finished (``completed_warm_first``): its worker has then written the kernel
to the cache, where the others load it (the rule of the local pool, ``convergence.run_pool``).
Batches of other keys, and of keys the cluster has run, go at once. The driver remembers the keys
per scheduler address for the process's life; a key is a hint for speed only, and results are the
same in any order.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
import time
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from distributed import WorkerPlugin, as_completed

__all__ = ["KERNEL_PACKAGES", "WarmKernels", "WarmedKernels", "completed_warm_first", "load_cached_kernels"]

KERNEL_PACKAGES = ("convergence", "problems")
"""The packages whose modules hold fedbound's Numba kernels (every module is imported)."""


_CLUSTER_WARM_KEYS: dict[str, set[Hashable]] = {}
"""Per scheduler address, the warm keys of which a task has finished on that cluster (module docstring)."""


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


def completed_warm_first(client: Any, scheduler: str, cut: Sequence[Sequence[Any]],
                         submit: Callable[[Sequence[Any]], Any], futures: dict[Any, Any]) -> Iterator[Any]:
    """Submit the batches of ``cut`` (sequences of ``SweepTask``) with ``submit`` (a Dask future each, recorded
    in ``futures`` with its batch), the first batch of each warm key new to the cluster at ``scheduler`` alone
    and the key's other batches when its future has finished (module docstring, "Compiling once"); yield the
    futures as they complete. A failure stops the sweep (``sweep_executors.collect`` cancels every future in
    ``futures``, released ones included); a first batch whose future failed releases nothing."""
    warm = _CLUSTER_WARM_KEYS.setdefault(scheduler, set())
    held: dict[Hashable, list[Sequence[Any]]] = {}
    first_of: dict[Any, Hashable] = {}
    for batch in cut:
        key = batch[0].warm_key
        if key is not None and key not in warm and key in held:
            held[key].append(batch)
            continue
        future = submit(batch)
        futures[future] = batch
        if key is not None and key not in warm:
            held[key], first_of[future] = [], key
    completed = as_completed(list(futures), loop=client.loop)
    for future in completed:
        key = first_of.pop(future, None)
        if key is not None and future.status == "finished":
            warm.add(key)
            for batch in held.pop(key):
                released = submit(batch)
                futures[released] = batch
                completed.add(released)
        yield future

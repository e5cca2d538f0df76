"""Dask workers warmed once: a worker plugin that imports fedbound's kernel modules when the worker
joins a sweep's cluster, not on its first task; the kernels themselves are loaded by the tasks that
call them.

A Dask worker is a process of its own (on this machine or another), so it gets no forked start
(``convergence.sweep``, "Compiling once"): before, its first task imported fedbound (numba, scipy,
the problems), and the first batch of a warm key new to the cluster runs alone (below), so a worker
that imported only then did so while the other waited. ``run_dask`` registers ``WarmKernels`` with
the cluster before it submits anything; Dask runs its ``setup`` once on every worker, all at once
(``idempotent``: registering it again, for the next sweep, runs nothing on the workers that have it)
and on every worker that joins later.

The plugin loads no kernel. A kernel is loaded from Numba's cache (or compiled, if the cache lacks
it) by its first call in the worker, as in any process; a worker so loads only the kernels its tasks
run. Loading every specialisation the cache holds instead (as the plugin did first) costs about 10 ms
of CPU per specialisation in each worker whether a task calls it or not: a fresh 2-worker cluster's
first sweep of 64 FedAvg runs took 64 against 46 ms of CPU per run with 119 specialisations cached
(a full ``fedbound verify`` leaves 118), and 38 against 43 ms with only the sweep's 23 (README,
"Dask").

What a worker loads is what Numba's cache holds: the package's ``__pycache__`` folders (the
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

from problems.kernel_cache import KERNEL_PACKAGES

__all__ = ["WarmKernels", "WarmedModules", "completed_warm_first", "import_kernel_modules"]


_CLUSTER_WARM_KEYS: dict[str, set[Hashable]] = {}
"""Per scheduler address, the warm keys of which a task has finished on that cluster (module docstring)."""


@dataclass(frozen=True)
class WarmedModules:
    """What ``import_kernel_modules`` did in a process: how many modules of the packages the process holds
    after it, and its wall seconds."""

    modules: int
    seconds: float


def import_kernel_modules(packages: tuple[str, ...] = KERNEL_PACKAGES) -> WarmedModules:
    """Import every module of ``packages``; no kernel is loaded or compiled (a cached kernel is loaded from
    Numba's cache by its first call, module docstring)."""
    start = time.perf_counter()
    for name in packages:
        package = importlib.import_module(name)
        for info in pkgutil.walk_packages(package.__path__, f"{name}."):
            importlib.import_module(info.name)
    held = sum(1 for module in list(sys.modules) if module.split(".")[0] in packages)
    return WarmedModules(held, time.perf_counter() - start)


class WarmKernels(WorkerPlugin):
    """The worker plugin (module docstring): ``setup`` runs ``import_kernel_modules`` once per worker and adds
    what it did to the worker's ``fedbound_warmups`` (a list of ``WarmedModules``, one per setup: what
    ``client.run`` can read back)."""

    name = "fedbound-warm-kernels"
    idempotent = True

    def setup(self, worker: Any) -> None:
        warmed = import_kernel_modules()
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

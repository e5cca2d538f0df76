"""``convergence.dask_warm``: Dask workers load fedbound's kernels once, through a worker plugin.

What must hold: a sweep on a cluster registers the plugin; it runs once on each worker however many
sweeps follow (two sweeps here, on a real local cluster of two worker processes), and a worker that
ran it holds fedbound's kernel modules but no kernel yet, though the cache holds some (a task loads
the kernels it calls, not every one the cache has); the sweeps' results are the serial ones bit for
bit (batched, as every executor's). A kernel new to the cluster is
compiled once: the first batch of its warm key runs alone and the other worker loads it from Numba's
cache (counted with the dispatcher's own cache statistics in each worker).
"""

from __future__ import annotations

import os
import sys
import time
import uuid
from pathlib import Path

import numba
import numpy as np
import pytest
from test_sweep import _assert_identical, _requests

from convergence import SweepOptions, execute
from convergence.dask_warm import WarmKernels, import_kernel_modules
from problems.kernel_cache import KERNEL_PACKAGES
from convergence.sweep import SweepTask, run_sweep

_MEET_S = 3.0  # how long a task waits for a second task to reach the kernel (both workers at once, without the rule)


@numba.njit(cache=True)
def _kernel(x: float) -> float:
    total = 0.0
    for i in range(10):
        total += np.sqrt(x + i) * np.exp(-x / (i + 1.0))
    return total


def _meet_then_call(markers: str, value: float) -> dict[str, np.ndarray]:
    """Wait until two tasks have started (or _MEET_S), then call the cached kernel; which worker ran it, and
    how often that worker compiled it (cache misses) or loaded it from the cache (hits)."""
    (Path(markers) / uuid.uuid4().hex).touch()
    deadline = time.monotonic() + _MEET_S
    while len(os.listdir(markers)) < 2 and time.monotonic() < deadline:
        time.sleep(0.005)
    result = _kernel(value)
    stats = _kernel.stats
    return {"pid": np.array(os.getpid()), "value": np.array(result),
            "compiled": np.array(sum(stats.cache_misses.values())), "loaded": np.array(sum(stats.cache_hits.values()))}


def _warmups(dask_worker) -> list[int]:
    """The modules of fedbound's packages this worker held after each run of the plugin on it."""
    return [warmed.modules for warmed in getattr(dask_worker, "fedbound_warmups", [])]


def _held_kernels() -> tuple[int, int]:
    """How many modules of fedbound's packages this process holds, and how many compiled specialisations
    (loaded from the cache or compiled) their Numba dispatchers hold."""
    from numba.core.registry import CPUDispatcher

    modules = [module for name, module in list(sys.modules.items()) if name.split(".")[0] in KERNEL_PACKAGES]
    dispatchers = {id(value): value for module in modules for value in vars(module).values()
                   if isinstance(value, CPUDispatcher)}
    return len(modules), sum(len(dispatcher.overloads) for dispatcher in dispatchers.values())


def test_the_plugin_runs_once_per_worker_over_two_sweeps() -> None:
    from dask.distributed import Client, LocalCluster

    serial = execute(_requests(), SweepOptions(jobs=1, progress=False))  # the kernels are in the cache now
    with LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None) as cluster:
        options = SweepOptions(scheduler=cluster.scheduler_address, progress=False)
        first = execute(_requests(), options)
        second = execute(_requests(), options)
        with Client(cluster.scheduler_address, set_as_default=False) as client:
            per_worker = client.run(_warmups)
    _assert_identical(serial, first)
    _assert_identical(serial, second)
    assert len(per_worker) == 2 and all(len(runs) == 1 and runs[0] >= 1 for runs in per_worker.values())


def test_the_plugin_imports_the_kernel_modules_and_loads_no_kernel() -> None:
    from dask.distributed import Client, LocalCluster

    execute(_requests(), SweepOptions(jobs=1, progress=False))  # the cache holds the sweep's kernels
    with LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None) as cluster, \
            Client(cluster.scheduler_address, set_as_default=False) as client:
        client.register_plugin(WarmKernels())
        held = client.run(_held_kernels)
        warmups = client.run(_warmups)
    assert len(held) == 2 and all(kernels == 0 for _, kernels in held.values()), held  # a task loads what it calls
    assert all(runs == [modules] for (modules, _), runs in zip(held.values(), warmups.values())), (held, warmups)
    assert import_kernel_modules().modules == held[next(iter(held))][0]  # every module of the packages


def test_a_kernel_new_to_the_cluster_is_compiled_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from dask.distributed import LocalCluster

    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "numba-cache"))  # empty: the workers must compile it
    markers = tmp_path / "markers"
    markers.mkdir()
    tasks = [SweepTask(f"k{i}", _meet_then_call, (str(markers), float(i)), {"i": i}, "the test kernel")
             for i in range(8)]
    with LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None) as cluster:
        results = run_sweep(tasks, SweepOptions(scheduler=cluster.scheduler_address, progress=False))
    by_worker: dict[int, tuple[int, int]] = {}
    for result in results.values():  # each worker's last counts
        pid, counts = int(result["pid"]), (int(result["compiled"]), int(result["loaded"]))
        by_worker[pid] = max(by_worker.get(pid, counts), counts)
    assert len(by_worker) == 2, by_worker  # both workers ran the kernel ...
    assert sorted(by_worker.values()) == [(0, 1), (1, 0)], by_worker  # ... one compiled it, the other loaded it
    serial = run_sweep(tasks, SweepOptions(progress=False))
    assert all(np.array_equal(results[key]["value"], serial[key]["value"]) for key in serial)

"""``convergence.dask_warm``: Dask workers load fedbound's kernels once, through a worker plugin.

What must hold: a sweep on a cluster registers the plugin; it runs once on each worker however many
sweeps follow (two sweeps here, on a real local cluster of two worker processes), and a worker that
ran it holds the kernels the cache has (at least the one the first sweep compiled); the sweeps'
results are the serial ones bit for bit (batched, as every executor's).
"""

from __future__ import annotations

from test_sweep import _assert_identical, _requests

from convergence import SweepOptions, execute
from convergence.dask_warm import load_cached_kernels


def _warmups(dask_worker) -> list[int]:
    """The kernels each run of the plugin on this worker loaded."""
    return [warmed.loaded for warmed in getattr(dask_worker, "fedbound_warmups", [])]


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


def test_loading_the_cache_compiles_nothing_it_does_not_hold() -> None:
    warmed = load_cached_kernels()
    assert warmed.dispatchers > 0 and 0 <= warmed.loaded
    assert load_cached_kernels().loaded == warmed.loaded  # the same index read again: the same entries, loaded

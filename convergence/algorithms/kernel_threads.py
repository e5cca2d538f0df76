"""How many threads one kernel call may use: 1 (the default) or more, set explicitly.

Two levels of parallelism, which multiply: a sweep's ``jobs`` worker processes each run one seed
at a time, and one seed's kernel can run the clients of each round over ``threads`` threads
(``local_sgd``'s ``prange``; FedAvg and FedProx on linear models). Results are bit-identical for
every thread count, so the choice is about speed only:

* jobs > 1 (a process pool): every kernel runs single-threaded, so jobs processes use jobs cores.
  Threads are refused here, for two reasons: jobs x threads would oversubscribe the cores, and
  Numba's threads come from GNU OpenMP, which a forked worker cannot use once its parent has
  loaded a threaded kernel (the worker is terminated).
* jobs = 1 (this process): ``threads`` cores work on one seed, the way to use a second core on a
  single run (a sweep of many seeds is better served by jobs).

``using_kernel_threads(n)`` sets the count for the kernels called inside it (and Numba's thread
count), and ``kernel_threads()`` is what the engines read (``local_sgd.local_sgd_for_threads``). With 1 the threaded kernel is never
compiled or loaded, so no OpenMP thread exists and later process pools fork safely.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["kernel_threads", "using_kernel_threads", "check_threads"]

_threads = 1


def kernel_threads() -> int:
    """The number of threads a kernel called now may use (1 unless inside ``using_kernel_threads``)."""
    return _threads


def check_threads(threads: int, name: str = "threads") -> int:
    """``threads`` if it is an integer from 1 to the threads Numba launches (its
    NUMBA_NUM_THREADS, by default the CPU count), else ValueError naming ``name``."""
    from numba import config

    if isinstance(threads, bool) or not isinstance(threads, int) or not 1 <= threads <= config.NUMBA_NUM_THREADS:
        raise ValueError(f"{name}: expected an integer from 1 to {config.NUMBA_NUM_THREADS} (Numba's thread count, "
                         f"NUMBA_NUM_THREADS), got {threads!r}")
    return threads


@contextmanager
def using_kernel_threads(threads: int) -> Iterator[None]:
    """Kernels called inside run over ``threads`` threads (checked by ``check_threads``); the
    previous count is restored on exit."""
    global _threads
    check_threads(threads)
    previous = _threads
    if threads > 1:
        from numba import set_num_threads

        set_num_threads(threads)
    _threads = threads
    try:
        yield
    finally:
        _threads = previous
        if previous > 1:
            from numba import set_num_threads

            set_num_threads(previous)

"""How many threads one kernel call may use: 1 (the default) or more, set explicitly, and used
only where a round has enough work to gain from them.

Two levels of parallelism, which multiply: a sweep's ``jobs`` worker processes each run one seed
at a time, and one seed's kernel can run the clients of each round over ``threads`` threads
(``local_sgd``'s ``prange``; FedAvg, FedProx and SCAFFOLD on linear models). Results are
bit-identical for every thread count and either path, so the choice is about speed only:

* jobs > 1 (a process pool): every kernel runs single-threaded, so jobs processes use jobs cores.
  Threads are refused here, for two reasons: jobs x threads would oversubscribe the cores, and
  Numba's threads come from GNU OpenMP, which a forked worker cannot use once its parent has
  loaded a threaded kernel (the worker is terminated).
* jobs = 1 (this process): ``threads`` cores work on one seed, the way to use a second core on a
  single run (a sweep of many seeds is better served by jobs).

Threads per run from the work per round. The threaded kernel pays a barrier at the end of every
round (the server aggregates after all of the round's clients), about 20 us with a passive wait on
a loaded machine, so a run with little work per round is slower on 2 threads than on 1. Inside
``using_kernel_threads(n)`` with n > 1, a seed takes the threaded kernel only when its round does
``round_work`` >= ``min_work`` (default ``THREADED_MIN_WORK``) and has at least 2 participants;
otherwise the serial kernel runs (``threads_for_round``, which counts the paths taken in the
``KernelPaths`` that ``using_kernel_threads`` yields).

A passive wait. GNU OpenMP's threads spin for about 300,000 iterations (GOMP_SPINCOUNT's default,
a few ms) at every barrier before they sleep: with the other core busy, the spinning thread takes
its time slices from the work (one W2 run on 2 threads measured 0.53-0.56x the speed of 1, its
CPU time +80%). Before the threaded kernel first loads OpenMP (Numba starts its threads then),
``threads_for_round`` sets OMP_WAIT_POLICY=PASSIVE (the threads sleep at once), unless the user has
set OMP_WAIT_POLICY or GOMP_SPINCOUNT: their value is kept. A library that loaded OpenMP in this
process before (torch's own copy does not count) fixes its policy at that load.

Measured on this machine (2 cores, load average 4.2-5.4 from other engineers' jobs, so no core
was free), ``fedbound bench``'s pairing (7 alternated pairs, medians of per-pair wall ratios
1 thread / 2 threads with their quartiles): FedAvg, E = 20, softmax 60 x 10 (+ bias) synthetic
clients (d = 610) and W1 (least squares, d = 21, 5 rows per client, exact gradients):

=========================  ============  ===================  ===================  ===================
run                        work / round  GNU OpenMP default   OMP_WAIT_POLICY      Numba's workqueue
                                         (active spin)        PASSIVE              layer
=========================  ============  ===================  ===================  ===================
W1, N = 5, exact           10,500        0.09 [0.06, 0.11]    0.24 [0.24, 0.31]    0.10 [0.09, 0.11]
N = 5, batch 2             122,000       0.36 [0.31, 0.46]    0.98 [0.70, 1.01]    0.66 [0.63, 0.73]
N = 20, batch 2            488,000       0.10 [0.08, 0.21]    1.00 [0.96, 1.03]    0.82 [0.75, 0.89]
N = 5, batch 24            1,464,000     0.15 [0.08, 0.63]    0.94 [0.91, 0.98]    0.83 [0.82, 0.85]
N = 100, batch 2           2,440,000     0.75 [0.51, 1.02]    0.95 [0.94, 1.01]    0.92 [0.85, 0.95]
N = 20, batch 24           5,856,000     0.14 [0.13, 0.14]    0.97 [0.97, 1.01]    0.96 [0.93, 0.98]
W2, N = 100, batch 24      29,280,000    0.53 [0.52, 0.57]    1.03 [0.95, 1.07]    1.00 [0.97, 1.03]
=========================  ============  ===================  ===================  ===================

The passive wait is the layer kept (workqueue's condition variables cost more per round). With it
no run was slower on 2 threads than on 1 from 488,000 units of work per round up, and W1's round
(about 6 us of work against about 20 us of barrier) was 4x slower: ``THREADED_MIN_WORK`` = 500,000
(a round of about 0.2-1 ms on one thread) keeps such runs serial. With a free core the issue
measured W2 at 1.68-1.73x on 2 threads.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

__all__ = ["THREADED_MIN_WORK", "KernelPaths", "check_threads", "kernel_threads", "passive_wait", "round_work",
           "threads_for_round", "using_kernel_threads"]

THREADED_MIN_WORK = 1_000_000.0
"""Least ``round_work`` of a round for which a run asking for threads takes the threaded kernel
(the module docstring's measurement)."""


@dataclass
class KernelPaths:
    """How many linear-model kernel calls (one per seed) inside one ``using_kernel_threads`` ran
    the ``serial`` kernel and how many the ``threaded`` one (a CNN's, always serial, are not counted)."""

    serial: int = 0
    threaded: int = 0


@dataclass(frozen=True)
class _Setting:
    threads: int
    min_work: float
    paths: KernelPaths


_setting = _Setting(1, THREADED_MIN_WORK, KernelPaths())


def kernel_threads() -> int:
    """The number of threads a kernel called now may use (1 unless inside ``using_kernel_threads``)."""
    return _setting.threads


def check_threads(threads: int, name: str = "threads") -> int:
    """``threads`` if it is an integer from 1 to the threads Numba launches (its
    NUMBA_NUM_THREADS, by default the CPU count), else ValueError naming ``name``."""
    from numba import config

    if isinstance(threads, bool) or not isinstance(threads, int) or not 1 <= threads <= config.NUMBA_NUM_THREADS:
        raise ValueError(f"{name}: expected an integer from 1 to {config.NUMBA_NUM_THREADS} (Numba's thread count, "
                         f"NUMBA_NUM_THREADS), got {threads!r}")
    return threads


def round_work(participants: int, local_steps: int, rows: float, dim: int) -> float:
    """The work of one round, in units of one row's product with the model: participants x local
    steps E x rows per gradient (the batch, or a client's mean sample count for exact gradients)
    x d (features x classes)."""
    return float(participants) * local_steps * rows * dim


def passive_wait() -> None:
    """OMP_WAIT_POLICY=PASSIVE in this process's environment unless OMP_WAIT_POLICY or
    GOMP_SPINCOUNT is set (GNU OpenMP reads them when it loads)."""
    if "OMP_WAIT_POLICY" not in os.environ and "GOMP_SPINCOUNT" not in os.environ:
        os.environ["OMP_WAIT_POLICY"] = "PASSIVE"


def threads_for_round(participants: int, work: float) -> int:
    """The threads a kernel call whose rounds each have ``participants`` sampled clients and do
    ``work`` (``round_work``) runs on: ``kernel_threads()`` when that is more than 1, work >= the
    setting's ``min_work`` and participants >= 2, else 1. Counts the path in the setting's
    ``KernelPaths``; for more than 1, sets Numba's thread count (starting its threads with
    ``passive_wait`` on first use)."""
    setting = _setting
    if setting.threads == 1 or participants < 2 or work < setting.min_work:
        setting.paths.serial += 1
        return 1
    passive_wait()
    from numba import set_num_threads

    set_num_threads(setting.threads)
    setting.paths.threaded += 1
    return setting.threads


@contextmanager
def using_kernel_threads(threads: int, min_work: float = THREADED_MIN_WORK) -> Iterator[KernelPaths]:
    """Kernels called inside may run over ``threads`` threads (checked by ``check_threads``), on
    rounds of at least ``min_work`` (``threads_for_round``; 0: always); yields the ``KernelPaths``
    that count the paths taken inside. The previous setting is restored on exit. With 1, or while
    no round reaches ``min_work``, the threaded kernel is never compiled or loaded, so no OpenMP
    thread exists and later process pools fork safely."""
    global _setting
    check_threads(threads)
    if isinstance(min_work, bool) or not isinstance(min_work, (int, float)) or not min_work >= 0:
        raise ValueError(f"min_work: expected a number >= 0 (work per round), got {min_work!r}")
    previous = _setting
    _setting = _Setting(threads, float(min_work), KernelPaths())
    try:
        yield _setting.paths
    finally:
        _setting = previous

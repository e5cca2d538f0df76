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
round (the server aggregates after all of the round's clients), 15-40 us on W1 with a passive
wait, so a run with little work per round is slower on 2 threads than on 1. Inside
``using_kernel_threads(n)`` with n > 1, a seed takes the threaded kernel only when its round does
``round_work`` >= ``min_work`` (default ``THREADED_MIN_WORK``) and has at least 2 participants;
otherwise the serial kernel runs (``threads_for_round``, which counts the paths taken in the
``KernelPaths`` that ``using_kernel_threads`` yields).

A passive wait. GNU OpenMP's threads spin for about 300,000 iterations (GOMP_SPINCOUNT's default,
a few ms) at every barrier before they sleep: with the other core busy, the spinning thread takes
time slices from the work (W2 on 2 threads ran at 0.52-0.70x the speed of 1 thread, with 25-85%
more CPU time). Before the threaded kernel first runs (Numba loads OpenMP and starts its threads
then), ``threads_for_round`` sets OMP_WAIT_POLICY=PASSIVE (the threads sleep at once), unless the
user has set OMP_WAIT_POLICY or GOMP_SPINCOUNT: their value is kept. A library that loaded GNU
OpenMP into this process earlier has fixed its policy at that load.

Measured on this machine (2 cores shared with other engineers' jobs, Intel, numba 0.68 with GNU
OpenMP): ``fedbound bench``'s pairing (7 alternated pairs, threaded kernel forced, min_work = 0),
the median of the per-pair wall ratios 1 thread / 2 threads [quartiles] (above 1: 2 threads
faster), FedAvg with E = 20 on W1 (least squares, d = 21, 5 rows per client, exact gradients) and
on synthetic(1, 1) softmax clients (60 x 10 + bias, d = 610, N clients, batch b):

================  ============  =================  =================  =================  =================
run               work / round  OpenMP, active     workqueue layer    OpenMP, PASSIVE    OpenMP, PASSIVE
                                spin (load 2.5)    (load 2.6)         (load 2.2)         (load 4.4-4.9)
================  ============  =================  =================  =================  =================
W1, N = 5         10,500        0.16 [0.09, 0.27]  0.09 [0.09, 0.09]  0.09 [0.08, 0.10]  0.30 [0.28, 0.31]
N = 5, b = 2      122,000       0.03 [0.02, 0.07]  0.70 [0.69, 0.72]  0.88 [0.87, 0.97]  0.91 [0.80, 0.97]
N = 10, b = 2     244,000       0.08 [0.07, 0.11]  0.77 [0.74, 0.81]  1.06 [1.04, 1.07]  0.86 [0.86, 0.89]
N = 20, b = 2     488,000       0.07 [0.07, 0.16]  0.87 [0.86, 0.87]  1.15 [1.07, 1.19]  0.97 [0.96, 1.09]
N = 5, b = 24     1,464,000     0.04 [0.04, 0.14]  0.86 [0.85, 0.88]  1.28 [1.24, 1.28]  1.00 [0.96, 1.22]
N = 20, b = 24    5,856,000     0.26 [0.14, 1.81]  0.97 [0.93, 0.99]  1.70 [1.68, 1.74]  0.97 [0.97, 1.01]
W2, N = 100, b 24 29,280,000    0.56 [0.54, 0.60]  1.03 [1.02, 1.05]  1.70 [1.60, 1.86]  1.03 [1.02, 1.05]
================  ============  =================  =================  =================  =================

(The last column's N = 20, b = 24 row is from a run with OMP_WAIT_POLICY=PASSIVE set in the
shell.) The passive wait is kept: it alone gains where a core is free (1.70x on W2 at load 2.2,
the issue's 1.68-1.73x), and where none is it stays near 1 from about 500,000 units a round,
while the workqueue layer never gains on 2 cores. Its CPU cost also falls with the work per
round: 2 threads took 1 / 0.69 = 1.45x the CPU time of 1 at 488,000 units, 1.27x at 1,464,000,
1.05x on W2. ``THREADED_MIN_WORK`` = 1,000,000 (a round of about 0.5-1 ms on one thread) keeps
runs below that serial: W1 (3-11x slower on 2 threads) and the runs whose small gain cost the most
extra CPU.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

__all__ = ["THREADED_MIN_WORK", "KernelPaths", "check_threads", "kernel_paths", "kernel_threads", "passive_wait", "round_work",
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

    def since(self, before: tuple[int, int]) -> KernelPaths:
        """The calls counted after ``before`` = (serial, threaded), a snapshot of these counts."""
        return KernelPaths(self.serial - before[0], self.threaded - before[1])

    @property
    def path(self) -> str | None:
        """"serial" or "threaded" when every counted call took that path, "serial+threaded" when both
        were taken, None when no call was counted (the kernels without a threaded variant: MM-/MC-PSGD,
        PR-SGD, a CNN's; the NumPy engine)."""
        taken = [name for name, calls in (("serial", self.serial), ("threaded", self.threaded)) if calls]
        return "+".join(taken) or None


@dataclass(frozen=True)
class _Setting:
    threads: int
    min_work: float
    paths: KernelPaths


_setting = _Setting(1, THREADED_MIN_WORK, KernelPaths())


def kernel_paths() -> KernelPaths:
    """The ``KernelPaths`` that count the calls made now (the innermost ``using_kernel_threads``'s, or this
    process's own outside one)."""
    return _setting.paths


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

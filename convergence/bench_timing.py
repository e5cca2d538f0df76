"""The timing tools of ``fedbound bench`` (``convergence.bench`` and ``convergence.bench_cnn``): the
median of repeated timings of one function (process CPU time unless told; comparisons of two
engines are alternated pairs, ``bench_pairs``), the machine's single-core matrix-product rate and
JAX's one-thread setting for its peers."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

__all__ = ["MIN_REPEATS", "JAX_ONE_THREAD", "median_seconds", "matmul_gflops", "jax_one_thread"]

MIN_REPEATS = 3
"""Fewest timings a median is taken over."""

JAX_ONE_THREAD = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
"""XLA_FLAGS asking JAX's CPU backend for one thread (set only when jax is not yet imported and
XLA_FLAGS is unset)."""


def median_seconds(fn: Callable[[], Any], repeats: int, calls: int = 1, cpu: bool = True) -> float:
    """Median over ``repeats`` of the time of ``calls`` calls of fn, per call: process CPU time
    (``time.process_time``, all of this process's threads), or wall time with ``cpu=False`` (for
    work done in other processes)."""
    clock = time.process_time if cpu else time.perf_counter
    times = []
    for _ in range(repeats):
        start = clock()
        for _ in range(calls):
            fn()
        times.append((clock() - start) / calls)
    return float(np.median(times))


def matmul_gflops(repeats: int = 5, dtype: type = np.float64) -> float:
    """Single-core GFLOP/s of a 1000 x 1000 matrix product in ``dtype`` (median of ``repeats``, CPU time)."""
    rng = np.random.default_rng(0)
    a, b = rng.random((1000, 1000)).astype(dtype), rng.random((1000, 1000)).astype(dtype)
    with threadpool_limits(limits=1):
        return 2e9 / median_seconds(lambda: a @ b, repeats) / 1e9


def jax_one_thread() -> None:
    """Ask JAX's CPU backend for one thread (XLA_FLAGS = JAX_ONE_THREAD), when jax is not yet
    imported and XLA_FLAGS is unset (a user's own flags are kept)."""
    if "jax" not in sys.modules and "XLA_FLAGS" not in os.environ:
        os.environ["XLA_FLAGS"] = JAX_ONE_THREAD

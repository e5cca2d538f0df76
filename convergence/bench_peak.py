"""The core's peak multiply-add rate, measured, and a floor engine that does a workload's flops at
it: the CNN floor of ``fedbound bench`` (``bench_cnn``).

``fma_peak`` runs ``PEAK_CHAINS`` independent multiply-add chains over one vector in L1 cache,
s_k <- s_k + x[t] c_k for k < PEAK_CHAINS (one load of x[t] for all of them). Compiled with
reassociation and FMA contraction, LLVM vectorises each chain over t into vector accumulators
(AVX-512 on this machine: 16 float32 or 8 float64 lanes per FMA) and interleaves them, so the loop
has one load per PEAK_CHAINS vector FMAs and at least PEAK_CHAINS independent accumulators: more
than the FMA pipes' latency x throughput (Zen 4: 4 cycles x 1 AVX-512 FMA per cycle, two 256-bit
pipes), so the FMA pipes, not loads or dependences, set its speed. Measured on this machine (AMD
EPYC, Zen 4, one thread, process CPU, load ~5): 114.8 float32 GFLOP/s over 4,096 entries (32
flops per cycle at 3.59 GHz, within the part's 3.7 GHz boost; OpenBLAS's 1000^3 sgemm 97.8), 56.3
float64 (sgemm's dgemm 48.3). A flop is half a multiply-add, as in every rate here.

``peak_engine`` does ``flops`` flops per call at that rate: the time the core's FMA pipes need for
them, below which no implementation that performs those multiply-adds on one core can run.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .bench_pairs import Engine
from .bench_timing import median_seconds

__all__ = ["PEAK_CHAINS", "PEAK_VECTOR", "fma_peak", "peak_engine", "peak_gflops"]

PEAK_CHAINS = 12
"""Independent multiply-add chains of ``fma_peak`` (each a vector accumulator after vectorising)."""
PEAK_VECTOR = 4096
"""Entries of the vector ``fma_peak`` runs over (16 KB of float32: in L1 with room to spare; shorter
vectors lose to the loop's start and its horizontal sums, 88.6 GFLOP/s at 256 float32 entries)."""


@njit(cache=True, fastmath={"reassoc", "contract"})
def fma_peak(x, c, rounds):
    """``rounds`` passes of s_k += x[t] c[k] over t < x.size for k < PEAK_CHAINS (c has
    PEAK_CHAINS entries), in x's dtype: 2 PEAK_CHAINS x.size rounds flops; returns sum_k s_k (so
    the work is not optimised away)."""
    z = x.dtype.type(0)
    s0 = s1 = s2 = s3 = s4 = s5 = s6 = s7 = s8 = s9 = s10 = s11 = z
    c0, c1, c2, c3, c4, c5 = c[0], c[1], c[2], c[3], c[4], c[5]
    c6, c7, c8, c9, c10, c11 = c[6], c[7], c[8], c[9], c[10], c[11]
    for _ in range(rounds):
        for t in range(x.shape[0]):
            v = x[t]
            s0 += v * c0
            s1 += v * c1
            s2 += v * c2
            s3 += v * c3
            s4 += v * c4
            s5 += v * c5
            s6 += v * c6
            s7 += v * c7
            s8 += v * c8
            s9 += v * c9
            s10 += v * c10
            s11 += v * c11
    return s0 + s1 + s2 + s3 + s4 + s5 + s6 + s7 + s8 + s9 + s10 + s11


def _operands(dtype: type) -> tuple[np.ndarray, np.ndarray]:
    """fma_peak's vector (values in [0, 1e-3): the sums stay finite and normal) and its PEAK_CHAINS
    multipliers, in ``dtype``."""
    rng = np.random.default_rng(0)
    return (rng.random(PEAK_VECTOR) * 1e-3).astype(dtype), rng.random(PEAK_CHAINS).astype(dtype)


def _flops_per_round() -> int:
    return 2 * PEAK_CHAINS * PEAK_VECTOR


def peak_gflops(repeats: int, dtype: type = np.float32, rounds: int = 2000) -> float:
    """The core's multiply-add rate in ``dtype`` (GFLOP/s): ``fma_peak`` over ``rounds`` passes,
    the fastest of ``repeats`` timings (process CPU; a measured rate is at most the peak, so the
    fastest is the closest)."""
    x, c = _operands(dtype)
    fma_peak(x, c, 1)  # compiled or loaded before timing
    fastest = min(median_seconds(lambda: fma_peak(x, c, rounds), 1) for _ in range(repeats))
    return _flops_per_round() * rounds / fastest / 1e9


def peak_engine(flops: float, units: float, dtype: type = np.float32) -> Engine:
    """The floor as an engine: ``fma_peak`` over floor(flops / its flops per round) rounds per
    call, i.e. ``flops`` flops at the core's peak (rounded down, never more work than asked, but at
    least one round); ``units`` units of work per call."""
    x, c = _operands(dtype)
    rounds = max(1, int(flops // _flops_per_round()))
    return Engine("floor", lambda: fma_peak(x, c, rounds), units)

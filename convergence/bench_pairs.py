"""`fedbound bench`'s paired measurements: two engines alternated in one process (issue 29).

On a shared machine the load drifts during a run, and timing one engine's repeats and then the
other's lets that drift land on one side. Bench therefore runs the two engines of a comparison
alternately, A, B, A, B, ... (``measure_pairs``), after one warm-up call of each (which compiles,
jits or loads them), and keeps every pair i: the times of A's and B's i-th calls, each per unit
of work (a local client-step, an image). Each call is timed twice:

- process CPU time (``time.process_time``: every thread of this process, so the helper threads of
  JAX's or PyTorch's runtime and the second thread of a 2-thread kernel are counted), the time
  a busy machine does not inflate much;
- wall time (``time.perf_counter``), which is what a user waits for, and what another process
  on the same core inflates.

A comparison (``Comparison``, one row of bench's table) reports, for CPU and wall separately,
the per-pair ratios r_i = (A's time per unit) / (B's time per unit) summarised by
``RatioSpread``: their median, quartiles (``numpy.percentile``'s linear interpolation), min, max
and the number of pairs. The median of the ratios, not the ratio of the medians: a pair's two
calls ran under about the same load, so the load's drift cancels in each r_i. The load average
(``os.getloadavg``: runnable processes over 1, 5 and 15 minutes) is recorded before the first
and after the last call. Bench orders every comparison so that B is fedbound's kernel (or the
kernel on 2 threads): r > 1 means B is faster.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from problems import check_int

__all__ = ["Engine", "PairedMeasurement", "RatioSpread", "Comparison", "measure_pairs", "compare", "skipped"]


@dataclass(frozen=True)
class Engine:
    """One timed engine: ``run()`` does ``units`` units of work (client-steps, images) per call."""

    name: str
    run: Callable[[], Any]
    units: float


@dataclass(frozen=True)
class PairedMeasurement:
    """Pair i of a comparison: A's call then B's call, seconds per unit of work, process CPU and wall."""

    a_cpu_s: float
    a_wall_s: float
    b_cpu_s: float
    b_wall_s: float

    @property
    def cpu_ratio(self) -> float:
        """A's CPU time per unit over B's."""
        return self.a_cpu_s / self.b_cpu_s

    @property
    def wall_ratio(self) -> float:
        """A's wall time per unit over B's."""
        return self.a_wall_s / self.b_wall_s


@dataclass(frozen=True)
class RatioSpread:
    """Median, quartiles (q1, q3), min and max of per-pair ratios, and the number of pairs."""

    median: float
    q1: float
    q3: float
    low: float
    high: float
    pairs: int

    @classmethod
    def of(cls, ratios: Sequence[float]) -> RatioSpread:
        """The summary of ``ratios`` (at least one)."""
        r = np.asarray(ratios, dtype=np.float64)
        if r.ndim != 1 or r.size == 0:
            raise ValueError(f"ratios: expected a non-empty sequence of numbers, got shape {r.shape}")
        q1, median, q3 = np.percentile(r, [25.0, 50.0, 75.0])
        return cls(float(median), float(q1), float(q3), float(r.min()), float(r.max()), int(r.size))


@dataclass(frozen=True)
class Comparison:
    """One row of bench's table: engine ``a`` against engine ``b`` on ``workload``, alternated;
    ``pairs`` empty and ``note`` saying why when it was not measured (an optional peer absent, a
    thread count Numba does not have). Loads are ``os.getloadavg()`` (1, 5, 15 minutes) before
    the first call and after the last; ``unit`` names a unit of work."""

    workload: str
    a: str
    b: str
    unit: str
    pairs: tuple[PairedMeasurement, ...]
    load_start: tuple[float, float, float]
    load_end: tuple[float, float, float]
    note: str | None = None

    @property
    def measured(self) -> bool:
        return len(self.pairs) > 0

    @property
    def cpu(self) -> RatioSpread:
        """Spread of the per-pair CPU ratios A / B."""
        return RatioSpread.of([p.cpu_ratio for p in self.pairs])

    @property
    def wall(self) -> RatioSpread:
        """Spread of the per-pair wall ratios A / B."""
        return RatioSpread.of([p.wall_ratio for p in self.pairs])

    def median_us(self, engine: str, clock: str) -> float:
        """Median microseconds per unit of engine "a" or "b" on clock "cpu" or "wall"."""
        if engine not in ("a", "b") or clock not in ("cpu", "wall"):
            raise ValueError(f"engine, clock: expected 'a' or 'b' and 'cpu' or 'wall', got {engine!r}, {clock!r}")
        return float(np.median([getattr(p, f"{engine}_{clock}_s") for p in self.pairs])) * 1e6

    def to_json(self) -> dict[str, Any]:
        """The row with its pairs and, when measured, both ratio spreads."""
        row = asdict(self)
        if self.measured:
            row["cpu_ratio"], row["wall_ratio"] = asdict(self.cpu), asdict(self.wall)
        return row


def measure_pairs(a: Engine, b: Engine, pairs: int) -> tuple[PairedMeasurement, ...]:
    """Warm up a, then b (one call each, untimed), then call a, b, a, b, ... ``pairs`` times each;
    every call timed in process CPU and wall seconds, divided by its engine's units."""
    pairs = check_int("pairs", pairs, minimum=1, error=ValueError)
    a.run()
    b.run()
    measured = []
    for _ in range(pairs):
        a_cpu, a_wall = _timed(a)
        b_cpu, b_wall = _timed(b)
        measured.append(PairedMeasurement(a_cpu, a_wall, b_cpu, b_wall))
    return tuple(measured)


def compare(workload: str, a: Engine, b: Engine, pairs: int, unit: str) -> Comparison:
    """``measure_pairs(a, b, pairs)`` as a row of the table, with the load before and after."""
    start = os.getloadavg()
    measured = measure_pairs(a, b, pairs)
    return Comparison(workload, a.name, b.name, unit, measured, start, os.getloadavg())


def skipped(workload: str, a: str, b: str, unit: str, note: str) -> Comparison:
    """A row that was not measured, and why (printed in the table in its place)."""
    load = os.getloadavg()
    return Comparison(workload, a, b, unit, (), load, load, note)


def _timed(engine: Engine) -> tuple[float, float]:
    """(process CPU seconds, wall seconds) of one call of engine.run, per unit."""
    cpu, wall = time.process_time(), time.perf_counter()
    engine.run()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return cpu / engine.units, wall / engine.units

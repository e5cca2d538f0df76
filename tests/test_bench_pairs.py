"""Bench's paired measurements (``convergence.bench_pairs``, issue 29): engines alternate, each pair
is timed in process CPU and wall time per unit, a row reports the median of the per-pair ratios with
its spread, and the table prints the spread, the load and the reason for a row not measured. No
test here asserts a speed."""

from __future__ import annotations

import json
import os
import time

import numpy as np
import pytest

from convergence import bench
from convergence.bench import BenchReport, SweepScaling, WorkloadBench
from convergence.bench_floor import FloorModel, MachineRates
from convergence.bench_pairs import Comparison, Engine, PairedMeasurement, RatioSpread, compare, measure_pairs, skipped
from convergence.bench_report import format_bench, format_comparison


def recording(name: str, calls: list[str], units: float = 1.0) -> Engine:
    return Engine(name, lambda: calls.append(name), units)


def test_pairs_alternate_after_one_warm_up_of_each() -> None:
    calls: list[str] = []
    pairs = measure_pairs(recording("A", calls), recording("B", calls), 4)
    assert calls == ["A", "B"] * 5  # the warm-up pair, then A, B, A, B, ...
    assert len(pairs) == 4


def test_a_pair_times_process_cpu_and_wall_per_unit() -> None:
    # a sleeping engine takes wall time and (almost) no CPU; a call of 20 ms over 4 units is >= 5 ms a unit
    sleeper = Engine("sleep", lambda: time.sleep(0.02), 4)
    calls: list[str] = []
    (pair,) = measure_pairs(sleeper, recording("B", calls), 1)
    assert pair.a_wall_s >= 0.005
    assert pair.a_cpu_s < pair.a_wall_s / 2


def test_a_row_reports_the_median_of_per_pair_ratios_not_the_ratio_of_medians() -> None:
    a_cpu, b_cpu = np.array([2.0, 6.0, 3.0]), np.array([1.0, 2.0, 3.0])  # per-pair ratios 2, 3, 1
    a_wall, b_wall = np.array([4.0, 1.0, 9.0]), np.array([1.0, 1.0, 1.0])
    row = Comparison("W", "peer", "kernel", "client-step",
                     tuple(PairedMeasurement(*p) for p in zip(a_cpu, a_wall, b_cpu, b_wall)), (1.0, 1.0, 1.0),
                     (2.0, 2.0, 2.0))
    assert row.cpu.median == np.median(a_cpu / b_cpu) == 2.0
    assert np.median(a_cpu) / np.median(b_cpu) == 1.5  # what the median of ratios is not
    assert row.cpu == RatioSpread(2.0, *np.percentile(a_cpu / b_cpu, [25, 75]), 1.0, 3.0, 3)
    assert row.wall == RatioSpread(4.0, 2.5, 6.5, 1.0, 9.0, 3)  # numpy's linear percentiles of 4, 1, 9
    assert row.median_us("a", "cpu") == 3e6 and row.median_us("b", "wall") == 1e6
    data = row.to_json()
    json.dumps(data)
    assert data["cpu_ratio"]["median"] == 2.0 and len(data["pairs"]) == 3 and data["load_end"] == (2.0, 2.0, 2.0)


def test_ratio_spread_against_numpy_on_known_inputs() -> None:
    ratios = [1.0, 10.0, 2.0, 4.0, 3.0]
    spread = RatioSpread.of(ratios)
    assert (spread.median, spread.q1, spread.q3, spread.low, spread.high, spread.pairs) == (3.0, 2.0, 4.0, 1.0, 10.0, 5)
    assert spread.q1 == np.percentile(ratios, 25) and spread.q3 == np.percentile(ratios, 75)


def test_compare_records_the_load_before_and_after(monkeypatch: pytest.MonkeyPatch) -> None:
    loads = iter([(0.5, 0.6, 0.7), (3.0, 2.0, 1.0)])
    monkeypatch.setattr(os, "getloadavg", lambda: next(loads))
    calls: list[str] = []
    row = compare("W", recording("A", calls), recording("B", calls), 3, "client-step")
    assert row.load_start == (0.5, 0.6, 0.7) and row.load_end == (3.0, 2.0, 1.0)
    assert row.measured and row.cpu.pairs == 3


def test_bad_inputs_name_their_field() -> None:
    calls: list[str] = []
    with pytest.raises(ValueError, match="pairs"):
        measure_pairs(recording("A", calls), recording("B", calls), 0)
    with pytest.raises(ValueError, match="ratios"):
        RatioSpread.of([])
    row = skipped("W", "jax peer", "kernel", "client-step", "absent")
    with pytest.raises(ValueError, match="engine, clock"):
        row.median_us("c", "cpu")
    with pytest.raises(ValueError, match="repeats"):
        bench.run_bench(repeats=2, workloads=(), mc_psgd=False, scaling=False, cnn=False)


def test_threads_row_is_skipped_with_a_reason_where_numba_has_one_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    monkeypatch.setattr(bench.config, "NUMBA_NUM_THREADS", 1)
    row = bench._thread_rows("W1", recording("1 thread", calls), recording("2 threads", calls), 3)
    assert not row.measured and calls == [] and "NUMBA_NUM_THREADS = 1" in row.note
    assert "1 thread / 2 threads" in format_comparison(row) and "not measured: Numba has one thread" in \
        format_comparison(row)


def _report() -> BenchReport:
    pairs = (PairedMeasurement(3e-6, 3.3e-6, 1e-6, 1e-6), PairedMeasurement(2e-6, 2e-6, 1e-6, 1e-6),
             PairedMeasurement(4e-6, 4e-6, 1e-6, 2e-6))
    rows = (Comparison("W2", "numpy peer", "kernel", "client-step", pairs, (1.25, 1.0, 0.5), (2.5, 1.5, 0.75)),
            skipped("W2", "jax peer", "kernel", "client-step", "jax is not installed: the JAX peer is skipped"))
    workload = WorkloadBench("W2", "synthetic", FloorModel(60390.0, 240.0, 11712.0, "100 x (24x61)(61x10)", 1.5), rows,
                             1e-16, None)
    return BenchReport(3, MachineRates(50.0, 0.5, 0.9, 65536), None, (1.0, 2.0, 3.0), (4.0, 5.0, 6.0), (workload,),
                       SweepScaling(8, 50, 3, 1.5, 0.5), None)


def test_the_table_prints_the_spread_the_load_and_the_missing_peer() -> None:
    report = _report()
    text = format_bench(report)
    # CPU ratios 3, 2, 4: median 3, quartiles 2.5 and 3.5; wall ratios 3.3, 2, 2: median 2, quartiles 2, 2.65
    assert "W2       numpy peer / kernel         3 [2.5, 3.5] (2-4)" in text
    assert "2 [2, 2.65] (2-3.3)" in text
    assert "1.25 -> 2.50" in text  # the row's 1-minute load before and after
    assert "load average (1 / 5 / 15 min): 1.00 / 2.00 / 3.00 at the start, 4.00 / 5.00 / 6.00 at the end" in text
    assert "jax peer / kernel           not measured: jax is not installed: the JAX peer is skipped" in text
    assert "1.50 s with 1 process, 0.50 s with 2: speed-up 3.00x" in text
    assert "exp 0.50 ns" in text and "60390 flops (100 x (24x61)(61x10)), 240 exps, 11712 bytes" in text
    data = report.to_json()
    json.dumps(data)
    assert data["machine"]["exp_ns"] == 0.5 and data["sweep"]["speedup"] == 3.0 and data["workloads"][0]["comparisons"][1]["pairs"] == ()

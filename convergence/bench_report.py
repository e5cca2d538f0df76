"""The text of a `fedbound bench` report (``bench.BenchReport``): one line per comparison (ratio
A / B per unit of work, median [quartiles] (min-max) over the alternated pairs, in process CPU
time and in wall time, each engine's median CPU microseconds per unit, the 1-minute load before
and after), a row that was not measured with its reason, each floor's inputs, the peers'
agreement, the machine's rates and the load average of the whole run. The quantities are defined
in ``bench``, ``bench_pairs``, ``bench_floor`` and ``bench_cnn``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .bench_pairs import Comparison, RatioSpread

if TYPE_CHECKING:
    from .bench import BenchReport
    from .bench_cnn import CNNBench

__all__ = ["format_bench", "format_comparison"]

_HEADER = (f"{'workload':<9}{'A / B':<28}{'CPU ratio: median [q1, q3] (min-max)':<42}"
           f"{'wall ratio: median [q1, q3] (min-max)':<42}{'n':>3}{'A us':>11}{'B us':>11}  load 1-min")


def _spread(r: RatioSpread) -> str:
    return f"{r.median:.3g} [{r.q1:.3g}, {r.q3:.3g}] ({r.low:.3g}-{r.high:.3g})"


def format_comparison(c: Comparison) -> str:
    """One comparison's line: the two ratio spreads, the pairs, the engines' median CPU us per
    unit and the load; or its reason when it was not measured."""
    label = f"{c.workload:<9}{c.a + ' / ' + c.b:<28}"
    if not c.measured:
        return f"{label}not measured: {c.note}"
    line = (f"{label}{_spread(c.cpu):<42}{_spread(c.wall):<42}{c.cpu.pairs:>3}{c.median_us('a', 'cpu'):>11.4g}"
            f"{c.median_us('b', 'cpu'):>11.4g}  {c.load_start[0]:.2f} -> {c.load_end[0]:.2f}")
    return line if c.note is None else f"{line}  ({c.note})"


def _load(load: tuple[float, float, float]) -> str:
    return " / ".join(f"{x:.2f}" for x in load)


def format_bench(report: BenchReport) -> str:
    """The bench table, its floors and notes, the CNN workload and the sweep line."""
    m = report.machine
    lines = [
        f"fedbound bench: {report.pairs} alternated pairs per row (A, B, A, B, ... after a warm-up call of each); "
        "ratio = A / B per unit of work (client-step; CNN: image), median [quartiles] (min-max) over the pairs; "
        "CPU = process CPU time (all threads of the process), wall = wall time; A us, B us = median CPU "
        "microseconds per unit; one thread (BLAS, JAX, PyTorch) except the thread rows",
        f"load average (1 / 5 / 15 min): {_load(report.load_start)} at the start, {_load(report.load_end)} at the end",
        f"machine: 1000^3 matmul {m.matmul_gflops_1core:.1f} GFLOP/s on one core; exp {m.exp_ns:.2f} ns, the "
        f"cheaper over {m.exp_buffer} doubles of np.exp (out= a buffer, {m.exp_numpy_ns:.2f} ns) and the kernels' "
        f"vector_exp ({m.exp_kernel_ns:.2f} ns) (CPU time, medians of {report.pairs})",
        _HEADER,
    ]
    lines += [format_comparison(c) for w in report.workloads for c in w.comparisons]
    if report.cnn is not None:
        lines += [format_comparison(c) for c in report.cnn.comparisons]
    lines.append("1 thread / 2 threads: the wall ratio is the speed-up (2 at best, on two free cores); the CPU ratio "
                 "is 1 thread's CPU over both threads' (1 at best; below 1: CPU the second thread spent waiting)")
    lines.append("floor = the step's products at the workload's shapes + its exps (cheaper exp), timed as an engine; "
                 "in brackets the same flops at the 1000^3 rate:")
    for w in report.workloads:
        f = w.floor
        diffs = ", ".join(f"{name} max |w - w_kernel| = {value:.1e}" for name, value in
                          (("numpy peer", w.numpy_peer_max_abs_diff), ("jax peer", w.jax_max_abs_diff))
                          if value is not None)
        lines.append(f"  {w.workload}: {f.flops:.0f} flops ({f.product_shapes}), {f.exp_calls:.0f} exps, "
                     f"{f.bytes_read:.0f} bytes of data read (not in the floor) per client-step "
                     f"({f.large_product_us:.4f} us); {w.description}" + (f"; {diffs}" if diffs else ""))
    if report.cnn is not None:
        lines += _cnn_lines(report.cnn)
    if report.jax_version is not None:
        lines.append(f"jax {report.jax_version}")
    sc = report.sweep
    if sc is not None:
        lines.append(f"sweep of {sc.runs} FedAvg runs ({sc.rounds} rounds each), wall medians of {sc.repeats} after "
                     f"a warm-up: {sc.jobs1_s:.2f} s with 1 process, {sc.jobs2_s:.2f} s with 2: "
                     f"speed-up {sc.speedup:.2f}x")
    return "\n".join(lines)


def _cnn_lines(cnn: CNNBench) -> list[str]:
    """The CNN workload's floor, steps and agreement lines."""
    steps = ", ".join(f"batch {b}: {n} kernel steps per call ({shape})"
                      for b, n, shape in zip(cnn.batches, cnn.steps, cnn.product_shapes))
    agreement = (f"numpy vs numba float64 {cnn.numpy_rel_diff_float64:.1e}, numba float32 vs float64 "
                 f"{cnn.float32_rel_diff:.1e}")
    for name, value in (("jax", cnn.jax_rel_diff_float32), ("pytorch", cnn.torch_rel_diff_float32)):
        if value is not None:
            agreement += f", {name} vs numba float32 {value:.1e}"
    return [
        f"  CNN: {cnn.network}, one local SGD step in float32; {cnn.flops_per_image:,} flops per image of "
        f"multiply-adds; {steps}; floor: those flops at the core's float32 FMA peak "
        f"{cnn.peak_float32_gflops_1core:.1f} GFLOP/s, {cnn.floor_images_per_s:,.0f} images/s (the 1000^3 "
        f"float32 product: {cnn.matmul_float32_gflops_1core:.1f} GFLOP/s); images per CPU-second = 1e6 / us",
        f"  CNN agreement after {cnn.agreement_steps} steps at batch 2 (relative max difference of the parameters): "
        + agreement + ("" if cnn.torch_version is None else f"; torch {cnn.torch_version}"),
    ]

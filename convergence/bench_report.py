"""The text of a `fedbound bench` report (``bench.run_bench``'s JSON): the fixed-width table of the
workloads, the floor's assumptions per workload, the JAX note, thread and sweep scaling, and the CNN
workload's lines (``bench_cnn.format_cnn_bench``). The quantities are defined in ``bench``'s docstring."""

from __future__ import annotations

from typing import Any

__all__ = ["format_bench"]


def _cell(value: float | None, digits: int, width: int) -> str:
    return f"{'-':>{width}}" if value is None else f"{value:>{width}.{digits}f}"


def format_bench(report: dict[str, Any]) -> str:
    """A fixed-width table of the bench report, with the floor's assumptions and the JAX note."""
    m = report["machine"]
    lines = [
        f"machine: 1000^3 matmul {m['matmul_gflops_1core']:.1f} GFLOP/s on one core; exp {m['exp_ns']:.2f} ns, the "
        f"cheaper over {m['exp_buffer']} doubles of np.exp (out= a preallocated buffer, {m['exp_numpy_ns']:.2f} ns) "
        f"and the kernels' vector_exp ({m['exp_kernel_ns']:.2f} ns)",
        f"{'workload':<9}{'numba us':>10}{'numpy us':>10}{'peer us':>10}{'jax us':>10}{'numba/peer':>12}"
        f"{'numba/jax':>11}{'floor us':>10}{'numba/floor':>13}  description",
    ]
    for r in report["workloads"]:
        lines.append(
            f"{r['workload']:<9}{_cell(r['numba_us_per_client_step'], 3, 10)}{_cell(r['numpy_us_per_client_step'], 3, 10)}"
            f"{_cell(r['numpy_peer_us_per_client_step'], 3, 10)}{_cell(r['jax_us_per_client_step'], 3, 10)}"
            f"{_cell(r['numba_over_numpy_peer'], 2, 12)}{_cell(r['numba_over_jax'], 2, 11)}"
            f"{_cell(r['floor_us_per_client_step'], 4, 10)}{_cell(r['numba_over_floor'], 1, 13)}  {r['description']}"
        )
    lines.append(f"us = microseconds per local client-step, single-threaded, medians of {report['repeats']} "
                 "timings after a warm-up; numpy = fedbound's reference path, peer = vectorised NumPy FedAvg, "
                 "jax = jit + vmap + scan (peers: " + report["peer_inputs"] + ").")
    lines.append("floor = flops / (matmul rate at the workload's shapes) + exps * exp cost "
                 "(in brackets: priced at the 1000^3 rate):")
    for r in report["workloads"]:
        diffs = ", ".join(f"{name} max |w - w_kernel| = {r[key]:.1e}" for name, key in
                          (("peer", "numpy_peer_max_abs_diff"), ("jax", "jax_max_abs_diff")) if r[key] is not None)
        lines.append(f"  {r['workload']}: {r['flops_per_client_step']:.0f} flops at {r['product_gflops_at_shapes']:.2f} "
                     f"GFLOP/s ({r['product_shapes']}), {r['exp_calls_per_client_step']:.0f} exps: "
                     f"{r['floor_us_per_client_step']:.4f} us ({r['floor_large_product_us_per_client_step']:.4f} us), "
                     f"{r['bytes_per_client_step']:.0f} bytes of data read (not in the floor)"
                     + (f"; {diffs}" if diffs else ""))
    jax = report["jax"]
    if jax["note"] is not None:
        lines.append(f"note: {jax['note']}")
    for r in report["workloads"]:
        if r["thread_speedup"] is not None:
            lines.append(f"  {r['workload']} kernel on 1 / 2 threads (one run, the clients of each round in parallel, "
                         f"alternating medians): {r['numba_1thread_us_per_client_step']:.3f} / "
                         f"{r['numba_2threads_us_per_client_step']:.3f} us: speed-up {r['thread_speedup']:.2f}x")
    sc = report.get("sweep_scaling")
    if sc is not None:
        lines.append(f"sweep of {sc['runs']} FedAvg runs ({sc['rounds']} rounds each), medians of {sc['repeats']} after "
                     f"a warm-up: {sc['jobs1_s']:.2f} s with 1 process, {sc['jobs2_s']:.2f} s with 2: "
                     f"speed-up {sc['speedup']:.2f}x")
    if "cnn" in report:
        from .bench_cnn import format_cnn_bench

        lines.extend(format_cnn_bench(report["cnn"]))
    return "\n".join(lines)

"""`fedbound bench`: fixed workloads timed for the Numba kernel and the NumPy reference.

Reported per workload, all measured in one run (medians over repeats, compilation excluded):
microseconds per local client-step for both engines, their ratio, and the floor

    floor = flops per client-step / (single-core rate of a large matrix product)
            + exp calls per client-step * (measured cost of one vectorised exp),

where the flops count the support-restricted step (PackedClients.flops_per_step). Workloads:
W1: Li et al.'s counterexample (N = 5, p = 4, d = 21), exact gradients, E = 20;
W2: synthetic(1, 1), 100 clients, softmax 60 x 10 (+ bias), batch 24, E = 20;
W3: MC-PSGD on block-cyclic softmax data, 100 clients, M = 5, 60 x 10 (+ bias), batch 24, I = 10
    (a client-step is one local iteration: one SGD step on each of the two chains, so its floor
    is twice W2's per-step floor; the per-round loss evaluations are included in the time).
Sweep scaling: 8 equal FedAvg runs (one config, 8 seeds) executed with 1 and with 2 worker
processes; the ratio of wall times (ideal 2 on 2 cores).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from problems import ProblemSpec, build_problem, problem_spec

from .algorithms import FedAvgConfig, algorithm_for
from .algorithms.fedavg.packing import pack_clients
from .run import run_seed
from .schedules import StepSize

__all__ = ["Workload", "WORKLOADS", "run_bench", "format_bench", "machine_rates"]


@dataclass(frozen=True)
class Workload:
    """A benchmark workload: problem spec, local steps, batch (0 = exact), rounds per engine."""

    name: str
    description: str
    spec: ProblemSpec
    local_steps: int
    batch_size: int
    eta: float
    rounds_numba: int
    rounds_numpy: int


WORKLOADS = (
    Workload("W1", "Li counterexample, d = 21, exact gradients, E = 20",
             problem_spec("li_counterexample", N=5, p=4, mu=2e-4), 20, 0, 0.05, 20_000, 100),
    Workload("W2", "synthetic(1,1), 100 clients, softmax 60x10, batch 24, E = 20",
             problem_spec("synthetic", alpha=1.0, beta=1.0, n_clients=100, l2=1e-4, seed=0), 20, 24, 0.01, 10, 2),
)


def machine_rates(repeats: int = 5) -> dict[str, float]:
    """Single-core GFLOP/s of a 1000 x 1000 matrix product and ns per vectorised exp."""
    rng = np.random.default_rng(0)
    a, b = rng.random((1000, 1000)), rng.random((1000, 1000))
    x = rng.random(1_000_000)
    with threadpool_limits(limits=1):
        a @ b
        matmul = _median_seconds(lambda: a @ b, repeats)
    exp = _median_seconds(lambda: np.exp(x), repeats)
    return {"matmul_gflops_1core": 2e9 / matmul / 1e9, "exp_ns": exp / x.size * 1e9}


def _median_seconds(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def _time_engine(problem, workload: Workload, engine: str, repeats: int) -> float:
    """Median microseconds per local client-step of one engine (after one warm-up run)."""
    rounds = workload.rounds_numba if engine == "numba" else workload.rounds_numpy
    alg = FedAvgConfig(workload.local_steps, rounds, StepSize.constant(workload.eta), workload.batch_size, 1.0, (rounds,))
    w_star = np.zeros(problem.dim)
    fedavg = algorithm_for(alg)
    plan = fedavg.plan(problem, alg, False)
    run_seed(fedavg, problem, plan, 0, w_star, engine)
    seconds = _median_seconds(lambda: run_seed(fedavg, problem, plan, 0, w_star, engine), repeats)
    return seconds / (rounds * workload.local_steps * problem.n_clients) * 1e6


def _time_mc_psgd(engine: str, repeats: int) -> tuple[float, Any]:
    """Median microseconds per client-iteration of MC-PSGD (W3), and its problem."""
    from problems import build_block_cyclic

    from .algorithms import MCPSGDConfig, RunConfig
    from .run import run

    problem = build_block_cyclic(problem_spec("block_cyclic_softmax", n_clients=100, n_blocks=5, n_features=60,
                                              n_classes=10, samples_per_client=50, seed=0))
    E = 2 if engine == "numba" else 1
    config = MCPSGDConfig(cycles=1, rounds_per_block=E, local_steps=10, step_size=StepSize.constant(0.01),
                          block_step_size=StepSize.constant(0.01), batch_size=24)
    config = RunConfig(problem.spec, config)
    run(config, problem=problem, engine=engine)
    seconds = _median_seconds(lambda: run(config, problem=problem, engine=engine), repeats)
    return seconds / (5 * E * 10 * 100) * 1e6, problem


def sweep_scaling(repeats: int = 1) -> dict[str, float]:
    """Wall time of 8 equal FedAvg runs with 1 and 2 worker processes (medians), and the speed-up."""
    from problems import exact_optimum

    from .algorithms import RunConfig
    from .sweep import SweepOptions
    from .sweep_runs import RunRequest, execute

    spec = problem_spec("synthetic", alpha=1.0, beta=1.0, n_clients=10, l2=0.25, seed=1)
    optimum = exact_optimum(build_problem(spec), crosscheck=False)
    request = RunRequest(RunConfig(spec, FedAvgConfig(5, 10_000, StepSize.constant(0.001), 8, 1.0, (10_000,),
                                                      tuple(range(8)))), optimum)
    times = {jobs: _median_seconds(lambda: execute([request], SweepOptions(jobs=jobs, progress=False)), repeats) for jobs in (1, 2)}
    return {"jobs1_s": times[1], "jobs2_s": times[2], "speedup": times[1] / times[2]}


def run_bench(repeats: int = 5) -> dict[str, Any]:
    """Time every workload; returns a JSON-able report with the machine rates."""
    rates = machine_rates(repeats)
    results = []
    for w in WORKLOADS:
        problem = build_problem(w.spec)
        packed = pack_clients(problem)
        flops = float(packed.flops_per_step(w.batch_size).mean())
        samples = np.diff(problem.offsets).mean() if w.batch_size == 0 else w.batch_size
        exps = float(samples * problem.model.exp_calls_per_sample)
        floor_us = flops / (rates["matmul_gflops_1core"] * 1e3) + exps * rates["exp_ns"] * 1e-3
        with threadpool_limits(limits=1):
            numba_us = _time_engine(problem, w, "numba", repeats)
            numpy_us = _time_engine(problem, w, "numpy", repeats)
        results.append({
            "workload": w.name, "description": w.description, "numba_us_per_client_step": numba_us,
            "numpy_us_per_client_step": numpy_us, "numpy_over_numba": numpy_us / numba_us,
            "floor_us_per_client_step": floor_us, "numba_over_floor": numba_us / floor_us,
            "flops_per_client_step": flops, "exp_calls_per_client_step": exps,
        })
    with threadpool_limits(limits=1):
        mc_numba, problem = _time_mc_psgd("numba", repeats)
        mc_numpy, _ = _time_mc_psgd("numpy", max(1, repeats // 2))
    packed = pack_clients(problem.combined)
    flops = 2 * float(packed.flops_per_step(24).mean())
    exps = 2 * 24 * problem.combined.n_classes
    floor_us = flops / (rates["matmul_gflops_1core"] * 1e3) + exps * rates["exp_ns"] * 1e-3
    results.append({
        "workload": "W3", "description": "MC-PSGD, 100 clients, M = 5, softmax 60x10, batch 24, I = 10",
        "numba_us_per_client_step": mc_numba, "numpy_us_per_client_step": mc_numpy,
        "numpy_over_numba": mc_numpy / mc_numba, "floor_us_per_client_step": floor_us,
        "numba_over_floor": mc_numba / floor_us, "flops_per_client_step": flops, "exp_calls_per_client_step": exps,
    })
    return {"machine": rates, "workloads": results, "sweep_scaling": sweep_scaling()}


def format_bench(report: dict[str, Any]) -> str:
    """A fixed-width table of the bench report."""
    m = report["machine"]
    lines = [
        f"machine: matmul {m['matmul_gflops_1core']:.1f} GFLOP/s on one core, exp {m['exp_ns']:.2f} ns (vectorised)",
        f"{'workload':<9}{'numba us':>10}{'numpy us':>10}{'numpy/numba':>13}{'floor us':>10}{'numba/floor':>13}  description",
    ]
    for r in report["workloads"]:
        lines.append(
            f"{r['workload']:<9}{r['numba_us_per_client_step']:>10.3f}{r['numpy_us_per_client_step']:>10.3f}"
            f"{r['numpy_over_numba']:>13.1f}{r['floor_us_per_client_step']:>10.4f}{r['numba_over_floor']:>13.1f}"
            f"  {r['description']}"
        )
    lines.append("us = microseconds per local client-step; kernels run single-threaded; medians over repeats.")
    sc = report["sweep_scaling"]
    lines.append(f"sweep of 8 FedAvg runs: {sc['jobs1_s']:.2f} s with 1 process, {sc['jobs2_s']:.2f} s with 2: "
                 f"speed-up {sc['speedup']:.2f}x")
    return "\n".join(lines)

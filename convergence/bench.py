"""`fedbound bench`: fixed workloads timed for the Numba kernel, the NumPy reference and honest peers.

Reported per workload, all measured in one run, single-threaded (BLAS limited to one thread,
JAX's CPU backend asked for one), each time the median of ``repeats`` >= 3 timings after a
warm-up run (compilation excluded): microseconds per local client-step of

- the Numba kernel (``local_sgd.local_sgd_kernel``) and the NumPy reference path (``local_sgd_reference``, written
  for clarity);
- the vectorised NumPy peer (``bench_peers.numpy_peer_fedavg``, written for speed) and the JAX
  peer (``bench_jax.jax_peer``: jit + vmap over clients + lax.scan over steps; "not installed"
  when jax cannot be imported). The peers draw the kernel's minibatches: their inputs (row
  indices from the counter-based sampler, step sizes, Gram matrices) are precomputed outside the
  timed region. Each peer's last global model is compared with the kernel's after the same
  rounds (``*_max_abs_diff``), so a peer that computes something else shows;
- the kernel/peer ratios (below 1: the kernel is faster) and the floor

    floor = flops per client-step / (matrix-product rate at the workload's own shapes)
            + exp calls per client-step * (cost of one exp: the cheaper of a vectorised np.exp,
              out= a buffer, and the kernels' own vector_exp, over 2^16 cached doubles),

where the flops count the support-restricted step (PackedClients.flops_per_step) and the rate is
that of NumPy's batched matmul over the N clients of the step's products, (n, m) x (m, C) and
(m, n) x (n, C) (n rows used, m = |S_k| features, C classes), or the Gram product (m, m) x (m, C)
for exact least-squares steps. At tiny shapes (W1's 5 x 5 Gram products) that rate is NumPy's
per-call overhead, not the core's, and the kernel runs below such a "floor"; so bench also prints
the floor priced at the 1000^3 product's rate (``floor_large_product_us_per_client_step``).
W2 per client-step: 60,390 flops (4 b m C = 58,560 in the two products, b = 24 rows, m = 61
features with the bias, C = 10; 3 m C = 1,830 in the update), 240 exps, and 11,712 bytes of data
rows read (b m 8, ``PackedClients.bytes_per_step``) at random from a 17 MB data set. The floor
counts no memory traffic, no softmax arithmetic beside the exps (max, shift, sum, scale: 4 b C =
960 flops) and no sampler, so it is below what any implementation can reach. Checked on this
machine (AMD EPYC, Zen 4: 16 double flops a cycle from two 256-bit FMA pipes): the product rate at
W2's shapes (~40 GFLOP/s, OpenBLAS's small-matrix kernels) is near the core's peak, so that term cannot
be beaten; the exp term used np.exp alone until the kernels' own exp was timed beside it. Where
the kernel's time above the floor goes on W2 (measured in-process, CPU time per client-step at
E = 20, ~2.8 us on a loaded machine): the two BLAS products ~1.5 us (the floor's rate), the softmax
residuals ~0.45 us (~0.25 us of it the exps; with the class count a compile-time constant they were
no faster), the row gathers, the sampler and the update, and the data rows arriving cold: with every
client reading client 0's 120 rows (an experiment, not a mode) and no prefetch, E = 20 ran at
~2.45 us against ~3.03 us on the real rows. Prefetching the next step's rows into L2
(``algorithms.prefetch``) takes ~0.25 us of that 0.58 us back; into every level (prefetcht0) it
took nothing back, nor did prefetching two steps ahead, in bursts between the BLAS calls or a
client's whole block at the start of its round. The cold cost falls slowly with E, as a client
reuses more of its rows (E = 1, 5, 20, 80 with the same total steps: 3.72, 3.06, 2.83, 2.66 us).
Independent of E there remain ~0.8 us per client and round (0.04 us a step at E = 20); ~1.4 us
more went before a full-support client copied W as one block, skipping the off-support sums it
discards and the prox anchor FedAvg never reads.

Workloads:
W1: Li et al.'s counterexample (N = 5, p = 4, d = 21), exact gradients, E = 20;
W2: synthetic(1, 1), 100 clients, softmax 60 x 10 (+ bias), batch 24, E = 20;
W3: MC-PSGD on block-cyclic softmax data, 100 clients, M = 5, 60 x 10 (+ bias), batch 24, I = 10
    (a client-step is one local iteration: one SGD step on each of the two chains, so its floor
    is twice W2's per-step floor; the per-round loss evaluations are included in the time; no
    peers are written for it);
CNN: the tutorial CIFAR-10 net at batch 2, one local SGD step, in images per second per core
    (``bench_cnn``: Numba float32 / float64, NumPy reference, JAX peer, the floor; ``quick``
    shortens its runs).
Thread scaling (W1, W2): one kernel run on 1 and on 2 threads (``kernel_thread_scaling``: the clients
of each round over Numba's threads, bit-identical results), timed alternately, medians of
``repeats`` after a warm-up; skipped where Numba has one thread. It runs after the sweep, whose
process pool forks (a forked worker cannot use OpenMP threads its parent has started).
Sweep scaling: 8 equal FedAvg runs (one config, 8 seeds, 5,000 rounds) executed with 1 and with 2
worker processes, each the median of 3 executions after a warm-up (it runs first, before JAX's
threads exist, since the process pool forks); the ratio of wall times (ideal 2 on 2 idle cores;
the pool's start-up is included, as a user's sweep pays it).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numba import config
from threadpoolctl import threadpool_limits

from problems import FederatedProblem, ProblemSpec, build_problem, problem_spec

from .algorithms import FedAvgConfig, algorithm_for, using_kernel_threads
from .algorithms.packing import PackedClients, pack_clients
from .bench_jax import jax_peer
from .bench_peers import numpy_peer_fedavg, peer_inputs
from .bench_report import format_bench
from .bench_timing import MIN_REPEATS, jax_one_thread, matmul_gflops, median_seconds
from .run import run_seed
from .schedules import StepSize

__all__ = ["Workload", "WORKLOADS", "run_bench", "format_bench", "machine_rates", "product_rate",
           "sweep_scaling", "kernel_thread_scaling"]

@dataclass(frozen=True)
class Workload:
    """A FedAvg benchmark workload: problem spec, local steps, batch (0 = exact), step size and
    rounds per timed engine (the Numba kernel, the NumPy reference, the peers)."""

    name: str
    description: str
    spec: ProblemSpec
    local_steps: int
    batch_size: int
    eta: float
    rounds_numba: int
    rounds_numpy: int
    rounds_peer: int

    def config(self, rounds: int) -> FedAvgConfig:
        """The workload's FedAvg config for ``rounds`` rounds (seed 0, the last round recorded)."""
        return FedAvgConfig(self.local_steps, rounds, StepSize.constant(self.eta), self.batch_size, 1.0, (rounds,))


WORKLOADS = (
    Workload("W1", "Li counterexample, d = 21, exact gradients, E = 20",
             problem_spec("li_counterexample", N=5, p=4, mu=2e-4), 20, 0, 0.05, 20_000, 100, 500),
    Workload("W2", "synthetic(1,1), 100 clients, softmax 60x10, batch 24, E = 20",
             problem_spec("synthetic", alpha=1.0, beta=1.0, n_clients=100, l2=1e-4, seed=0), 20, 24, 0.01, 10, 2, 10),
)


def _check_repeats(repeats: int) -> int:
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < MIN_REPEATS:
        raise ValueError(f"repeats: expected an integer >= {MIN_REPEATS}, got {repeats!r}")
    return repeats


def machine_rates(repeats: int = 5) -> dict[str, float]:
    """Single-core GFLOP/s of a 1000 x 1000 float64 matrix product, and ns per exp over a buffer
    of 2^16 doubles in [-10, 0] (fits in cache; the range of softmax's shifted logits) of NumPy's
    vectorised ``np.exp`` writing into a preallocated buffer (out=) and of the kernels' own
    ``vector_exp.exp_inplace`` (in place); the floor prices an exp at the cheaper of the two
    (``exp_ns``): a floor may not charge more than the kernel pays."""
    from problems.models.vector_exp import exp_inplace

    matmul = matmul_gflops(repeats)
    x, out = np.random.default_rng(0).uniform(-10.0, 0.0, 1 << 16), np.empty(1 << 16)
    numpy_exp = median_seconds(lambda: np.exp(x, out=out), repeats, calls=100) / x.size * 1e9
    work = x.copy()
    exp_inplace(work, work.size)  # compiled (or loaded from the cache) before timing
    kernel_exp = median_seconds(lambda: exp_inplace(work, work.size), repeats, calls=100) / x.size * 1e9
    return {"matmul_gflops_1core": matmul, "exp_ns": min(numpy_exp, kernel_exp), "exp_numpy_ns": numpy_exp,
            "exp_kernel_ns": kernel_exp, "exp_buffer": x.size}


def product_rate(packed: PackedClients, batch_size: int, repeats: int = 5) -> tuple[float, str]:
    """(GFLOP/s, shapes): single-core rate of NumPy's batched matmul at one local step's products
    over all N clients (module docstring), with m the largest support and n the batch (exact
    gradients: the largest client)."""
    N, C = packed.n_clients, packed.n_classes
    m = packed.max_support
    rng = np.random.default_rng(0)
    if batch_size == 0 and packed.uses_gram.all():
        Q, w, g = rng.random((N, m, m)), rng.random((N, m, C)), np.empty((N, m, C))
        flops, shapes = 2.0 * N * m * m * C, f"{N} x ({m}x{m})({m}x{C})"

        def step() -> None:
            np.matmul(Q, w, out=g)
    else:
        n = batch_size if batch_size > 0 else int(np.diff(packed.sample_offsets).max())
        X, w, z, g = rng.random((N, n, m)), rng.random((N, m, C)), np.empty((N, n, C)), np.empty((N, m, C))
        flops, shapes = 4.0 * N * n * m * C, f"{N} x ({n}x{m})({m}x{C}) + ({m}x{n})({n}x{C})"

        def step() -> None:
            np.matmul(X, w, out=z)
            np.matmul(X.transpose(0, 2, 1), z, out=g)
    with threadpool_limits(limits=1):
        step()
        seconds = median_seconds(step, repeats, calls=max(1, math.ceil(2e-3 / median_seconds(step, 1))))
    return flops / seconds / 1e9, shapes




def _time_engine(problem: FederatedProblem, workload: Workload, engine: str, repeats: int) -> float:
    """Median microseconds per local client-step of one engine (after one warm-up run)."""
    rounds = workload.rounds_numba if engine == "numba" else workload.rounds_numpy
    alg = workload.config(rounds)
    w_star = np.zeros(problem.dim)
    fedavg = algorithm_for(alg)
    plan = fedavg.plan(problem, alg, False)
    run_seed(fedavg, problem, plan, 0, w_star, engine)
    seconds = median_seconds(lambda: run_seed(fedavg, problem, plan, 0, w_star, engine), repeats)
    return seconds / (rounds * workload.local_steps * problem.n_clients) * 1e6


def kernel_thread_scaling(problem: FederatedProblem, workload: Workload, repeats: int,
                          threads: int = 2) -> tuple[float, float]:
    """Microseconds per client-step of one kernel run (seed 0) on 1 thread and on ``threads``
    (``kernel_threads``: the clients of each round in parallel), each the median of ``repeats``
    timings taken alternately (1, threads, 1, threads, ...) after a warm-up of each, so that a
    drift in the machine's load moves both alike. The two runs' results are bit-identical."""
    alg = workload.config(workload.rounds_numba)
    fedavg = algorithm_for(alg)
    plan = fedavg.plan(problem, alg, False)
    w_star = np.zeros(problem.dim)
    times: dict[int, list[float]] = {1: [], threads: []}
    for repeat in range(repeats + 1):
        for n in (1, threads):
            with using_kernel_threads(n):
                start = time.perf_counter()
                run_seed(fedavg, problem, plan, 0, w_star, "numba")
                if repeat > 0:  # the first round of timings is the warm-up (and compiles the threaded path)
                    times[n].append(time.perf_counter() - start)
    per_step = 1e6 / (workload.rounds_numba * workload.local_steps * problem.n_clients)
    return float(np.median(times[1])) * per_step, float(np.median(times[threads])) * per_step


def _kernel_model(problem: FederatedProblem, config: FedAvgConfig) -> np.ndarray:
    """The kernel's global model after config.rounds rounds (seed 0), shape (d,)."""
    fedavg = algorithm_for(config)
    seed_run = run_seed(fedavg, problem, fedavg.plan(problem, config, False), 0, np.zeros(problem.dim), "numba")
    return seed_run.records[-1]


def _time_peers(problem: FederatedProblem, workload: Workload, repeats: int) -> dict[str, Any]:
    """The peers' median microseconds per client-step and their distance to the kernel's model."""
    config = workload.config(workload.rounds_peer)
    inputs = peer_inputs(problem, config, 0)
    kernel = _kernel_model(problem, config)
    per_step = 1e6 / (config.total_steps * problem.n_clients)
    numpy_run = lambda: numpy_peer_fedavg(problem, inputs)  # noqa: E731
    jax_one_thread()
    jax_run = jax_peer(problem, inputs)
    results: dict[str, Any] = {}
    with threadpool_limits(limits=1):
        for name, peer in (("numpy_peer", numpy_run), ("jax", jax_run)):
            if peer is None:
                results[f"{name}_us_per_client_step"] = results[f"{name}_max_abs_diff"] = None
                continue
            results[f"{name}_max_abs_diff"] = float(np.max(np.abs(peer()[-1] - kernel)))
            results[f"{name}_us_per_client_step"] = median_seconds(peer, repeats) * per_step
    return results


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
    seconds = median_seconds(lambda: run(config, problem=problem, engine=engine), repeats)
    return seconds / (5 * E * 10 * 100) * 1e6, problem


def sweep_scaling(repeats: int = MIN_REPEATS, rounds: int = 5_000) -> dict[str, float]:
    """Wall time of 8 equal FedAvg runs (``rounds`` rounds each) with 1 and 2 worker processes,
    each the median of ``repeats`` after a warm-up, and the speed-up jobs1 / jobs2."""
    from problems import exact_optimum

    from .algorithms import RunConfig
    from .sweep import SweepOptions
    from .sweep_runs import RunRequest, execute

    _check_repeats(repeats)
    spec = problem_spec("synthetic", alpha=1.0, beta=1.0, n_clients=10, l2=0.25, seed=1)
    optimum = exact_optimum(build_problem(spec), crosscheck=False)
    request = RunRequest(RunConfig(spec, FedAvgConfig(5, rounds, StepSize.constant(0.001), 8, 1.0, (rounds,),
                                                      tuple(range(8)))), optimum)
    times = {}
    for jobs in (1, 2):
        sweep = lambda: execute([request], SweepOptions(jobs=jobs, progress=False))  # noqa: E731
        sweep()
        times[jobs] = median_seconds(sweep, repeats)
    return {"runs": 8, "rounds": rounds, "repeats": repeats, "jobs1_s": times[1], "jobs2_s": times[2],
            "speedup": times[1] / times[2]}


def _ratio(numerator: float | None, denominator: float | None) -> float | None:
    return None if numerator is None or denominator is None else numerator / denominator


def _jax_status() -> dict[str, str | None]:
    """The installed jax version, or None with the note bench prints."""
    try:
        import jax
    except ImportError:
        return {"version": None, "note": "jax is not installed: the JAX peer is skipped (pip install jax to time it)"}
    return {"version": jax.__version__, "note": None}


def run_bench(repeats: int = 5, workloads: Sequence[Workload] = WORKLOADS, mc_psgd: bool = True,
              scaling: bool = True, cnn: bool = True, quick: bool = False) -> dict[str, Any]:
    """Time ``workloads`` (and W3, MC-PSGD, with ``mc_psgd``; the 1-vs-2-process sweep with
    ``scaling``, median of MIN_REPEATS; the CNN workload of ``bench_cnn`` with ``cnn``, its runs
    shortened by ``quick``); returns a JSON-able report with the machine rates. ``repeats`` >= 3."""
    _check_repeats(repeats)
    # the sweep forks worker processes: it runs before JAX (multithreaded, unsafe to fork) is imported
    scaling_report = sweep_scaling(MIN_REPEATS) if scaling else None
    rates = machine_rates(repeats)
    results = []
    for w in workloads:
        problem = build_problem(w.spec)
        packed = pack_clients(problem)
        flops = float(packed.flops_per_step(w.batch_size).mean())
        samples = np.diff(problem.offsets).mean() if w.batch_size == 0 else w.batch_size
        exps = float(samples * problem.model.exp_calls_per_sample)
        rate, shapes = product_rate(packed, w.batch_size, repeats)
        floor_us = flops / (rate * 1e3) + exps * rates["exp_ns"] * 1e-3
        large_floor_us = flops / (rates["matmul_gflops_1core"] * 1e3) + exps * rates["exp_ns"] * 1e-3
        with threadpool_limits(limits=1):
            numba_us = _time_engine(problem, w, "numba", repeats)
            numpy_us = _time_engine(problem, w, "numpy", repeats)
            threads = min(2, config.NUMBA_NUM_THREADS)
            one_thread_us, two_threads_us = (kernel_thread_scaling(problem, w, repeats, threads) if threads == 2
                                             else (None, None))
        peers = _time_peers(problem, w, repeats)
        results.append({
            "workload": w.name, "description": w.description, "numba_us_per_client_step": numba_us,
            "numpy_us_per_client_step": numpy_us, "numpy_over_numba": numpy_us / numba_us,
            **peers,
            "numba_over_numpy_peer": _ratio(numba_us, peers["numpy_peer_us_per_client_step"]),
            "numba_over_jax": _ratio(numba_us, peers["jax_us_per_client_step"]),
            "numba_1thread_us_per_client_step": one_thread_us, "numba_2threads_us_per_client_step": two_threads_us,
            "thread_speedup": _ratio(one_thread_us, two_threads_us),
            "floor_us_per_client_step": floor_us, "numba_over_floor": numba_us / floor_us,
            "floor_large_product_us_per_client_step": large_floor_us,
            "flops_per_client_step": flops, "exp_calls_per_client_step": exps,
            "bytes_per_client_step": float(packed.bytes_per_step(w.batch_size).mean()),
            "product_gflops_at_shapes": rate, "product_shapes": shapes,
        })
    if mc_psgd:
        results.append(_mc_psgd_result(rates, repeats))
    report: dict[str, Any] = {
        "machine": rates, "jax": _jax_status(), "repeats": repeats,
        "peer_inputs": "minibatch row indices, step sizes and Gram matrices precomputed outside the timed region",
        "workloads": results,
    }
    if scaling_report is not None:
        report["sweep_scaling"] = scaling_report
    if cnn:
        from .bench_cnn import cnn_bench

        report["cnn"] = cnn_bench(repeats, quick).to_json()
    return report


def _mc_psgd_result(rates: dict[str, float], repeats: int) -> dict[str, Any]:
    """W3's row: MC-PSGD's kernel and reference (no peers written for it)."""
    with threadpool_limits(limits=1):
        mc_numba, problem = _time_mc_psgd("numba", repeats)
        mc_numpy, _ = _time_mc_psgd("numpy", repeats)
    packed = pack_clients(problem.combined)
    rate, shapes = product_rate(packed, 24, repeats)
    flops = 2 * float(packed.flops_per_step(24).mean())
    exps = 2 * 24 * problem.combined.n_classes
    floor_us = flops / (rate * 1e3) + exps * rates["exp_ns"] * 1e-3
    large_floor_us = flops / (rates["matmul_gflops_1core"] * 1e3) + exps * rates["exp_ns"] * 1e-3
    return {
        "workload": "W3", "description": "MC-PSGD, 100 clients, M = 5, softmax 60x10, batch 24, I = 10",
        "numba_us_per_client_step": mc_numba, "numpy_us_per_client_step": mc_numpy,
        "numpy_over_numba": mc_numpy / mc_numba,
        "numpy_peer_us_per_client_step": None, "numpy_peer_max_abs_diff": None,
        "jax_us_per_client_step": None, "jax_max_abs_diff": None,
        "numba_over_numpy_peer": None, "numba_over_jax": None,
        "numba_1thread_us_per_client_step": None, "numba_2threads_us_per_client_step": None, "thread_speedup": None,
        "floor_us_per_client_step": floor_us, "numba_over_floor": mc_numba / floor_us,
        "floor_large_product_us_per_client_step": large_floor_us,
        "flops_per_client_step": flops, "exp_calls_per_client_step": exps,
        "bytes_per_client_step": 2 * float(packed.bytes_per_step(24).mean()),
        "product_gflops_at_shapes": rate, "product_shapes": shapes,
    }

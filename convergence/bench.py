"""`fedbound bench`: fixed workloads, fedbound's kernels against the NumPy reference, honest peers,
the floor and themselves on 2 threads, each comparison two engines alternated in one process.

Every row of the table is a ``bench_pairs.Comparison``: after a warm-up call of each engine
(compiling, jitting or loading it), engine A and engine B are called alternately ``pairs`` times
(A, B, A, B, ...), each call timed in process CPU time (all of this process's threads: JAX's and
PyTorch's runtimes use helper threads even when asked for one) and in wall time; the row reports
the median of the per-pair ratios A / B (per unit of work) with their quartiles, min, max and the
number of pairs, for CPU and for wall, and the load average before and after. BLAS is limited
to one thread, JAX's CPU backend and PyTorch are asked for one, and the kernels run on one
thread except the 2-thread side of the thread rows. Rows per linear workload (units: local
client-steps):

- numpy reference / kernel: fedbound's NumPy reference path (``local_sgd_reference``, written for
  clarity) against the Numba kernel (``local_sgd.local_sgd_kernel``);
- numpy peer / kernel and jax / kernel: the vectorised NumPy peer (``bench_peers.numpy_peer_fedavg``,
  written for speed) and the JAX peer (``bench_jax.jax_peer``: jit + vmap over clients + lax.scan
  over steps; "not installed" when jax cannot be imported). The peers draw the kernel's
  minibatches (row indices from the counter-based sampler, step sizes, Gram matrices, precomputed
  outside the timed region); each peer's last global model is compared with the kernel's after
  the same rounds (``*_max_abs_diff``), so a peer that computes something else shows;
- kernel / floor: the floor of ``bench_floor`` (the step's products at the workload's shapes and
  its exps, timed as an engine), with its flops, exps and bytes, and the floor priced at the
  1000^3 product rate;
- 1 thread / 2 threads: one kernel run (``kernel_threads``: the clients of each round over
  Numba's threads, bit-identical results) on 1 and on 2 threads asked for, which takes the
  threaded kernel only when a round's work reaches ``kernel_threads.THREADED_MIN_WORK`` (the row's
  note says how many of the 2-thread calls did: W2's do, W1's tiny rounds run serially); skipped
  where Numba has one thread. The block-cyclic kernel (W3) has no threaded path: both of its runs
  are serial, so its row shows the pairing's own noise around 1.

Workloads:
W1: Li et al.'s counterexample (N = 5, p = 4, d = 21), exact gradients, E = 20;
W2: synthetic(1, 1), 100 clients, softmax 60 x 10 (+ bias), batch 24, E = 20;
W3: MC-PSGD on block-cyclic softmax data, 100 clients, M = 5, 60 x 10 (+ bias), batch 24, I = 10
    (a client-step is one local iteration: one SGD step on each of the two chains, so its floor
    is twice W2's; the per-round loss evaluations are included in the time; no peers are written
    for it);
CNN: ``bench_cnn`` (the tutorial CIFAR-10 net at batch 2 and 32 against the NumPy reference, JAX,
    PyTorch and its floor; ``quick`` shortens its runs).
Sweep scaling (not with ``quick``): 8 equal FedAvg runs executed with 1 and with 2 worker processes
(``sweep_scaling``, wall time: the work is in other processes); it runs first, before JAX's or
OpenMP's threads exist, since the process pool forks.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np
from numba import config
from threadpoolctl import threadpool_limits

from problems import FederatedProblem, ProblemSpec, build_problem, problem_spec

from .algorithms import FedAvgConfig, KernelPaths, algorithm_for, using_kernel_threads
from .algorithms.kernel_threads import THREADED_MIN_WORK
from .algorithms.packing import pack_clients
from .bench_floor import (
    FloorModel,
    MachineRates,
    floor_engine,
    floor_model,
    machine_rates,
)
from .bench_jax import jax_peer
from .bench_pairs import Comparison, Engine, compare, skipped
from .bench_peers import numpy_peer_fedavg, peer_inputs
from .bench_timing import MIN_REPEATS, jax_one_thread, median_seconds
from .run import run_seed
from .schedules import StepSize

if TYPE_CHECKING:  # bench_cnn is imported when the CNN workload runs
    from .bench_cnn import CNNBench

__all__ = ["Workload", "WORKLOADS", "WorkloadBench", "SweepScaling", "BenchReport", "run_bench", "sweep_scaling"]

_UNIT = "client-step"
_JAX_ABSENT = "jax is not installed: the JAX peer is skipped (pip install jax to time it)"
_NO_THREADS = "Numba has one thread here (NUMBA_NUM_THREADS = 1): 1 vs 2 threads not timed"


@dataclass(frozen=True)
class Workload:
    """A FedAvg benchmark workload: problem spec, local steps, batch (0 = exact), step size and
    rounds per call of each engine (the Numba kernel, the NumPy reference, the peers)."""

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
             problem_spec("li_counterexample", N=5, p=4, mu=2e-4), 20, 0, 0.05, 2_000, 100, 500),
    Workload("W2", "synthetic(1,1), 100 clients, softmax 60x10, batch 24, E = 20",
             problem_spec("synthetic", alpha=1.0, beta=1.0, n_clients=100, l2=1e-4, seed=0), 20, 24, 0.01, 10, 2, 10),
)


@dataclass(frozen=True)
class WorkloadBench:
    """A workload's rows: its comparisons, its floor's inputs, and each peer's max |w - w_kernel|
    after the same rounds (None: not run)."""

    workload: str
    description: str
    floor: FloorModel
    comparisons: tuple[Comparison, ...]
    numpy_peer_max_abs_diff: float | None
    jax_max_abs_diff: float | None

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "comparisons": [c.to_json() for c in self.comparisons]}


@dataclass(frozen=True)
class SweepScaling:
    """Wall seconds of ``runs`` FedAvg runs of ``rounds`` rounds with 1 and 2 worker processes
    (medians of ``repeats`` after a warm-up) and the speed-up jobs1 / jobs2."""

    runs: int
    rounds: int
    repeats: int
    jobs1_s: float
    jobs2_s: float

    @property
    def speedup(self) -> float:
        return self.jobs1_s / self.jobs2_s


@dataclass(frozen=True)
class BenchReport:
    """One `fedbound bench` run: the pairs per row, the machine's rates, the optional peers'
    versions (None: not installed), the load average at the start and the end, the rows."""

    pairs: int
    machine: MachineRates
    jax_version: str | None
    load_start: tuple[float, float, float]
    load_end: tuple[float, float, float]
    workloads: tuple[WorkloadBench, ...]
    sweep: SweepScaling | None
    cnn: CNNBench | None

    def to_json(self) -> dict[str, Any]:
        """The report as JSON-able data (every pair of every row included)."""
        return {
            "pairs": self.pairs, "machine": {**asdict(self.machine), "exp_ns": self.machine.exp_ns},
            "jax_version": self.jax_version, "load_start": self.load_start, "load_end": self.load_end,
            "workloads": [w.to_json() for w in self.workloads],
            "sweep": None if self.sweep is None else {**asdict(self.sweep), "speedup": self.sweep.speedup},
            "cnn": None if self.cnn is None else self.cnn.to_json(),
        }


def _check_pairs(pairs: int) -> int:
    if isinstance(pairs, bool) or not isinstance(pairs, int) or pairs < MIN_REPEATS:
        raise ValueError(f"repeats: expected an integer >= {MIN_REPEATS} (pairs per comparison), got {pairs!r}")
    return pairs


def _fedavg_engine(name: str, problem: FederatedProblem, workload: Workload, engine: str, rounds: int,
                   threads: int = 1, paths: KernelPaths | None = None) -> Engine:
    """One seed of the workload (``rounds`` rounds) on ``engine`` ("numba", "numpy") and ``threads``
    asked for; the kernel paths taken are added to ``paths`` when given."""
    alg = workload.config(rounds)
    fedavg = algorithm_for(alg)
    plan = fedavg.plan(problem, alg, False)
    w_star = np.zeros(problem.dim)

    def run() -> None:
        with using_kernel_threads(threads) as taken:
            run_seed(fedavg, problem, plan, 0, w_star, engine)
        if paths is not None:
            paths.serial += taken.serial
            paths.threaded += taken.threaded

    return Engine(name, run, rounds * workload.local_steps * problem.n_clients)


def _thread_rows(name: str, one: Engine, two: Engine, pairs: int, note: str | None = None) -> Comparison:
    """1 thread / 2 threads, or the skipped row where Numba has one thread."""
    if config.NUMBA_NUM_THREADS < 2:
        return skipped(name, one.name, two.name, _UNIT, _NO_THREADS)
    return replace(compare(name, one, two, pairs, _UNIT), note=note)


def _paths_note(paths: KernelPaths) -> str:
    """Which kernel the 2-thread side's calls ran."""
    return (f"2 threads asked for: the threaded kernel ran in {paths.threaded} of {paths.serial + paths.threaded} "
            f"calls, the serial one below {THREADED_MIN_WORK:,.0f} units of work per round")


def _fedavg_rows(w: Workload, rates: MachineRates, pairs: int) -> WorkloadBench:
    """A linear FedAvg workload's rows (module docstring)."""
    problem = build_problem(w.spec)
    packed = pack_clients(problem)
    samples = np.diff(problem.offsets).mean() if w.batch_size == 0 else w.batch_size
    exps = float(samples * problem.model.exp_calls_per_sample)
    kernel = _fedavg_engine("kernel", problem, w, "numba", w.rounds_numba)
    rows = [compare(w.name, _fedavg_engine("numpy reference", problem, w, "numpy", w.rounds_numpy), kernel,
                    pairs, _UNIT)]
    peer_config = w.config(w.rounds_peer)
    inputs = peer_inputs(problem, peer_config, 0)
    fedavg = algorithm_for(peer_config)
    kernel_model = run_seed(fedavg, problem, fedavg.plan(problem, peer_config, False), 0, np.zeros(problem.dim),
                            "numba").records[-1]  # the kernel's global model after the peers' rounds
    units = peer_config.total_steps * problem.n_clients
    numpy_peer = Engine("numpy peer", lambda: numpy_peer_fedavg(problem, inputs), units)
    rows.append(compare(w.name, numpy_peer, kernel, pairs, _UNIT))
    peer_diff = float(np.max(np.abs(numpy_peer_fedavg(problem, inputs)[-1] - kernel_model)))
    rows.append(compare(w.name, kernel, floor_engine(packed, w.batch_size, exps, rates, units), pairs, _UNIT))
    paths = KernelPaths()
    threads = _thread_rows(w.name, _fedavg_engine("1 thread", problem, w, "numba", w.rounds_numba),
                           _fedavg_engine("2 threads", problem, w, "numba", w.rounds_numba, 2, paths), pairs)
    rows.append(replace(threads, note=_paths_note(paths)) if threads.measured else threads)
    jax_one_thread()
    jax_run = jax_peer(problem, inputs)
    jax_diff = None
    if jax_run is None:
        rows.append(skipped(w.name, "jax peer", "kernel", _UNIT, _JAX_ABSENT))
    else:
        rows.append(compare(w.name, Engine("jax peer", jax_run, units), kernel, pairs, _UNIT))
        jax_diff = float(np.max(np.abs(jax_run()[-1] - kernel_model)))
    return WorkloadBench(w.name, w.description, floor_model(packed, w.batch_size, exps, rates), tuple(rows),
                         peer_diff, jax_diff)


def _mc_psgd_rows(rates: MachineRates, pairs: int) -> WorkloadBench:
    """W3's rows: MC-PSGD's kernel against its reference, its floor, and on 2 threads (no peers)."""
    from problems import build_block_cyclic

    from .algorithms import MCPSGDConfig, RunConfig
    from .run import run

    problem = build_block_cyclic(problem_spec("block_cyclic_softmax", n_clients=100, n_blocks=5, n_features=60,
                                              n_classes=10, samples_per_client=50, seed=0))

    def engine(name: str, which: str, rounds_per_block: int, threads: int = 1) -> Engine:
        alg = MCPSGDConfig(cycles=1, rounds_per_block=rounds_per_block, local_steps=10,
                           step_size=StepSize.constant(0.01), block_step_size=StepSize.constant(0.01), batch_size=24)
        run_config = RunConfig(problem.spec, alg)

        def call() -> None:
            with using_kernel_threads(threads):
                run(run_config, problem=problem, engine=which)

        return Engine(name, call, 5 * rounds_per_block * 10 * 100)

    kernel = engine("kernel", "numba", 2)
    packed = pack_clients(problem.combined)
    exps = float(24 * problem.combined.n_classes)
    rows = (compare("W3", engine("numpy reference", "numpy", 1), kernel, pairs, _UNIT),
            compare("W3", kernel, floor_engine(packed, 24, exps, rates, int(kernel.units), steps_per_unit=2), pairs,
                    _UNIT),
            _thread_rows("W3", engine("1 thread", "numba", 2), engine("2 threads", "numba", 2, 2), pairs,
                         "the block-cyclic kernel has no threaded path: both runs are serial, the ratio is "
                         "the pairing's noise"))
    return WorkloadBench("W3", "MC-PSGD, 100 clients, M = 5, softmax 60x10, batch 24, I = 10",
                         floor_model(packed, 24, exps, rates, steps_per_unit=2), rows, None, None)


def sweep_scaling(repeats: int = MIN_REPEATS, rounds: int = 5_000) -> SweepScaling:
    """Wall time of 8 equal FedAvg runs (``rounds`` rounds each) with 1 and 2 worker processes,
    each the median of ``repeats`` after a warm-up."""
    from problems import exact_optimum

    from .algorithms import RunConfig
    from .sweep import SweepOptions
    from .sweep_runs import RunRequest, execute

    _check_pairs(repeats)
    spec = problem_spec("synthetic", alpha=1.0, beta=1.0, n_clients=10, l2=0.25, seed=1)
    optimum = exact_optimum(build_problem(spec), crosscheck=False)
    request = RunRequest(RunConfig(spec, FedAvgConfig(5, rounds, StepSize.constant(0.001), 8, 1.0, (rounds,),
                                                      tuple(range(8)))), optimum)
    times = {}
    for jobs in (1, 2):
        sweep = lambda: execute([request], SweepOptions(jobs=jobs, progress=False))  # noqa: E731
        sweep()
        times[jobs] = median_seconds(sweep, repeats, cpu=False)
    return SweepScaling(8, rounds, repeats, times[1], times[2])


def _jax_version() -> str | None:
    try:
        import jax
    except ImportError:
        return None
    return jax.__version__


def run_bench(repeats: int = 5, workloads: Sequence[Workload] = WORKLOADS, mc_psgd: bool = True,
              scaling: bool = True, cnn: bool = True, quick: bool = False) -> BenchReport:
    """Compare the engines of ``workloads`` (and W3, MC-PSGD, with ``mc_psgd``; the CNN workload of
    ``bench_cnn`` with ``cnn``, its runs shortened by ``quick``), ``repeats`` >= 3 alternated pairs
    per row; the 1-vs-2-process sweep with ``scaling``."""
    pairs = _check_pairs(repeats)
    load_start = os.getloadavg()
    # the sweep forks worker processes: it runs before JAX (multithreaded, unsafe to fork) is imported
    sweep = sweep_scaling(MIN_REPEATS) if scaling else None
    with threadpool_limits(limits=1):
        rates = machine_rates(pairs)
        results = [_fedavg_rows(w, rates, pairs) for w in workloads]
        if mc_psgd:
            results.append(_mc_psgd_rows(rates, pairs))
    cnn_bench = None
    if cnn:
        from .bench_cnn import cnn_bench as run_cnn

        cnn_bench = run_cnn(pairs, quick)
    return BenchReport(pairs, rates, _jax_version(), load_start, os.getloadavg(), tuple(results), sweep, cnn_bench)

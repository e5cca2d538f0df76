"""run(config) -> Trajectory: the pure function that executes one run config for all its seeds.

It builds (or takes) the problem, packs it, calls the Numba kernel (or the NumPy reference path)
once per seed, and evaluates the metrics at the record points: the gap F(w) - F*, the squared
distance ||w - w*||^2, and, when tracked, the radius of the visited region and the largest
realised stochastic-gradient norm.
"""

from __future__ import annotations

import html
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from problems import FederatedProblem, Optimum, build_problem, check_optimum, check_problem, exact_optimum

from ._fedavg_kernel import DIVERGENCE_FACTOR, fedavg_kernel
from ._fedavg_reference import fedavg_reference
from ._packing import pack_clients
from .config import FedAvgConfig, RunConfig
from .resources import check_run_memory

__all__ = ["Trajectory", "DivergenceError", "run", "run_seed", "trajectory_from_records", "ENGINES"]

ENGINES = ("numba", "numpy")


class DivergenceError(RuntimeError):
    """A run whose iterates blew up; says at which seed, round and local steps."""

    def __init__(self, run_id: str, seed: int, round_index: int, local_steps: int) -> None:
        first, last = round_index * local_steps + 1, (round_index + 1) * local_steps
        super().__init__(
            f"run {run_id} diverged: seed {seed}, round {round_index + 1} (local steps {first}-{last}); "
            f"||w - w*||^2 exceeded {DIVERGENCE_FACTOR:g} (1 + ||w0 - w*||^2) or became non-finite. "
            "Lower the step size."
        )
        self.seed, self.round_index = seed, round_index


@dataclass(frozen=True, eq=False)
class Trajectory:
    """Metrics of one run config at its record points, for every seed.

    Shapes: steps (P,) global local-step counts; iterates (S, P, d); gap and dist_sq (S, P);
    max_radius_sq and max_grad_sq (S,) (NaN when not tracked).
    """

    run_id: str
    config: RunConfig
    seeds: tuple[int, ...]
    steps: np.ndarray
    iterates: np.ndarray
    gap: np.ndarray
    dist_sq: np.ndarray
    max_radius_sq: np.ndarray
    max_grad_sq: np.ndarray
    engine: str
    seconds: float

    def to_frame(self) -> Any:
        """A tidy pandas DataFrame: one row per seed, record point and metric, with columns
        ``run_id``, ``seed``, ``step``, ``metric`` (``gap`` = F(w) - F*, ``dist_sq`` = ||w - w*||^2)
        and ``value``. Needs pandas (``pip install 'fedbound[data]'``)."""
        pd = _pandas()
        rows = [(self.run_id, seed, int(step), metric, float(values[s, p]))
                for metric, values in (("gap", self.gap), ("dist_sq", self.dist_sq))
                for s, seed in enumerate(self.seeds) for p, step in enumerate(self.steps)]
        return pd.DataFrame(rows, columns=["run_id", "seed", "step", "metric", "value"])

    def _repr_html_(self) -> str:
        """A short HTML summary for notebooks: the config and the mean metrics at a few record points."""
        alg = self.config.algorithm
        head = (f"<p><b>Trajectory</b> <code>{self.run_id}</code>: {html.escape(str(self.config.problem.get('family')))}, "
                f"E = {alg.local_steps}, {alg.rounds} rounds, {len(self.seeds)} seed(s), engine {self.engine}</p>")
        picked = sorted({0, len(self.steps) // 2, len(self.steps) - 1})
        rows = "".join(
            f"<tr><td>{int(self.steps[p])}</td><td>{np.mean(self.gap[:, p]):.4g}</td>"
            f"<td>{np.mean(self.dist_sq[:, p]):.4g}</td></tr>" for p in picked)
        return (head + "<table><tr><th>step</th><th>mean F(w) - F*</th><th>mean ||w - w*||²</th></tr>"
                + rows + "</table>")

    def merged(self, other: "Trajectory") -> "Trajectory":
        """This trajectory with the seeds of ``other`` (same config otherwise) appended."""
        return Trajectory(
            self.run_id, self.config, self.seeds + other.seeds, self.steps,
            np.concatenate([self.iterates, other.iterates]), np.concatenate([self.gap, other.gap]),
            np.concatenate([self.dist_sq, other.dist_sq]),
            np.concatenate([self.max_radius_sq, other.max_radius_sq]),
            np.concatenate([self.max_grad_sq, other.max_grad_sq]), self.engine, self.seconds + other.seconds,
        )


def _pandas() -> Any:
    """pandas, or an ImportError that says how to get it."""
    try:
        import pandas
    except ImportError:
        raise ImportError("to_frame needs pandas: pip install 'fedbound[data]'") from None
    return pandas


def run_seed(
    problem: FederatedProblem,
    algorithm: FedAvgConfig,
    seed: int,
    w_star: np.ndarray,
    *,
    engine: str = "numba",
    track: bool = False,
) -> tuple[np.ndarray, np.ndarray, int]:
    """One seed: (records (P, d), stats [max ||w-w*||^2, max ||g||^2], diverged round or -1).

    BLAS runs single-threaded here so that its reductions, and hence the trajectory, do not
    depend on how many threads a process happens to have (bit-identical across executors).
    """
    with threadpool_limits(limits=1, user_api="blas"):
        return _run_seed(problem, algorithm, seed, w_star, engine, track)


def _run_seed(problem, algorithm, seed, w_star, engine, track):
    w0 = np.zeros(problem.dim)
    w_star = np.ascontiguousarray(w_star, dtype=np.float64)
    if engine == "numpy":
        return fedavg_reference(problem, algorithm, seed, w0, w_star, track)
    if engine != "numba":
        raise ValueError(f"engine: unknown engine {engine!r}; choose one of {ENGINES}")
    packed = pack_clients(problem)
    records = np.zeros((len(algorithm.record_rounds), problem.dim))
    stats = np.full(2, np.nan)
    a, b = algorithm.step_size.params
    diverged = fedavg_kernel(
        packed.loss, packed.n_classes, packed.n_features, packed.mu, packed.weights, packed.targets,
        packed.sample_offsets, packed.support, packed.support_offsets, packed.rows, packed.row_offsets,
        packed.full_support, packed.gram, packed.uses_gram, packed.gram_rhs, algorithm.step_size.code, a, b,
        algorithm.local_steps, algorithm.rounds, algorithm.batch_size, seed, algorithm.server_lr,
        np.asarray(algorithm.record_rounds, dtype=np.int64), w0, w_star, track, records, stats,
    )
    return records, stats, int(diverged)


def run(
    config: RunConfig,
    *,
    problem: FederatedProblem | None = None,
    optimum: Optimum | None = None,
    engine: str = "numba",
    track: bool = False,
) -> Trajectory:
    """Execute ``config`` for all its seeds and measure gap and distance at the record points.

    A given ``problem`` must be the one ``config.problem`` describes and a given ``optimum`` that
    problem's (ProblemError naming ``problem`` / ``optimum`` otherwise). A run whose estimated
    memory cannot fit is refused before it starts (ConfigError, ``resources.check_run_memory``).
    Raises DivergenceError naming the seed and round when the iterates blow up.
    """
    start = time.perf_counter()
    problem = build_problem(config.problem) if problem is None else check_problem(problem, config.problem)
    optimum = exact_optimum(problem, crosscheck=False) if optimum is None else check_optimum(optimum, problem)
    alg = config.algorithm
    check_run_memory(problem, alg, engine)
    n_rec, S = len(alg.record_rounds), len(alg.seeds)
    iterates = np.zeros((S, n_rec, problem.dim))
    stats = np.full((S, 2), np.nan)
    for i, seed in enumerate(alg.seeds):
        records, seed_stats, diverged = run_seed(problem, alg, seed, optimum.w_star, engine=engine, track=track)
        if diverged >= 0:
            raise DivergenceError(config.run_id, seed, diverged, alg.local_steps)
        iterates[i], stats[i] = records, seed_stats
    return trajectory_from_records(config, problem, optimum, iterates, stats, track, engine, time.perf_counter() - start)


def trajectory_from_records(
    config: RunConfig,
    problem: FederatedProblem,
    optimum: Optimum,
    iterates: np.ndarray,
    stats: np.ndarray,
    track: bool,
    engine: str,
    seconds: float,
) -> Trajectory:
    """Evaluate gap F(w) - F* and ||w - w*||^2 on recorded iterates (S, P, d); stats (S, 2)."""
    values = np.array([[problem.objective(w) for w in seed_iterates] for seed_iterates in iterates])
    gap = np.maximum(values - optimum.F_star, 0.0)
    dist_sq = np.sum((iterates - optimum.w_star) ** 2, axis=2)
    stats = stats if track else np.full_like(stats, np.nan)
    alg = config.algorithm
    return Trajectory(
        config.run_id, config, alg.seeds, alg.record_steps, iterates, gap, dist_sq, stats[:, 0], stats[:, 1],
        engine, seconds,
    )

"""run(config) -> RunResult: the pure function that executes one run config, of any algorithm,
for all its seeds, in this process.

The engine registered for the config's algorithm (``algorithms.registry``) builds (or checks)
the problem, plans the run against it and runs each seed through its Numba kernel or its NumPy
reference path; ``run_result`` then measures the common metrics at the record points, the gap
F(w) - F* and the squared distance ||w - w*||^2 of the global model to the exact optimum of the
algorithm's objective (both None, "not available", for an objective without an exact optimum:
``objective_optimum``), and stacks the engine's typed extras. ``convergence.execute`` runs many
configs through the same three steps, one (config, seed) per sweep task. A traced run
(``trace=True``, the NumPy reference path only: ``check_trace``) keeps every local iterate in its
extras (``algorithms._base``, "Tracing").
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from problems import FederatedProblem, Optimum, check_optimum, exact_optimum, one_blas_thread

from .algorithms import ENGINES, Algorithm, DivergenceError, RunConfig, RunResult, SeedRun, algorithm_for
from .config import ConfigError
from .record_values import record_values
from .resources import check_run_memory

__all__ = ["check_trace", "objective_optimum", "run", "run_result", "run_seed"]


def objective_optimum(objective: Any, optimum: Optimum | None = None) -> Optimum | None:
    """The exact optimum (w*, F*) the metrics of a run on ``objective`` are measured from.

    A FederatedProblem (every linear model: strongly convex with mu > 0, or least squares) has one:
    ``optimum`` checked against it (ProblemError naming ``optimum``), or computed once
    (``problems.exact_optimum``, no cross-check). Any other objective (a CNN's
    ``problems.ImageClassificationProblem``: non-convex, no exact minimiser to compute) has none:
    the result is None, and a given ``optimum`` is refused (ConfigError naming ``optimum``).
    """
    if not isinstance(objective, FederatedProblem):
        if optimum is not None:
            raise ConfigError(f"optimum: the problem {objective.name!r} has no exact optimum "
                              f"({type(objective).__name__}); give none")
        return None
    return exact_optimum(objective, crosscheck=False) if optimum is None else check_optimum(optimum, objective)


def check_trace(trace: bool, engine: str) -> None:
    """ConfigError naming ``trace`` unless it is a bool, and True only with engine "numpy": the
    reference path keeps every local iterate, the Numba kernels keep their records only."""
    if not isinstance(trace, bool):
        raise ConfigError(f"trace: expected True or False, got {trace!r}")
    if trace and engine != "numpy":
        raise ConfigError(f"trace: keeping every local iterate needs engine 'numpy' (the NumPy reference path), "
                          f"got engine {engine!r}")


def run_seed(
    algorithm: Algorithm, problem: Any, plan: Any, seed: int, w_star: np.ndarray | None, engine: str
) -> SeedRun:
    """One seed of a planned run (``Algorithm.run_seed``; ``w_star`` None: the problem has no exact
    optimum, and the engine anchors its divergence test at the start w0).

    BLAS runs single-threaded here so that its reductions, and hence the trajectory, do not
    depend on how many threads a process happens to have (bit-identical across executors);
    ``problems.one_blas_thread`` sets the limit at a dictionary lookup's cost. The kernels get w*
    as a read-only C-contiguous float64 copy whatever the caller holds: an exact optimum is
    read-only here but arrives writable in a pool worker (unpickled), and Numba compiles a kernel
    once per array type, so a copy of one kind keeps a worker from compiling the kernels again.
    """
    if engine not in ENGINES:
        raise ConfigError(f"engine: unknown engine {engine!r}; choose one of {ENGINES}")
    with one_blas_thread():
        anchor = None if w_star is None else np.array(w_star, dtype=np.float64, order="C")
        if anchor is not None:
            anchor.setflags(write=False)
        return algorithm.run_seed(problem, plan, seed, anchor, engine)


def run(
    config: RunConfig,
    *,
    problem: Any = None,
    optimum: Optimum | None = None,
    engine: str = "numba",
    track: bool = False,
    trace: bool = False,
) -> RunResult:
    """Execute ``config`` for all its seeds and measure gap and distance at the record points.

    A given ``problem`` must be the one ``config.problem`` describes and a given ``optimum`` that
    of the algorithm's objective (ProblemError naming ``problem`` / ``optimum`` otherwise); an
    objective without an exact optimum (``objective_optimum``) runs without one, its gap and
    distance None. A run
    whose estimated memory cannot fit, its traces included, is refused before it starts
    (ConfigError, ``resources.check_run_memory``). ``track`` asks the engine for its per-step
    statistics; ``trace`` keeps every local iterate (engine "numpy" only, ConfigError naming
    ``trace`` otherwise) in the extras' ``traces``. Raises DivergenceError naming the seed and
    round when the iterates blow up.
    """
    start = time.perf_counter()
    check_trace(trace, engine)
    algorithm = algorithm_for(config.algorithm)
    problem = (algorithm.build_problem(config.problem) if problem is None
               else algorithm.check_problem(problem, config.problem))
    objective = algorithm.objective(problem)
    optimum = objective_optimum(objective, optimum)
    check_run_memory(algorithm.memory_bytes(problem, config.algorithm, engine, trace), engine, objective.name, trace)
    plan = algorithm.plan(problem, config.algorithm, track, trace)
    w_star = None if optimum is None else optimum.w_star
    seed_runs = [run_seed(algorithm, problem, plan, seed, w_star, engine) for seed in config.algorithm.seeds]
    return run_result(config, problem, optimum, plan, seed_runs, engine, time.perf_counter() - start)


def run_result(
    config: RunConfig,
    problem: Any,
    optimum: Optimum | None,
    plan: Any,
    seed_runs: Sequence[SeedRun],
    engine: str,
    seconds: float,
) -> RunResult:
    """The RunResult of per-seed runs (in the order of ``config.algorithm.seeds``): DivergenceError
    for the first that diverged; the gap max(F(w) - F*, 0) and ||w - w*||^2 of the recorded
    global models (S, P, d) on the algorithm's objective (None without an exact optimum; F at the
    records memoised per process, ``record_values``); the engine's extras."""
    algorithm = algorithm_for(config.algorithm)
    seeds = config.algorithm.seeds
    for seed, seed_run in zip(seeds, seed_runs):
        if int(seed_run.diverged) >= 0:
            raise DivergenceError(config.run_id, seed, int(seed_run.diverged), config.algorithm.steps_per_round,
                                  anchored_at_w0=optimum is None)
    iterates = np.stack([np.asarray(seed_run.records) for seed_run in seed_runs])
    gap = dist_sq = None
    if optimum is not None:
        values = record_values(algorithm.objective(problem), iterates)
        gap = np.maximum(values - optimum.F_star, 0.0)
        dist_sq = np.sum((iterates - optimum.w_star) ** 2, axis=2)
    rounds = np.asarray(plan.record_rounds, dtype=np.int64)
    return RunResult(
        run_id=config.run_id,
        config=config,
        seeds=seeds,
        rounds=rounds,
        steps=rounds * config.algorithm.steps_per_round,
        iterates=iterates,
        gap=gap,
        dist_sq=dist_sq,
        extras=algorithm.extras(problem, plan, seed_runs),
        engine=engine,
        seconds=seconds,
    )

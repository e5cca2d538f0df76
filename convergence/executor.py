"""Executing many run configs as a sweep: serially, on a local process pool or on a Dask cluster.

The unit of work is one (run config, seed) pair, a pure function of its inputs thanks to the
counter-based sampler, so the trajectories are bit-identical for any executor, number of jobs
and completion order. Each pair is one SweepTask whose key hashes the config restricted to that
seed, the engine, the tracking flag and the optimum it measures against, so a run store can hand
back a finished pair instead of recomputing it. The exact optimum (w*, F*) is computed once in
the parent and shipped with each task; workers rebuild problems from their specs (cached per
process); the metrics are evaluated here, in the parent, from the recorded iterates.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from problems import Optimum, ProblemSpec, build_problem

from .config import FedAvgConfig, RunConfig, config_digest
from .resources import check_run_memory, check_sweep_memory
from .run import DivergenceError, Trajectory, run_seed, trajectory_from_records
from .store import RunStore
from .sweep import SweepMonitor, SweepResults, SweepTask, run_sweep

__all__ = ["RunRequest", "execute", "seed_task"]


@dataclass(frozen=True)
class RunRequest:
    """A run config to execute, with the problem's exact optimum and whether to track stats."""

    config: RunConfig
    optimum: Optimum
    track: bool = False


def _seed_run(
    problem_spec: ProblemSpec, algorithm: FedAvgConfig, seed: int, w_star: np.ndarray, track: bool, engine: str
) -> dict[str, np.ndarray]:
    """Worker body: one seed of one config.

    Returns the iterates at the record points ("records", (P, d)), the tracked maxima of
    ||w - w*||^2 and ||g||^2 ("max_radius_sq", "max_grad_sq", scalars, NaN when not tracked) and
    the round at which the run diverged ("diverged", -1 if it did not).
    """
    problem = build_problem(problem_spec)
    records, stats, diverged = run_seed(problem, algorithm, seed, w_star, engine=engine, track=track)
    return {
        "records": records,
        "max_radius_sq": np.array(stats[0]),
        "max_grad_sq": np.array(stats[1]),
        "diverged": np.array(diverged, dtype=np.int64),
    }


def seed_task(request: RunRequest, seed: int, engine: str) -> SweepTask:
    """The sweep task of one seed of a request.

    Its config is the run config restricted to ``seed`` plus the engine, the tracking flag, the
    seed and record steps (for the store's table) and a digest of w* (the tracked radius is
    measured from it); its key is the SHA-256 of that config's canonical JSON (16 hex digits,
    as ``RunConfig.run_id``).
    """
    cfg = request.config
    single = RunConfig(cfg.problem, cfg.algorithm.with_seeds((seed,)))
    w_star = np.ascontiguousarray(request.optimum.w_star, dtype=np.float64)
    config_json: dict[str, Any] = {
        **single.to_json(),
        "engine": engine,
        "track": request.track,
        "seed": seed,
        "record_steps": [int(step) for step in cfg.algorithm.record_steps],
        "w_star_sha256": hashlib.sha256(w_star.tobytes()).hexdigest(),
    }
    key = config_digest(config_json)
    return SweepTask(key, _seed_run, (cfg.problem, cfg.algorithm, seed, w_star, request.track, engine), config_json)


def execute(
    requests: Sequence[RunRequest],
    *,
    jobs: int = 1,
    engine: str = "numba",
    progress: bool | SweepMonitor = True,
    description: str = "runs",
    executor: str | None = None,
    scheduler: str | None = None,
    store: RunStore | None = None,
    use_cache: bool = True,
) -> list[Trajectory]:
    """Run every request for all its seeds; returns trajectories in the order of ``requests``.

    By default jobs = 1 runs in this process and jobs > 1 on a process pool of that size; a
    ``scheduler`` address runs on that Dask cluster; ``executor`` ("serial", "process", "dask")
    chooses explicitly. With a ``store``, each finished (config, seed) is stored at once and,
    with ``use_cache``, stored ones are read back instead of recomputed. Before any task is built,
    the memory of each run and of the whole sweep is estimated (``resources``) and a request
    that cannot fit is refused with ConfigError. Raises DivergenceError for the first diverged
    (config, seed), naming the round.
    """
    if not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs: must be an integer >= 1, got {jobs!r}")
    _check_memory(requests, engine)
    if executor is None and scheduler is None:
        executor = "serial" if jobs == 1 else "process"
    tasks = [[seed_task(req, seed, engine) for seed in req.config.algorithm.seeds] for req in requests]
    results = run_sweep(
        [task for request_tasks in tasks for task in request_tasks], executor=executor, jobs=jobs,
        scheduler=scheduler, store=store, use_cache=use_cache, progress=progress, description=description,
    )
    return [_assemble(req, request_tasks, results, engine) for req, request_tasks in zip(requests, tasks)]


def _check_memory(requests: Sequence[RunRequest], engine: str) -> None:
    """Refuse requests whose single-seed runs, or whose sweep as a whole, cannot fit in memory."""
    for req in requests:
        alg = req.config.algorithm
        check_run_memory(build_problem(req.config.problem), alg.with_seeds(alg.seeds[:1]), engine)
    pairs = sum(len(req.config.algorithm.seeds) for req in requests)
    floats = sum(
        len(req.config.algorithm.seeds) * len(req.config.algorithm.record_rounds) * (req.optimum.w_star.size + 2)
        for req in requests
    )
    check_sweep_memory(pairs, floats)


def _assemble(req: RunRequest, tasks: list[SweepTask], results: SweepResults, engine: str) -> Trajectory:
    """Stack the seeds of a request into a Trajectory (raising DivergenceError if one diverged)."""
    cfg = req.config
    seeds = cfg.algorithm.seeds
    outcomes = [results[task.key] for task in tasks]
    for seed, outcome in zip(seeds, outcomes):
        diverged = int(outcome["diverged"])
        if diverged >= 0:
            raise DivergenceError(cfg.run_id, seed, diverged, cfg.algorithm.local_steps)
    problem = build_problem(cfg.problem)
    iterates = np.stack([outcome["records"] for outcome in outcomes])
    stats = np.array([[outcome["max_radius_sq"], outcome["max_grad_sq"]] for outcome in outcomes])
    seconds = sum(results.seconds[task.key] for task in tasks)
    return trajectory_from_records(cfg, problem, req.optimum, iterates, stats, req.track, engine, seconds)

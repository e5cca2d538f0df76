"""Executing many run configs: serially or on a local process pool, with a progress bar.

The unit of work is one (run config, seed) pair, a pure function of its inputs thanks to the
counter-based sampler, so the trajectories are bit-identical for any number of jobs and any
completion order. The exact optimum (w*, F*) is computed once in the parent and shipped with
each task; workers rebuild problems from their specs (cached per process).
"""

from __future__ import annotations

import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Sequence

import numpy as np
from tqdm import tqdm

from problems import Optimum, build_problem

from .config import FedAvgConfig, RunConfig
from .run import DivergenceError, Trajectory, run_seed, trajectory_from_records

__all__ = ["RunRequest", "execute"]


@dataclass(frozen=True)
class RunRequest:
    """A run config to execute, with the problem's exact optimum and whether to track stats."""

    config: RunConfig
    optimum: Optimum
    track: bool = False


def _task(problem_spec: dict, algorithm: FedAvgConfig, seed: int, w_star: np.ndarray, track: bool, engine: str):
    """Worker body: one seed of one config; returns (records, stats, diverged round, seconds)."""
    start = time.perf_counter()
    problem = build_problem(problem_spec)
    records, stats, diverged = run_seed(problem, algorithm, seed, w_star, engine=engine, track=track)
    return records, stats, diverged, time.perf_counter() - start


def execute(
    requests: Sequence[RunRequest],
    *,
    jobs: int = 1,
    engine: str = "numba",
    progress: bool = True,
    description: str = "runs",
) -> list[Trajectory]:
    """Run every request for all its seeds; returns trajectories in the order of ``requests``.

    jobs = 1 runs in this process; jobs > 1 uses a process pool of that size. Raises
    DivergenceError for the first diverged (config, seed), naming the round.
    """
    if not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs: must be an integer >= 1, got {jobs!r}")
    tasks = [(i, seed) for i, req in enumerate(requests) for seed in req.config.algorithm.seeds]
    results: dict[tuple[int, int], tuple] = {}
    bar = tqdm(total=len(tasks), desc=description, unit="run", disable=not progress, leave=False)
    if jobs == 1:
        for i, seed in tasks:
            results[(i, seed)] = _task(*_arguments(requests[i], seed, engine))
            bar.update()
    else:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            futures = {pool.submit(_task, *_arguments(requests[i], seed, engine)): (i, seed) for i, seed in tasks}
            for future in as_completed(futures):
                results[futures[future]] = future.result()
                bar.update()
    bar.close()
    return [_assemble(req, results, i, engine) for i, req in enumerate(requests)]


def _arguments(req: RunRequest, seed: int, engine: str) -> tuple:
    """The picklable arguments of ``_task`` for one seed of a request."""
    return req.config.problem, req.config.algorithm, seed, req.optimum.w_star, req.track, engine


def _assemble(req: RunRequest, results: dict, i: int, engine: str) -> Trajectory:
    """Stack the seeds of request i into a Trajectory (raising DivergenceError if one diverged)."""
    cfg = req.config
    seeds = cfg.algorithm.seeds
    for seed in seeds:
        diverged = results[(i, seed)][2]
        if diverged >= 0:
            raise DivergenceError(cfg.run_id, seed, diverged, cfg.algorithm.local_steps)
    problem = build_problem(cfg.problem)
    iterates = np.stack([results[(i, s)][0] for s in seeds])
    stats = np.stack([results[(i, s)][1] for s in seeds])
    seconds = sum(results[(i, s)][3] for s in seeds)
    return trajectory_from_records(cfg, problem, req.optimum, iterates, stats, req.track, engine, seconds)

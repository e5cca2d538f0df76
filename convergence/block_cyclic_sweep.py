"""Block-cyclic and PR-SGD runs through the sweep layer: one task per (config, seed).

Each task runs one seed of a block-cyclic config (MM-PSGD, MC-PSGD, FedAvg-cyclic) or of a PR-SGD
config and returns its arrays; ``run_sweep`` executes the tasks on the chosen executor (serial,
process pool, Dask), stores each as it finishes and reuses stored ones, and the seeds are stacked
back into a ``BlockCyclicResult``. A task is a pure function of (problem spec, single-seed config,
track), so results are bit-identical on every executor, and it is keyed by its own seed, not by
the seed list it came with. The result's ``seconds`` is the sum of the tasks' compute times (for
stored runs, as recorded in the store's metadata when they were computed).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from problems import ProblemSpec, build_block_cyclic, build_problem, exact_optimum

from .block_cyclic import (
    BlockCyclicResult,
    Communication,
    FedAvgCyclicConfig,
    MCPSGDConfig,
    MMPSGDConfig,
    PRSGDConfig,
    block_run_id,
    run_block_cyclic,
    run_pr_sgd,
)
from .config import config_digest
from .store import RunStore
from .sweep import SweepMonitor, SweepTask, run_sweep

__all__ = ["BlockCyclicRequest", "execute_block_cyclic", "seed_task"]

_PER_SEED = ("global_models", "predictors", "separate_models", "selected_separate", "grad_sq_mean",
             "max_mean_drift", "max_drift", "max_norm_sq")
_SHARED = ("rounds", "steps", "blocks", "block_rounds")


@dataclass(frozen=True)
class BlockCyclicRequest:
    """A problem spec (a block-cyclic family, or any family for PR-SGD) and a config to run."""

    spec: ProblemSpec
    config: MMPSGDConfig | MCPSGDConfig | FedAvgCyclicConfig | PRSGDConfig
    track: bool = False


def _seed_task(spec: ProblemSpec, config, track: bool) -> dict[str, np.ndarray]:
    """Worker body: the one seed of a single-seed ``config``; the result's arrays with the seed axis dropped.

    Only results: the run's wall-clock time is the sweep's to record, in the store's metadata.
    """
    if isinstance(config, PRSGDConfig):
        problem = build_problem(spec)
        result = run_pr_sgd(problem, config, optimum=exact_optimum(problem, crosscheck=False))
    else:
        problem = build_block_cyclic(spec)
        result = run_block_cyclic(problem, config, optimum=exact_optimum(problem.combined, crosscheck=False),
                                  track=track)
    out = {name: np.asarray(getattr(result, name))[0] for name in _PER_SEED if getattr(result, name) is not None}
    out.update({name: np.asarray(getattr(result, name)) for name in _SHARED})
    c = result.communication
    out["communication"] = np.array([c.rounds, c.down_params, c.up_params, c.up_losses], dtype=np.int64)
    return out


def _algorithm(config) -> str:
    """The algorithm name BlockCyclicResult uses for a config type."""
    if isinstance(config, PRSGDConfig):
        return "pr_sgd"
    if isinstance(config, MCPSGDConfig):
        return "mc_psgd"
    return "mm_psgd" if isinstance(config, MMPSGDConfig) else "fedavg_cyclic"


def seed_task(request: BlockCyclicRequest, seed: int) -> SweepTask:
    """The sweep task of one seed of a request, keyed by that seed alone.

    Its config is the problem spec, the algorithm config restricted to ``seed`` (so it holds no
    other seed: the stored size grows linearly with the number of seeds, and a run stored for
    ``seed`` is reused whichever seed list it came with), the config type, the tracking flag and
    the seed; its key is the SHA-256 of that config's canonical JSON (24 hex digits).
    """
    one = dataclasses.replace(request.config, seeds=(seed,))
    config_json = {"problem": request.spec.to_json(), "algorithm": one.to_json(), "kind": type(one).__name__, "seed": seed,
                   "track": request.track}
    key = config_digest(config_json, 24)
    return SweepTask(key, _seed_task, (request.spec, one, request.track), config_json)


def execute_block_cyclic(
    requests: Sequence[BlockCyclicRequest],
    *,
    jobs: int = 1,
    scheduler: str | None = None,
    store: RunStore | None = None,
    use_cache: bool = True,
    progress: bool | SweepMonitor = True,
    description: str = "block-cyclic runs",
) -> list[BlockCyclicResult]:
    """Run every request for all its seeds through ``run_sweep``; results in request order."""
    tasks = [[seed_task(req, seed) for seed in req.config.seeds] for req in requests]
    executor = None if scheduler else ("serial" if jobs == 1 else "process")
    results = run_sweep([task for request_tasks in tasks for task in request_tasks], executor=executor, jobs=jobs,
                        scheduler=scheduler, store=store, use_cache=use_cache, progress=progress,
                        description=description)
    out = []
    for req, request_tasks in zip(requests, tasks):
        parts = [results[task.key] for task in request_tasks]
        first = parts[0]
        rounds, down, up, losses = (int(v) for v in first["communication"])
        out.append(BlockCyclicResult(
            run_id=block_run_id(req.spec, req.config.to_json()), algorithm=_algorithm(req.config), config=req.config, problem_spec=req.spec,
            seeds=tuple(req.config.seeds), **{name: first[name] for name in _SHARED},
            **{name: (np.stack([p[name] for p in parts]) if name in first else None) for name in _PER_SEED},
            communication=Communication(rounds, down, up, losses), engine="numba",
            seconds=float(sum(results.seconds[task.key] for task in request_tasks)),
        ))
    return out

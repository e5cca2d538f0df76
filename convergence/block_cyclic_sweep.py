"""Block-cyclic and PR-SGD runs through the sweep layer: one task per (config, seed).

Each task runs one seed of a block-cyclic config (MM-PSGD, MC-PSGD, FedAvg-cyclic) or of a PR-SGD
config and returns its arrays; ``run_sweep`` executes the tasks on the chosen executor (serial,
process pool, Dask), stores each as it finishes and reuses stored ones, and the seeds are stacked
back into a ``BlockCyclicResult``. A task is a pure function of (problem spec, config, seed,
track), so results are bit-identical on every executor.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from problems import build_block_cyclic, build_problem, exact_optimum

from .block_cyclic import (
    BlockCyclicResult,
    Communication,
    FedAvgCyclicConfig,
    MCPSGDConfig,
    MMPSGDConfig,
    PRSGDConfig,
    _run_id,
    run_block_cyclic,
    run_pr_sgd,
)
from .store import RunStore
from .sweep import SweepMonitor, SweepTask, run_sweep

__all__ = ["BlockCyclicRequest", "execute_block_cyclic"]

_PER_SEED = ("global_models", "predictors", "separate_models", "selected_separate", "grad_sq_mean",
             "max_mean_drift", "max_drift", "max_norm_sq")
_SHARED = ("rounds", "steps", "blocks", "block_rounds")


@dataclass(frozen=True)
class BlockCyclicRequest:
    """A problem spec (a block-cyclic family, or any family for PR-SGD) and a config to run."""

    spec: dict[str, Any]
    config: MMPSGDConfig | MCPSGDConfig | FedAvgCyclicConfig | PRSGDConfig
    track: bool = False


def _seed_task(spec: dict, config, seed: int, track: bool) -> dict[str, np.ndarray]:
    """Worker body: one seed; the result's arrays with the seed axis dropped."""
    one = dataclasses.replace(config, seeds=(seed,))
    if isinstance(config, PRSGDConfig):
        problem = build_problem(spec)
        result = run_pr_sgd(problem, one, optimum=exact_optimum(problem, crosscheck=False))
    else:
        problem = build_block_cyclic(spec)
        result = run_block_cyclic(problem, one, optimum=exact_optimum(problem.combined, crosscheck=False), track=track)
    out = {name: np.asarray(getattr(result, name))[0] for name in _PER_SEED if getattr(result, name) is not None}
    out.update({name: np.asarray(getattr(result, name)) for name in _SHARED})
    c = result.communication
    out["communication"] = np.array([c.rounds, c.down_params, c.up_params, c.up_losses], dtype=np.int64)
    out["seconds"] = np.array(result.seconds)
    return out


def _algorithm(config) -> str:
    """The algorithm name BlockCyclicResult uses for a config type."""
    if isinstance(config, PRSGDConfig):
        return "pr_sgd"
    if isinstance(config, MCPSGDConfig):
        return "mc_psgd"
    return "mm_psgd" if isinstance(config, MMPSGDConfig) else "fedavg_cyclic"


def _key(request: BlockCyclicRequest, seed: int) -> str:
    payload = {"spec": request.spec, "config": request.config.to_json(), "seed": seed, "track": request.track,
               "kind": type(request.config).__name__}
    return hashlib.sha256(json.dumps(payload, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:24]


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
    tasks, index = [], []
    for i, req in enumerate(requests):
        for seed in req.config.seeds:
            key = _key(req, seed)
            config_json = {"problem": req.spec, "algorithm": req.config.to_json(), "seed": seed, "track": req.track}
            tasks.append(SweepTask(key, _seed_task, (req.spec, req.config, seed, req.track), config_json))
            index.append((i, seed, key))
    executor = None if scheduler else ("serial" if jobs == 1 else "process")
    results = run_sweep(tasks, executor=executor, jobs=jobs, scheduler=scheduler, store=store, use_cache=use_cache,
                        progress=progress, description=description)
    out = []
    for i, req in enumerate(requests):
        parts = [results[key] for j, _, key in index if j == i]
        first = parts[0]
        rounds, down, up, losses = (int(v) for v in first["communication"])
        out.append(BlockCyclicResult(
            run_id=_run_id(req.spec, req.config.to_json()), algorithm=_algorithm(req.config), config=req.config, problem_spec=req.spec,
            seeds=tuple(req.config.seeds), **{name: first[name] for name in _SHARED},
            **{name: (np.stack([p[name] for p in parts]) if name in first else None) for name in _PER_SEED},
            communication=Communication(rounds, down, up, losses), engine="numba",
            seconds=float(sum(float(p["seconds"]) for p in parts)),
        ))
    return out

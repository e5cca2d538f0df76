"""Executing many run configs, of any algorithms, as one sweep: serially, on a local process pool
or on a Dask cluster, through a run store.

The unit of work is one (run config, seed) pair, a pure function of its inputs thanks to the
counter-based sampler, so the results are bit-identical for any executor, number of jobs and
completion order. Each pair is one SweepTask whose key hashes the config restricted to that seed,
the engine, the tracking and tracing flags and the optimum it measures against, so a run store
hands back a finished pair instead of recomputing it, whichever seed list it came with; a traced
request's per-step arrays travel and are stored like its records (``algorithms._base``, "Tracing").
The exact optimum (w*, F*) of each problem is computed once, here in the parent, and shipped with
its tasks (a problem without one, a CNN's, ships None: ``run.objective_optimum``); workers rebuild problems from their specs (cached per process) and return their engine's
``SeedRun`` as arrays; the metrics are evaluated here from the recorded iterates
(``run.run_result``), exactly as ``run`` does in one process.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from problems import Optimum, ProblemSpec

from .algorithms import AlgorithmConfig, RunConfig, RunResult, algorithm_for
from .budget import Workload, check_workload
from .config import ConfigError, config_digest
from .resources import FLOAT_BYTES, check_run_memory, check_sweep_memory
from .run import check_trace, objective_optimum, run_result, run_seed
from .store import TRACE_ARRAY_PREFIX
from .sweep import SweepOptions, SweepTask, run_sweep

__all__ = ["RunRequest", "SeedResultCheck", "check_requests", "execute", "seed_cost", "seed_task"]


@dataclass(frozen=True)
class RunRequest:
    """A run config to execute; the exact optimum of its algorithm's objective (None: computed once
    by ``execute``, or none for an objective without one), whether the engine tracks its per-step statistics and whether it keeps every
    local iterate (``trace``: the NumPy reference path only, so ``execute(..., engine="numpy")``)."""

    config: RunConfig
    optimum: Optimum | None = None
    track: bool = False
    trace: bool = False


def _seed_run(
    problem_spec: ProblemSpec, algorithm: AlgorithmConfig, seed: int, w_star: np.ndarray | None, track: bool,
    trace: bool,
    engine: str,
) -> dict[str, np.ndarray]:
    """Worker body: one seed of one config, as the arrays of its engine's SeedRun as a sweep keeps it
    (``Algorithm.stored``)."""
    engine_of = algorithm_for(algorithm)
    problem = engine_of.build_problem(problem_spec)
    plan = engine_of.plan(problem, algorithm, track, trace)
    seed_run = engine_of.stored(problem, run_seed(engine_of, problem, plan, seed, w_star, engine))
    return {name: np.asarray(value) for name, value in seed_run._asdict().items()}


def seed_task(request: RunRequest, seed: int, engine: str, record_rounds: Sequence[int] | None = None,
              problem: Any = None, cost: float | None = None) -> SweepTask:
    """The sweep task of one seed of a request whose optimum ``execute`` has filled in (None: its
    objective has none). With the built ``problem``, the task's warm key (``SweepTask.warm_key``)
    names the compiled code it runs: its algorithm, the engine, the problem's type and float type
    (a CNN's float32 or float64).

    Its config is the run config restricted to ``seed`` plus the engine, the tracking and tracing
    flags, the seed, the record steps (for the store's table) of ``record_rounds`` (the run's plan
    resolves a config's empty record rounds against the problem; None: the config's own) and a
    digest of w* (the divergence test and tracked radii are measured from it; None without an
    exact optimum, when they are measured from w0); its key is the SHA-256 of that config's
    canonical JSON (16 hex digits, as ``RunConfig.run_id``); its ``result_names`` are the fields of
    its engine's SeedRun, so a run stored with other arrays (an older format, e.g. a FedAvg trace
    that kept the (T, N, d) gradients) is recomputed. ``cost``: the seed's estimated CPU seconds
    (``seed_cost``), by which short runs are batched; it is not part of the config or the key.
    """
    cfg = request.config
    alg = cfg.algorithm
    w_star = None if request.optimum is None else np.ascontiguousarray(request.optimum.w_star, dtype=np.float64)
    config_json: dict[str, Any] = {
        **cfg.with_seeds((seed,)).to_json(),
        "engine": engine,
        "track": request.track,
        "trace": request.trace,
        "seed": seed,
        "record_steps": [int(r) * alg.steps_per_round
                         for r in (alg.record_rounds if record_rounds is None else record_rounds)],
        "w_star_sha256": None if w_star is None else hashlib.sha256(w_star.tobytes()).hexdigest(),
    }
    key = config_digest(config_json)
    warm_key = None if problem is None else _warm_key(request, engine, problem)
    check = None if problem is None else SeedResultCheck(len(config_json["record_steps"]),
                                                         algorithm_for(alg).objective(problem).dim)
    return SweepTask(key, _seed_run, (cfg.problem, alg, seed, w_star, request.track, request.trace, engine),
                     config_json, warm_key, frozenset(algorithm_for(alg).seed_type._fields), check, cost)


@dataclass(frozen=True)
class SeedResultCheck:
    """What every engine's stored seed result satisfies (``algorithms._base.SeedRun``), checked on a
    stored run before it is used (``SweepTask.check``): ``records`` is (P, d) with P = ``points``
    record points and d = ``dim``; every other array of rank >= 1, except the ``trace_*`` arrays
    (whose axis 0 is the local step), is empty (not kept) or has P rows; ``diverged`` is one integer
    >= -1; and unless the run diverged, every such float array is finite (a run that did not diverge
    records finite models). ValueError naming the array otherwise."""

    points: int
    dim: int

    def __call__(self, result: Mapping[str, np.ndarray]) -> None:
        records = result.get("records")
        if records is None or records.shape != (self.points, self.dim):
            shape = None if records is None else records.shape
            raise ValueError(f"'records' has shape {shape}, not ({self.points}, {self.dim})")
        diverged = result.get("diverged")
        if diverged is None or diverged.shape != () or diverged.dtype.kind not in "iu" or int(diverged) < -1:
            raise ValueError(f"'diverged' is {diverged!r}, not one integer >= -1")
        for name, array in result.items():
            if array.ndim == 0 or name.startswith(TRACE_ARRAY_PREFIX) or array.size == 0:
                continue
            if array.shape[0] != self.points:
                raise ValueError(f"{name!r} has shape {array.shape}, not {self.points} record points on axis 0")
            if int(diverged) < 0 and array.dtype.kind == "f" and not np.all(np.isfinite(array)):
                raise ValueError(f"{name!r} holds non-finite values, and the run did not diverge")


def _warm_key(request: RunRequest, engine: str, problem: Any) -> tuple[str, str, str, str]:
    """What selects a run's compiled code: algorithm, engine, problem type and float type (the
    objective's ``float_type``, a CNN's float32 or float64; float64 for linear models). Tracking is a
    kernel argument, not a specialisation, and tracing runs on the reference path."""
    alg = request.config.algorithm
    float_type = getattr(algorithm_for(alg).objective(problem), "float_type", np.float64)
    return alg.name, engine, type(problem).__name__, np.dtype(float_type).name


def execute(
    requests: Sequence[RunRequest],
    options: SweepOptions = SweepOptions(),
    *,
    engine: str = "numba",
    description: str = "runs",
) -> list[RunResult]:
    """Run every request for all its seeds; returns results in the order of ``requests``.

    ``options`` (``SweepOptions``) say where: by default in this process; jobs > 1 on a process
    pool of that size; a scheduler address on that Dask cluster. With a store, each finished
    (config, seed) is stored at once and, with ``use_cache``, stored ones are read back instead
    of recomputed. Before any optimum is computed or task built, the sweep's work is estimated
    from its configs and priced (``budget.check_workload``: every run counted, stored or not,
    unless the store is read-only; the limit is ``options.max_cpu_hours``) and the memory of each
    run and of the whole sweep is estimated (``resources``; the driver holds every seed's trace of
    a traced request): a request over the limit or that cannot fit is refused with ConfigError
    (BudgetError). A traced request needs ``engine="numpy"`` (ConfigError naming ``trace``).
    Raises DivergenceError for the first diverged (config, seed), naming the round.
    """
    if not isinstance(options, SweepOptions):
        raise ConfigError(f"options: expected SweepOptions, got {type(options).__name__}")
    planned = _planned(requests, engine, options, description)
    requests = [replace(req, optimum=optimum) for req, (_, _, optimum) in zip(requests, planned)]
    tasks = [[seed_task(req, seed, engine, plan.record_rounds, problem, seed_cost(req, problem, engine))
              for seed in req.config.algorithm.seeds] for req, (problem, plan, _) in zip(requests, planned)]
    results = run_sweep([task for request_tasks in tasks for task in request_tasks], options, description=description)
    out = []
    for req, (problem, plan, optimum), request_tasks in zip(requests, planned, tasks):
        seed_type = algorithm_for(req.config.algorithm).seed_type
        seed_runs = [seed_type(**results[task.key]) for task in request_tasks]
        seconds = sum(results.seconds[task.key] for task in request_tasks)
        out.append(run_result(req.config, problem, optimum, plan, seed_runs, engine, seconds))
    return out


def seed_cost(request: RunRequest, problem: Any, engine: str) -> float:
    """The estimated CPU seconds of one seed of ``request`` on ``engine`` (``budget``'s price of the run
    over its seeds)."""
    alg = request.config.algorithm
    work = algorithm_for(alg).workload(problem, alg, engine, request.track, request.trace)
    return work.seconds / len(alg.seeds)


def check_requests(requests: Sequence[RunRequest], engine: str = "numba") -> None:
    """Check ``requests`` as ``execute`` does before it runs or stores anything (each request's
    problem and its plan against it, the memory of each run and of the whole sweep; not the price,
    which the caller checks with its own limit), running and storing nothing: ConfigError /
    ProblemError naming the field, as ``execute`` raises them. A caller that creates files for a
    sweep (a report folder, a run store) checks first."""
    _planned(requests, engine)


def _planned(requests: Sequence[RunRequest], engine: str, options: SweepOptions | None = None,
             description: str = "runs") -> list[tuple[Any, Any, Optimum | None]]:
    """Each request's problem (``_problem``), then, with ``options`` and a store that is not read-only,
    the price of the whole sweep (``budget.check_workload`` at ``options.max_cpu_hours``), then each
    request's plan and optimum (``_plan``) and the memory check of the whole sweep."""
    built = [_problem(request, engine) for request in requests]
    if options is not None and (options.store is None or not options.store.readonly):  # read-only: computes nothing
        work = sum((algorithm_for(req.config.algorithm).workload(problem, req.config.algorithm, engine, req.track,
                                                                 req.trace) for req, problem in zip(requests, built)),
                   Workload())
        check_workload(work, f"the sweep {description!r}", limit_hours=options.max_cpu_hours)
    planned = [_plan(request, problem) for request, problem in zip(requests, built)]
    check_sweep_memory(
        sum(len(req.config.algorithm.seeds) for req in requests),
        sum(_driver_floats(req, problem, plan, engine) for req, (problem, plan, _) in zip(requests, planned)),
    )
    return planned


def _driver_floats(request: RunRequest, problem: Any, plan: Any, engine: str) -> int:
    """Floats the driver holds for a request's results: its records, S P (d + 2), or for a traced
    request its engine's estimate of the whole run with every seed's trace."""
    alg = request.config.algorithm
    if request.trace:
        return algorithm_for(alg).memory_bytes(problem, alg, engine, True) // FLOAT_BYTES
    return len(alg.seeds) * len(plan.record_rounds) * (algorithm_for(alg).objective(problem).dim + 2)


def _problem(request: RunRequest, engine: str) -> Any:
    """A request's problem; ConfigError when it is not a RunRequest, its problem cannot be rebuilt
    in a worker, it traces with another engine than "numpy", or one seed of it cannot fit in memory."""
    if not isinstance(request, RunRequest):
        raise ConfigError(f"requests: expected RunRequest items, got {type(request).__name__}")
    check_trace(request.trace, engine)
    cfg = request.config
    if cfg.problem is None:
        raise ConfigError("problem: a sweep rebuilds problems from their specs; this run config has none "
                          "(use run(config, problem=...) for a problem made directly)")
    algorithm = algorithm_for(cfg.algorithm)
    problem = algorithm.build_problem(cfg.problem)
    one_seed = cfg.algorithm.with_seeds(cfg.algorithm.seeds[:1])
    check_run_memory(algorithm.memory_bytes(problem, one_seed, engine, request.trace), engine,
                     algorithm.objective(problem).name, request.trace)
    return problem


def _plan(request: RunRequest, problem: Any) -> tuple[Any, Any, Optimum | None]:
    """A request's problem, its plan (checked against the problem) and its optimum (None for an
    objective without one, ``run.objective_optimum``)."""
    algorithm = algorithm_for(request.config.algorithm)
    optimum = objective_optimum(algorithm.objective(problem), request.optimum)
    return problem, algorithm.plan(problem, request.config.algorithm, request.track, request.trace), optimum

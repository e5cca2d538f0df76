"""The quantities the claims read, at the record points of a stored run: the rows of the table
``fedbound export`` writes (``store_table.export_table``).

A run store keeps each (run config, seed) as its engine's seed result: the recorded global models
(P, d) and the engine's own arrays (``sweep_runs.seed_task``). ``stored_result`` rebuilds from it the
RunResult a sweep hands to a claim, through the sweep's own steps (the problem from its spec, the
exact optimum of the algorithm's objective, the plan, ``run.run_result``), so every metric below is
the one the claims computed, not a second computation of it:

=================  ==========================================================================
metric             value at record r of the global model w_r (``index``: what it indexes)
=================  ==========================================================================
gap                max(F(w_r) - F*, 0) (``RunResult.gap``; exact optimum only)
dist_sq            ||w_r - w*||^2 (``RunResult.dist_sq``; exact optimum only)
loss               F(w_r), the algorithm's objective (``record_values``; a CNN's training loss)
grad_norm_sq       ||grad F(w_r)||^2 (the objective's full gradient)
test_accuracy      share of the held-out test images classified correctly (CNN objectives)
block_gap          F_m(w_r) - F_m(x_m*), ``index`` = block m (block-cyclic, ``block_cyclic_gaps``)
predictor_gap      F_m(p_m) - F_m(x_m*) of block m's predictor p_m, ``index`` = m (MM-/MC-PSGD)
minimax_gap        (1/M) sum_m F_m(p_m) - F* (MM-/MC-PSGD; Ding et al. Thm 1-2)
block_accuracy     block m's predictor on block m's test images, ``index`` = m (block-cyclic CNNs)
iterate            coordinate ``index`` of w_r (only when asked for: ``iterates=True``)
=================  ==========================================================================

Every metric a run cannot have (a gap without an exact optimum, a test accuracy of a linear model)
is simply absent. Entries of a store that are not runs (a PEP claim's SDP solutions) have no rows, nor
has a run that diverged (its records stop being models at the divergence; ``DivergenceError``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from problems import BlockCyclicProblem, ImageClassificationProblem, one_blas_thread

from .algorithms import BlockCyclicExtras, DivergenceError, RunConfig, RunResult, algorithm_for
from .block_gaps import block_cyclic_gaps
from .config import config_digest
from .record_values import record_values
from .run import objective_optimum, run_result
from .store_codec import StoredRun
from .store_file import StoreError
from .sweep_runs import SeedResultCheck

__all__ = ["COLUMNS", "METRIC_NAMES", "MetricRow", "StoredResult", "claims_of", "is_run", "metric_rows", "stored_result"]

METRIC_NAMES = ("gap", "dist_sq", "loss", "grad_norm_sq", "test_accuracy", "block_gap", "predictor_gap",
                "minimax_gap", "block_accuracy", "iterate")
"""The metrics of the table, in the order a run's rows list them (module docstring)."""


@dataclass(frozen=True)
class MetricRow:
    """One row of the exported table: one metric of one stored run at one record point.

    ``claim`` the id of a claim (or experiment) that read the run ("" when the store does not say);
    ``run_id`` the store's key of the run (one config, one seed); ``config_id`` the run config without
    its seeds (the rows of one config_id over seeds are samples of one curve); ``seed``; ``round`` r
    of the record and ``local_step`` = r E, the local steps every client took by then; ``metric`` and
    ``index`` (block or coordinate, None otherwise: ``METRIC_NAMES``); ``value``; and the parameters
    that tell curves apart: ``algorithm`` (its registered name), ``problem`` (the objective's name),
    ``clients`` N, ``local_steps`` E (local steps per round; PR-SGD's sync interval) and
    ``step_size`` (the schedule, ``StepSize.describe``)."""

    claim: str
    run_id: str
    config_id: str
    seed: int
    round: int
    local_step: int
    metric: str
    index: int | None
    value: float
    algorithm: str
    problem: str
    clients: int
    local_steps: int
    step_size: str


COLUMNS = tuple(field.name for field in dataclasses.fields(MetricRow))
"""The table's columns, in order."""


@dataclass(frozen=True, eq=False)
class StoredResult:
    """A stored run rebuilt: its RunResult (one seed), the problem it ran on and the algorithm's objective."""

    result: RunResult
    problem: Any
    objective: Any


def is_run(stored: StoredRun) -> bool:
    """Whether a store entry is a run of the engine (a config with a problem and an algorithm), not
    another result kept in the store (a PEP claim's SDP solution)."""
    return "algorithm" in stored.config and "problem" in stored.config


def stored_result(stored: StoredRun) -> StoredResult:
    """The RunResult of a stored run, as ``sweep_runs.execute`` builds it from the same seed result
    (module docstring); StoreError naming the run when its config is not a run config this fedbound
    reads or its arrays are not its engine's seed result (``SeedResultCheck``), DivergenceError
    (naming the run, the seed and the round) for a run that diverged."""
    try:
        config = RunConfig.from_json(stored.config)
        algorithm = algorithm_for(config.algorithm)
        problem = algorithm.build_problem(config.problem)
        objective = algorithm.objective(problem)
        plan = algorithm.plan(problem, config.algorithm, bool(stored.config.get("track")),
                              bool(stored.config.get("trace")))
        SeedResultCheck(len(plan.record_rounds), objective.dim)(stored.result)
        seed_run = algorithm.seed_type(**{name: stored.result[name] for name in algorithm.seed_type._fields})
    except (ValueError, KeyError, TypeError) as exc:
        raise StoreError(f"run {stored.key}: cannot be read back as a fedbound run ({exc})") from None
    result = run_result(config, problem, objective_optimum(objective), plan, [seed_run],
                        str(stored.config.get("engine", "numba")), 0.0)
    return StoredResult(result, problem, objective)


def metric_rows(stored: StoredRun, claims: tuple[str, ...] = ("",), *, iterates: bool = False) -> Iterator[MetricRow]:
    """The rows of a stored run (none for an entry that is not a run, ``is_run``), once per claim of
    ``claims`` that read it; with ``iterates``, the coordinates of every recorded model too.
    DivergenceError for a run that diverged (before any row). BLAS runs on one thread meanwhile, as in
    the runs themselves (``run.run_seed``): the values do not depend on the machine's thread count,
    and a full gradient of a large problem takes about a third less CPU than with two threads."""
    if not is_run(stored):
        return
    with one_blas_thread():
        rebuilt = stored_result(stored)
        values = _metric_values(rebuilt, iterates)
    result = rebuilt.result
    config = result.config
    seeds_free = {**config.to_json(), "algorithm": {k: v for k, v in config.algorithm.to_json().items() if k != "seeds"}}
    about = dict(run_id=stored.key, config_id=config_digest(seeds_free), seed=int(result.seeds[0]),
                 algorithm=config.algorithm.name, problem=str(rebuilt.objective.name),
                 clients=int(rebuilt.objective.n_clients), local_steps=int(config.algorithm.steps_per_round),
                 step_size=_step_size(config.algorithm))
    for claim in claims:
        for name, array in values.items():
            for p, (round_, step) in enumerate(zip(result.rounds, result.steps)):
                point = array[p]
                for index in (None,) if point.ndim == 0 else range(point.shape[0]):
                    yield MetricRow(claim=claim, round=int(round_), local_step=int(step), metric=name, index=index,
                                    value=float(point if index is None else point[index]), **about)


def _metric_values(rebuilt: StoredResult, iterates: bool) -> dict[str, np.ndarray]:
    """Each metric the run has, as an array (P,) or (P, n) over its ``index`` (module docstring)."""
    result, objective, problem = rebuilt.result, rebuilt.objective, rebuilt.problem
    models = result.iterates[0]  # (P, d): the store holds one seed per run
    out: dict[str, np.ndarray] = {}
    if result.gap is not None:
        out["gap"], out["dist_sq"] = result.gap[0], result.dist_sq[0]
    out["loss"] = record_values(objective, result.iterates)[0]
    out["grad_norm_sq"] = np.array([float(np.sum(np.square(objective.gradient(w)))) for w in models])
    if isinstance(objective, ImageClassificationProblem):
        out["test_accuracy"] = np.array([objective.test_accuracy(w) for w in models])
    if isinstance(result.extras, BlockCyclicExtras):
        if isinstance(problem, BlockCyclicProblem):
            gaps = block_cyclic_gaps(problem, result)
            out["block_gap"] = gaps.global_block_gap[0]
            if gaps.block_gap is not None:
                out["predictor_gap"], out["minimax_gap"] = gaps.block_gap[0], gaps.minimax_gap[0]
        if result.extras.block_accuracy is not None:
            out["block_accuracy"] = result.extras.block_accuracy[0]
    if iterates:
        out["iterate"] = models
    return out


def _step_size(algorithm: Any) -> str:
    """The config's step-size schedule as text (``StepSize.describe``)."""
    step = getattr(algorithm, "step_size", None)
    return "" if step is None else step.describe()


def claims_of(runs: Mapping[str, tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
    """Run key -> the claims that read it, from claim id -> run keys."""
    found: dict[str, list[str]] = {}
    for claim, keys in runs.items():
        for key in keys:
            found.setdefault(key, []).append(claim)
    return {key: tuple(claims) for key, claims in found.items()}

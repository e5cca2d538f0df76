"""FedAvg's engine: one seed through the Numba kernel (``kernel``) or the NumPy reference path
(``reference``), with full participation or a sampling scheme (``participation``), and its extras,
the tracked maxima of Li et al.'s Assumption 3-4 quantities and, for a traced run, every local
iterate of every seed (``trace.FedAvgTrace``).

Two kinds of problem run through the same config, the same kernel (``local_sgd``) and the same
reference (``local_sgd_reference``), the model chosen once from the problem
(``local_models.local_model``): a FederatedProblem (the linear models, from w0 = 0 or the config's
``initial_model``) and a CNN's ImageClassificationProblem (from the network's initialisation at
the run seed, ``ImageClassificationProblem.initial_model``, or the config's ``initial_model``;
iterates in the problem's dtype, recorded as float64; no trace).

With ``track`` both paths record, over every local iterate of every sampled client, max ||w - w*||^2
(the radius of the region the iterates visit; measured from w0 when the problem has no exact
optimum) and max ||g||^2 of the realised stochastic gradients (exactly, when gradients are
exact); untracked runs report NaN. With ``trace`` (the reference path only) the seed keeps every
local model and the reductions of every step's gradients that the lemma checks read (``trace``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from problems import FederatedProblem, ImageClassificationProblem, ProblemSpec, build_problem, check_problem

from ...budget import Workload, config_drivers, model_flops_per_row, run_workload
from ...config import ConfigError
from ...resources import FLOAT_BYTES
from .._base import NOT_TRACED
from ..local_models import local_model
from ..local_sgd import RoundPlan, local_sgd_seed
from ..local_sgd_reference import local_sgd_reference
from ..participation import check_participants_fit, kernel_participation
from .config import FedAvgConfig
from .trace import FedAvgTrace, FedAvgTraceArrays

__all__ = ["FEDAVG", "FedAvgEngine", "FedAvgExtras", "FedAvgPlan", "FedAvgSeed"]


class FedAvgSeed(NamedTuple):
    """One seed: records (P, d) the global model at the record rounds; max_radius_sq and
    max_grad_sq (0-d) the tracked maxima (meaningless when not tracked); diverged (0-d int64) the 0-based
    round at whose end the run diverged, -1 if it did not; the ``trace_*`` arrays are the fields of
    ``FedAvgTraceArrays`` for a traced run, ``NOT_TRACED`` otherwise."""

    records: np.ndarray
    max_radius_sq: np.ndarray
    max_grad_sq: np.ndarray
    diverged: np.ndarray
    trace_local_models: np.ndarray = NOT_TRACED
    trace_mean_full_gradients: np.ndarray = NOT_TRACED
    trace_full_gradient_sq: np.ndarray = NOT_TRACED
    trace_stochastic_gradient_sq: np.ndarray = NOT_TRACED
    trace_mean_noise: np.ndarray = NOT_TRACED


@dataclass(frozen=True, eq=False)
class FedAvgExtras:
    """max_radius_sq and max_grad_sq (S,): per seed, max ||w - w*||^2 (||w - w0||^2 on a problem
    without an exact optimum) over every local iterate and max ||g||^2 over every realised
    stochastic gradient; NaN when the run was not tracked.
    ``traces``: one FedAvgTrace per seed (in the order of the run's seeds) for a traced run, else None."""

    max_radius_sq: np.ndarray
    max_grad_sq: np.ndarray
    traces: tuple[FedAvgTrace, ...] | None = None


@dataclass(frozen=True)
class FedAvgPlan:
    """A FedAvg config as it runs: the config, its record rounds, whether to track and whether to trace."""

    config: FedAvgConfig
    record_rounds: tuple[int, ...]
    track: bool
    trace: bool = False


Problem = FederatedProblem | ImageClassificationProblem
"""The problems FedAvg runs on: linear models, and CNNs."""


class FedAvgEngine:
    """FedAvg / local SGD (``FedAvgConfig``: full participation or a sampling scheme) on a
    FederatedProblem or a CNN's ImageClassificationProblem."""

    config_type = FedAvgConfig
    seed_type = FedAvgSeed

    def build_problem(self, spec: ProblemSpec) -> Problem:
        return build_problem(spec)

    def check_problem(self, problem: Any, spec: ProblemSpec | None) -> Problem:
        return check_problem(problem, spec)

    def objective(self, problem: Problem) -> Problem:
        return problem

    def plan(self, problem: Problem, config: FedAvgConfig, track: bool = False, trace: bool = False) -> FedAvgPlan:
        if config.initial_model and len(config.initial_model) != problem.dim:
            raise ConfigError(f"initial_model: has {len(config.initial_model)} entries, the problem "
                              f"{problem.name!r} has d = {problem.dim} parameters")
        if trace and not local_model(problem).keeps_trace:
            raise ConfigError(f"trace: a CNN run keeps no per-step trace ({problem.dim} parameters per local "
                              "iterate; the lemma checks that read traces are about linear models); run it with trace=False")
        check_participants_fit(config.participation, config.participants, problem.n_clients)
        return FedAvgPlan(config, config.record_rounds, track, trace)

    def run_seed(
        self, problem: Problem, plan: FedAvgPlan, seed: int, w_star: np.ndarray | None, engine: str
    ) -> FedAvgSeed:
        alg, track, model = plan.config, plan.track, local_model(problem)
        w0 = model.start(alg.initial_model, seed)
        w_star = np.ascontiguousarray(w0 if w_star is None else w_star, dtype=np.float64)  # None: anchored at w0
        trace = FedAvgTraceArrays.allocate(alg.total_steps, problem.n_clients, problem.dim) if plan.trace else None
        if engine == "numpy":
            records, stats, diverged = local_sgd_reference(problem, alg, seed, w0, w_star, track, trace)
        else:
            scheme = kernel_participation(alg.participation, alg.participants, problem)
            records, stats, diverged = local_sgd_seed(problem, model.kernel_clients(alg.batch_size), scheme,
                                                      alg.step_size.schedule, RoundPlan.of(alg, seed), w0, w_star,
                                                      track)
        return FedAvgSeed(records, np.array(stats[0]), np.array(stats[1]), np.array(int(diverged), dtype=np.int64),
                          *(() if trace is None else trace))

    def stored(self, problem: Problem, seed_run: FedAvgSeed) -> FedAvgSeed:
        """A sweep keeps the whole seed run (its claims read the records and the traces)."""
        return seed_run

    def extras(self, problem: Problem, plan: FedAvgPlan, seed_runs: Sequence[FedAvgSeed]) -> FedAvgExtras:
        traces = None if not plan.trace else tuple(
            FedAvgTrace.of(FedAvgTraceArrays(run.trace_local_models, run.trace_mean_full_gradients,
                                             run.trace_full_gradient_sq, run.trace_stochastic_gradient_sq,
                                             run.trace_mean_noise), problem.weights, plan.config)
            for run in seed_runs)
        if not plan.track:
            return FedAvgExtras(np.full(len(seed_runs), np.nan), np.full(len(seed_runs), np.nan), traces)
        return FedAvgExtras(np.array([float(s.max_radius_sq) for s in seed_runs]),
                            np.array([float(s.max_grad_sq) for s in seed_runs]), traces)

    def memory_bytes(self, problem: Problem, config: FedAvgConfig, engine: str, trace: bool = False) -> int:
        """Records S P (d + 2) floats, plus the model's work arrays (``LocalModel.work_floats``: on a
        linear model the padded client data of the reference path or the kernel's minibatch and Gram
        matrices; on a CNN the models, the aggregate, the gradient and the network's activations);
        a traced run adds per seed its trace, (T+1) N d + 2 T d + 2 T N floats and wbar_t, eta_t
        ((T+1) d + T)."""
        S, P, N, d = len(config.seeds), len(config.record_rounds), problem.n_clients, problem.dim
        T = config.total_steps
        traces = S * ((T + 1) * N * d + 2 * T * d + 2 * T * N + (T + 1) * d + T) if trace else 0
        work = local_model(problem).work_floats(config.batch_size, engine)
        return FLOAT_BYTES * (S * P * (d + 2) + work + traces)

    def workload(self, problem: Problem, config: FedAvgConfig, engine: str, track: bool = False,
                 trace: bool = False) -> Workload:
        """rounds x E steps on K clients (all N under full participation) per seed, each on the
        minibatch (or the client's rows on average, for exact gradients), and a pass over the rows
        per record point (``convergence.budget``); tracking (two norms a step) adds no pass."""
        sizes = problem.client_sizes
        rows = config.batch_size if config.batch_size > 0 else float(sizes.mean())
        flops, network = model_flops_per_row(problem)
        return run_workload(
            seeds=len(config.seeds), rounds=config.rounds, steps_per_round=config.local_steps,
            clients=config.participants or problem.n_clients, rows=rows, flops_per_row=flops,
            records=len(config.record_rounds), data_rows=int(sizes.sum()), dim=problem.dim, network=network,
            reference=engine == "numpy" or trace,
        ).with_drivers(*config_drivers(config))


FEDAVG = FedAvgEngine()

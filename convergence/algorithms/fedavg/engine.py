"""FedAvg's engine: one seed through the Numba kernel (``kernel``) or the NumPy reference path
(``reference``), and its extras, the tracked maxima of Li et al.'s Assumption 3-4 quantities.

With ``track`` both paths record, over every local iterate of every client, max ||w - w*||^2
(the radius of the region the iterates visit) and max ||g||^2 of the realised stochastic
gradients (exactly, when gradients are exact); untracked runs report NaN.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from problems import FederatedProblem, ProblemSpec, build_problem, check_problem

from ...resources import FLOAT_BYTES
from .config import FedAvgConfig
from .kernel import fedavg_kernel
from .packing import pack_clients
from .reference import fedavg_reference

__all__ = ["FEDAVG", "FedAvgEngine", "FedAvgExtras", "FedAvgPlan", "FedAvgSeed"]


class FedAvgSeed(NamedTuple):
    """One seed: records (P, d) the global model at the record rounds; max_radius_sq and
    max_grad_sq (0-d) the tracked maxima (meaningless when not tracked); diverged (0-d int64) the 0-based
    round at whose end the run diverged, -1 if it did not."""

    records: np.ndarray
    max_radius_sq: np.ndarray
    max_grad_sq: np.ndarray
    diverged: np.ndarray


@dataclass(frozen=True, eq=False)
class FedAvgExtras:
    """max_radius_sq and max_grad_sq (S,): per seed, max ||w - w*||^2 over every local iterate and
    max ||g||^2 over every realised stochastic gradient; NaN when the run was not tracked."""

    max_radius_sq: np.ndarray
    max_grad_sq: np.ndarray


@dataclass(frozen=True)
class FedAvgPlan:
    """A FedAvg config as it runs: the config, its record rounds and whether to track."""

    config: FedAvgConfig
    record_rounds: tuple[int, ...]
    track: bool


class FedAvgEngine:
    """FedAvg / local SGD with full participation (``FedAvgConfig``) on a FederatedProblem."""

    config_type = FedAvgConfig
    seed_type = FedAvgSeed

    def build_problem(self, spec: ProblemSpec) -> FederatedProblem:
        return build_problem(spec)

    def check_problem(self, problem: Any, spec: ProblemSpec | None) -> FederatedProblem:
        return check_problem(problem, spec)

    def objective(self, problem: FederatedProblem) -> FederatedProblem:
        return problem

    def plan(self, problem: FederatedProblem, config: FedAvgConfig, track: bool) -> FedAvgPlan:
        return FedAvgPlan(config, config.record_rounds, track)

    def run_seed(
        self, problem: FederatedProblem, plan: FedAvgPlan, seed: int, w_star: np.ndarray, engine: str
    ) -> FedAvgSeed:
        alg, track = plan.config, plan.track
        w0 = np.zeros(problem.dim)
        w_star = np.ascontiguousarray(w_star, dtype=np.float64)
        if engine == "numpy":
            records, stats, diverged = fedavg_reference(problem, alg, seed, w0, w_star, track)
        else:
            packed = pack_clients(problem)
            records = np.zeros((len(alg.record_rounds), problem.dim))
            stats = np.full(2, np.nan)
            a, b = alg.step_size.params
            diverged = fedavg_kernel(
                packed.loss, packed.n_classes, packed.n_features, packed.mu, packed.weights, packed.targets,
                packed.sample_offsets, packed.support, packed.support_offsets, packed.rows, packed.row_offsets,
                packed.full_support, packed.gram, packed.uses_gram, packed.gram_rhs, alg.step_size.code, a, b,
                alg.local_steps, alg.rounds, alg.batch_size, seed, alg.server_lr,
                np.asarray(alg.record_rounds, dtype=np.int64), w0, w_star, track, records, stats,
            )
        return FedAvgSeed(records, np.array(stats[0]), np.array(stats[1]), np.array(int(diverged), dtype=np.int64))

    def extras(self, problem: FederatedProblem, plan: FedAvgPlan, seed_runs: Sequence[FedAvgSeed]) -> FedAvgExtras:
        if not plan.track:
            return FedAvgExtras(np.full(len(seed_runs), np.nan), np.full(len(seed_runs), np.nan))
        return FedAvgExtras(np.array([float(s.max_radius_sq) for s in seed_runs]),
                            np.array([float(s.max_grad_sq) for s in seed_runs]))

    def memory_bytes(self, problem: FederatedProblem, config: FedAvgConfig, engine: str) -> int:
        """Records S P (d + 2) floats, plus the work arrays: the padded client data of the
        reference path (N n_max (f + 2) and a minibatch N b (f + 2)), or the kernel's minibatch
        (b f) and, for exact least-squares steps, the Gram matrices (N f^2)."""
        S, P = len(config.seeds), len(config.record_rounds)
        N, f, d, b = problem.n_clients, problem.n_features, problem.dim, config.batch_size
        records = S * P * (d + 2)
        if engine == "numpy":
            work = N * int(problem.client_sizes.max()) * (f + 2) + N * b * (f + 2)
        else:
            work = max(b, 1) * f + (N * f * f if problem.model.quadratic and b == 0 else 0)
        return FLOAT_BYTES * (records + work)


FEDAVG = FedAvgEngine()

"""The models the block-cyclic engine runs, chosen once from the problem's type (``cyclic_model``):
each ``CyclicModel`` carries what differs between a linear model (``BlockCyclicProblem``) and a CNN
(``BlockCyclicImageProblem``) around the one round loop: the start w0 and the divergence anchor,
the kernel's bundle (``linear_pieces.kernel_data``, ``network_pieces.network_data``), the NumPy
reference's pieces (``reference_pieces``), whether a run can be traced, what a sweep stores of a
seed, the per-block accuracies of a CNN run, and the memory a run's data and workspace take.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

import numpy as np

from problems import BlockCyclicImageProblem, BlockCyclicProblem, ProblemError

from ...config import ConfigError
from .kernel import Plan, SeedRecords, kernel_seed
from .linear_pieces import kernel_data
from .network_pieces import network_data
from .reference import block_cyclic_reference
from .reference_pieces import LinearReference, NetworkReference
from .trace import BlockCyclicTraceArrays

__all__ = ["CYCLIC_MODELS", "NOT_STORED", "CyclicModel", "cyclic_model"]

NOT_STORED = np.zeros((0, 0))
"""The predictors and separate models of a CNN seed as a sweep keeps it (``CyclicModel.stored``):
empty, read-only."""
NOT_STORED.setflags(write=False)


class CyclicModel(ABC):
    """One kind of model of the block-cyclic engine. ``traces``: whether a run can keep a per-step
    trace (``trace.BlockCyclicTrace``)."""

    traces: bool

    @abstractmethod
    def run_seed(self, problem: Any, plan: Plan, seed: int, w_star: np.ndarray | None, engine: str,
                 has_predictors: bool) -> SeedRecords:
        """One seed of ``plan`` through the kernel (engine "numba") or the NumPy reference;
        ``has_predictors``: whether the algorithm keeps per-block predictors."""

    def stored(self, seed_run: SeedRecords) -> SeedRecords:
        """What a sweep keeps of a seed (``BlockCyclicEngine.stored``): all of it."""
        return seed_run

    def block_accuracy(self, problem: Any, plan: Plan, seed_runs: Sequence[SeedRecords]) -> np.ndarray | None:
        """The extras' per-block test accuracies (S, P, M), None for a model without test images."""
        return None

    @abstractmethod
    def work_floats(self, problem: Any, plan: Plan, seeds: int, engine: str, trace: bool) -> int:
        """Floats of a run's data, workspace and traces beyond its records (``memory_bytes``)."""


class LinearCyclic(CyclicModel):
    """A linear model: from w0 = 0, anchored at the exact optimum w* (at w0 without one); the kernel
    on ``kernel_data``, the reference on ``LinearReference``; a run can be traced."""

    traces = True

    def run_seed(self, problem: BlockCyclicProblem, plan: Plan, seed: int, w_star: np.ndarray | None, engine: str,
                 has_predictors: bool) -> SeedRecords:
        w0 = np.zeros(problem.dim)
        w_star = w0 if w_star is None else w_star  # without an exact optimum the run is anchored at w0
        if engine == "numpy":
            return block_cyclic_reference(LinearReference(problem, plan, seed), plan, seed, w0, w_star)
        return kernel_seed(problem.combined.model.kernel_loss(), kernel_data(problem, plan.batch, plan.track), plan,
                           seed, w0, w_star)

    def work_floats(self, problem: BlockCyclicProblem, plan: Plan, seeds: int, engine: str, trace: bool) -> int:
        """The reference path's padded rows (M N n_max (f + 2)), or the kernel's copy of the rows
        (n f) and, for exact least-squares steps, the Gram matrices (M N f^2); a traced run adds per
        seed its trace (``BlockCyclicTraceArrays.floats``, about (3 + 1_MC) (T+1) K d)."""
        c = problem.combined
        f = c.n_features
        if engine == "numpy":
            work = c.n_clients * int(c.client_sizes.max()) * (f + 2)
        else:
            work = c.X.size + (c.n_clients * f * f if c.model.quadratic and plan.batch == 0 else 0)
        return work + (seeds * BlockCyclicTraceArrays.floats(plan, problem.n_blocks, c.dim) if trace else 0)


class NetworkCyclic(CyclicModel):
    """A CNN: from the network's initialisation at the run seed (``initial_model``), anchored at w0
    (no exact optimum), iterates in the problem's dtype and records in float64; the kernel on
    ``network_data``, the reference on ``NetworkReference``; the run scores its records on each
    block's test images; no trace (``d`` parameters per local iterate; the lemma checks that read
    traces are about linear models)."""

    traces = False

    def run_seed(self, problem: BlockCyclicImageProblem, plan: Plan, seed: int, w_star: np.ndarray | None,
                 engine: str, has_predictors: bool) -> SeedRecords:
        w0 = problem.combined.initial_model(seed)
        anchor = w0.astype(np.float64)
        if engine == "numpy":
            run = block_cyclic_reference(NetworkReference(problem, plan, seed), plan, seed, w0, anchor)
        else:
            run = kernel_seed(problem.combined.network.layout.table, network_data(problem, plan.batch), plan, seed,
                              w0, anchor)
        return self._scored(problem, run, engine, has_predictors)

    @staticmethod
    def _scored(problem: BlockCyclicImageProblem, run: SeedRecords, engine: str, has_predictors: bool) -> SeedRecords:
        """``run`` with its block_accuracy (P, M): block m's predictor (the algorithm's, or the global
        model for one without predictors) scored on block m's test images at every record point
        (``BlockCyclicImageProblem.block_accuracy``, the network in float64 through the run's engine).
        Scored here, in the run, so that a sweep's workers score their own runs; a diverged seed is
        not scored (its run raises DivergenceError)."""
        if run.diverged >= 0:
            return run
        M, d = problem.n_blocks, problem.dim
        accuracy = np.array([problem.block_accuracy(run.predictors[p] if has_predictors
                                                    else np.broadcast_to(model, (M, d)), engine).per_block
                             for p, model in enumerate(run.records)]).reshape(-1, M)
        return run._replace(block_accuracy=accuracy)

    def stored(self, seed_run: SeedRecords) -> SeedRecords:
        """The records, selections, tracked metrics and the per-block accuracies scored in the run
        (``_scored``), without the predictors and separate models (P M d floats each per seed; the
        claims on CNNs read their accuracies only), so ``execute``'s extras have them as None."""
        return seed_run._replace(predictors=NOT_STORED, separate=NOT_STORED)

    def block_accuracy(self, problem: BlockCyclicImageProblem, plan: Plan,
                       seed_runs: Sequence[SeedRecords]) -> np.ndarray:
        """The seeds' block accuracies stacked, (S, P, M); ConfigError naming ``block_accuracy`` for
        a stored seed that has none (stored by a fedbound that scored after the run)."""
        shape = (len(plan.record_rounds), problem.n_blocks)
        if any(run.block_accuracy.shape != shape for run in seed_runs):
            raise ConfigError(f"block_accuracy: a seed of this CNN run has no per-block accuracies {shape} (a run "
                              "stored by an older fedbound); recompute it (fedbound verify --no-cache)")
        return np.stack([run.block_accuracy for run in seed_runs])

    def work_floats(self, problem: BlockCyclicImageProblem, plan: Plan, seeds: int, engine: str, trace: bool) -> int:
        """The 2 K local models and 2 M + 6 models of the kernel (predictors, w_bar_m, averages,
        buffers), and the network's activations and their gradients for the largest batch (2 b_max A,
        A the layout's activation size; the reference's im2col copies are of the same order)."""
        c = problem.combined
        rows = max(plan.batch, int(c.client_sizes.max()))
        return (2 * plan.participants + 2 * problem.n_blocks + 6) * c.dim + 2 * rows * c.network.layout.activation_size


CYCLIC_MODELS: dict[type, CyclicModel] = {BlockCyclicProblem: LinearCyclic(), BlockCyclicImageProblem: NetworkCyclic()}
"""The problems the block-cyclic engine runs, each with its model."""


def cyclic_model(problem: Any) -> CyclicModel:
    """The model of ``problem`` (of its type or a base type); ProblemError naming ``problem`` else."""
    for cls in type(problem).__mro__:
        if cls in CYCLIC_MODELS:
            return CYCLIC_MODELS[cls]
    raise ProblemError(f"problem: expected a {' or '.join(cls.__name__ for cls in CYCLIC_MODELS)}, "
                       f"got {type(problem).__name__}")

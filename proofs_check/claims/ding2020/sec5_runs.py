"""How Ding et al.'s Sec. 5 claims (ding2020.fig2, table1, fig4, fig5) build and score their runs: the
network of each data set, the block-cyclic image problem, MM-PSGD and MC-PSGD with Sec. 5's predictor,
and the paper's metric.

Source: Ding et al. 2020, Sec. 5 (``shared/papers/ding2020_block_cyclic.md``). With acc_m(r) the
accuracy of block m's model at round r on block m's test images (``BlockCyclicImageProblem.block_accuracy``),

    A(r) = (1/M) sum_m acc_m(r),     Abar = mean of A(r) over the last cycle's rounds r in (C-1) M E + 1 .. C M E,

and the oscillation of a run is the mean over blocks of the range of its per-block accuracy over the
last cycle,

    W = (1/M) sum_m [max_r acc_m(r) - min_r acc_m(r)],   r over the last cycle's rounds

(``Fig2Curves``; the checks that use them are in ``fig2``, ``table1``, ``sec5``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

import convergence
import problems

from .sec5_plans import NETWORK_OF_DATASET

if TYPE_CHECKING:
    from convergence import MCPSGDConfig, MMPSGDConfig, RunResult
    from problems import BlockCyclicImageProblem

    from .sec5_plans import DingBlocksPlan

__all__ = ["Fig2Curves", "fig2_curves", "SEC5_PREDICTOR", "SHUFFLE_SEED", "sec5_configs",
           "sec5_problem", "single_model_per_block", "trained_scale"]

SHUFFLE_SEED = 0
"""The seed of the shuffled baseline's deal of the pooled images."""
SEC5_PREDICTOR = "exponential"
"""The predictor of MM-PSGD and of MC-PSGD in every Sec. 5 claim (fig2, table1, fig4, fig5): Sec. 5's
"exponentially weighted average of the historical global model [...] where the base is 0.5, and the round
number works as the exponent" (Implementation Settings), used for both algorithms. The theorem claims
(ding2020.thm1, thm2, speedup, ordering, lemmas) keep eq. 7's uniform average, which the proofs assume."""


@dataclass(frozen=True)
class Fig2Curves:
    """Per-block accuracies of a run: ``per_block`` (S, P, M), acc_m(r) for seed s at the recorded
    rounds ``rounds`` (P,), increasing, whose last ``cycle_rounds`` = M E are the last cycle's."""

    per_block: np.ndarray
    rounds: np.ndarray
    cycle_rounds: int

    @property
    def average(self) -> np.ndarray:
        """A(r) = (1/M) sum_m acc_m(r) at the recorded rounds, shape (S, P)."""
        return self.per_block.mean(axis=2)

    @property
    def last_cycle_average(self) -> np.ndarray:
        """Abar, the mean of A(r) over the last cycle's rounds, shape (S,)."""
        return self.average[:, -self.cycle_rounds:].mean(axis=1)

    @property
    def best(self) -> np.ndarray:
        """Abest, the largest A(r) over the recorded rounds, shape (S,): the paper's "best test accuracy"
        (Sec. 5) as far as the rounds recorded show it."""
        return self.average.max(axis=1)

    @property
    def oscillation(self) -> np.ndarray:
        """W = (1/M) sum_m (max - min of acc_m(r) over the last cycle's rounds), shape (S,)."""
        last = self.per_block[:, -self.cycle_rounds:, :]
        return (last.max(axis=1) - last.min(axis=1)).mean(axis=1)


def fig2_curves(per_block: np.ndarray, rounds: np.ndarray, cycle_rounds: int) -> Fig2Curves:
    """``Fig2Curves`` from per-block accuracies (S, P, M) recorded at ``rounds`` (P,), which must
    end with every round of the last cycle, R - M E + 1 .. R (R = rounds[-1], M E = ``cycle_rounds``).

    Raises:
        ValueError: naming ``cycle_rounds`` (not a positive integer), ``rounds`` (not increasing
            integers, or without every round of the last cycle) or ``per_block`` (not (S, P, M),
            non-finite, outside [0, 1]).
    """
    if isinstance(cycle_rounds, bool) or not isinstance(cycle_rounds, (int, np.integer)) or cycle_rounds < 1:
        raise ValueError(f"cycle_rounds: need a positive integer M E, got {cycle_rounds!r}")
    rounds = np.asarray(rounds)
    if rounds.ndim != 1 or rounds.dtype.kind not in "iu" or np.any(np.diff(rounds) <= 0):
        raise ValueError(f"rounds: need increasing integer rounds, got {rounds!r}")
    last = rounds[-cycle_rounds:] if rounds.size >= cycle_rounds else rounds
    if rounds.size < cycle_rounds or not np.array_equal(last, np.arange(rounds[-1] - cycle_rounds + 1, rounds[-1] + 1)):
        raise ValueError(f"rounds: must end with every round of the last cycle ({cycle_rounds} rounds), got {rounds!r}")
    per_block = np.asarray(per_block, dtype=float)
    if per_block.ndim != 3 or per_block.shape[1] != rounds.size:
        raise ValueError(f"per_block: expected shape (seeds, {rounds.size} recorded rounds, blocks), "
                         f"got {per_block.shape}")
    if not np.all(np.isfinite(per_block)) or per_block.min() < 0 or per_block.max() > 1:
        raise ValueError("per_block: accuracies must be finite and in [0, 1]")
    return Fig2Curves(per_block, rounds, int(cycle_rounds))


def sec5_problem(dataset: str, n_blocks: int, clients_per_block: int, labels_per_block: int, n_train: int,
                 n_test: int) -> BlockCyclicImageProblem:
    """The ``block_cyclic_images`` problem of Sec. 5 on ``dataset`` with its network
    (``NETWORK_OF_DATASET``): M = ``n_blocks`` blocks of ``labels_per_block`` labels, N =
    ``clients_per_block`` clients each, the first ``n_train`` / ``n_test`` images (0: all). ``dataset``
    is a data set's name: a plan's "auto" is resolved with the plan (``sec5_plans.Sec5DataPlans``), so
    specs and run ids name the data set used."""
    if dataset not in NETWORK_OF_DATASET:
        raise ValueError(f"dataset: expected one of {', '.join(NETWORK_OF_DATASET)} (a plan's 'auto' is resolved "
                         f"by resolve_plan), got {dataset!r}")
    spec = problems.problem_spec("block_cyclic_images", dataset=dataset, network=NETWORK_OF_DATASET[dataset],
                                 n_blocks=n_blocks, clients_per_block=clients_per_block,
                                 labels_per_block=labels_per_block, n_train=n_train or None, n_test=n_test or None)
    return problems.build_block_cyclic(spec)


def sec5_configs(**schedule: Any) -> tuple[MMPSGDConfig, MCPSGDConfig]:
    """MM-PSGD and MC-PSGD as Sec. 5 runs them, on the block-cyclic ``schedule`` (the fields the two
    configs share: cycles, rounds_per_block, local_steps, step_size, batch_size, record_rounds, seeds,
    participants): both with the paper's predictor (``SEC5_PREDICTOR``), MC-PSGD with eta = gamma
    (Sec. 5: "both learning rates gamma = eta")."""
    return (convergence.MMPSGDConfig(predictor=SEC5_PREDICTOR, **schedule),
            convergence.MCPSGDConfig(predictor=SEC5_PREDICTOR, block_step_size=schedule["step_size"], **schedule))


def single_model_per_block(problem: BlockCyclicImageProblem, result: RunResult) -> np.ndarray:
    """acc_m of a single-model run's recorded iterates (FedAvg's global model) on each block's test
    images of ``problem``, shape (S, P, M), as the paper scores FedAvg on shuffled data."""
    M = problem.n_blocks
    return np.array([[problem.block_accuracy(np.repeat(model[None, :], M, axis=0)).per_block for model in seed]
                     for seed in result.iterates])


def trained_scale(problem: BlockCyclicImageProblem, plan: DingBlocksPlan, local_steps: str) -> str:
    """How fedbound trained, as the notes of ding2020.fig2 and table1 open: the data set and its
    network, the training images, N, M, labels per block, C, E, I (``local_steps``: one value or the
    grid), batch, gamma = eta and the predictor; the caller closes the parenthesis."""
    return (f"fedbound ({problem.combined.dataset}; {NETWORK_OF_DATASET[plan.dataset]}, "
            f"{int(problem.combined.images.shape[0])} training images, N = {plan.clients_per_block}, "
            f"M = {plan.n_blocks}, {plan.labels_per_block} labels per block, C = {plan.cycles}, "
            f"E = {plan.rounds_per_block}, I = {local_steps}, batch {plan.batch_size}, gamma = eta = "
            f"{plan.step_size:g}, Sec. 5's exponential predictor for MM-PSGD and MC-PSGD")

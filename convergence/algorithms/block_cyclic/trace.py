"""The block-cyclic trace: every local iterate and every round of one seed, kept by the NumPy
reference path (``reference``) when the run is planned with ``trace=True``.

The kernel returns the global models at a few record rounds only; Lemmas 2, 3, 6, 8 and 9 of Ding
et al., "Distributed Optimization over Block-Cyclic Data" (arXiv 2002.07454,
``shared/papers/ding2020_block_cyclic.md``, eq. 14, Lemma 3, eq. 17, eq. 48-49 / 56-59, eq. 60)
are statements about every local step and every communication round. A traced reference run
writes the arrays below from the very arithmetic that produces its records, so its global models,
predictors and block-separate models are those of the untraced run bit for bit (and agree with
the Numba kernel to rounding). Every block-cyclic algorithm traces (MM-PSGD, MC-PSGD,
FedAvg-cyclic, PR-SGD); the y chain's arrays exist for MC-PSGD only.

Notation (Ding et al. Sec. 3-4, Algorithms 1-2; our counters are 0-based): round r = 0..R-1 uses
block m = (r // E) % M and local steps t = r I, ..., r I + I - 1 (T = R I). x_t^i is the x chain
(block-mixed, step gamma_t) model of the i-th participant of the round before local step t; at a
communication step t = r I it is the global model x_bar the server just broadcast, and x_T^i is
the final global model (the paper's x_{t_r}^i = x_bar_{t_r}, proof of Lemma 3). The step is
x_{t+1}^i = x_t^i - gamma_t g_t^i, g_t^i the minibatch (or exact, batch 0) gradient of F_m^i at
x_t^i, including the mu x term. xbar_t = (1/K) sum_i x_t^i is the paper's every-step average
(eq. 10); at t = r I it is the global model up to the rounding of a mean of K equal vectors.
MC-PSGD's y chain (block-separate, step eta_t) is kept the same way: y_t^i restarts at each round
from w_bar_m, block m's latest separate model, and y_T^i is the last round's y_bar. With partial
participation the client axis holds the round's K participants in ascending order; with full
participation (the paper's setting) K = N and it holds clients 0..N-1.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from .kernel import MODE_MC, Plan

__all__ = ["BlockCyclicTrace", "BlockCyclicTraceArrays"]


class BlockCyclicTraceArrays(NamedTuple):
    """What a traced reference run writes (R rounds, T = R I steps, K participants, M blocks, d
    parameters), the seed's ``trace_*`` arrays: ``participants`` (R, K) the clients of round r;
    ``local_models`` (T+1, K, d) x_t^i (row T: the final global model); ``stochastic_gradients``
    and ``local_gradients`` (T, K, d) g_t^i and grad F_m^i(x_t^i) (exact, with the mu x term);
    ``separate_local_models`` (T+1, K, d) y_t^i and ``separate_models`` (R, d) the y_bar of
    round r (MC-PSGD, else zero rows); ``chose_separate`` (R,) whether the server selected y_bar;
    ``losses`` (R, 2) the average local losses (1/K) sum_i F_m^i of x_bar and y_bar that it
    compared (MC-PSGD, else zero rows); ``predictors`` (R+1, M, d) the predictors after rounds
    0..R (row 0: w0). Allocated NaN-filled (participants -1), so a run that diverges early
    leaves no stale memory in the rounds it did not reach."""

    participants: np.ndarray
    local_models: np.ndarray
    stochastic_gradients: np.ndarray
    local_gradients: np.ndarray
    separate_local_models: np.ndarray
    separate_models: np.ndarray
    chose_separate: np.ndarray
    losses: np.ndarray
    predictors: np.ndarray

    @classmethod
    def allocate(cls, plan: Plan, n_blocks: int, dim: int) -> BlockCyclicTraceArrays:
        """Arrays of the shapes above for ``plan`` (K = plan.participants, R = plan.rounds)."""
        R, K, M, d = plan.rounds, plan.participants, n_blocks, dim
        T, mc = R * plan.local_steps, plan.mode == MODE_MC
        return cls(
            participants=np.full((R, K), -1, dtype=np.int64),
            local_models=np.full((T + 1, K, d), np.nan),
            stochastic_gradients=np.full((T, K, d), np.nan),
            local_gradients=np.full((T, K, d), np.nan),
            separate_local_models=np.full((T + 1 if mc else 0, K, d), np.nan),
            separate_models=np.full((R if mc else 0, d), np.nan),
            chose_separate=np.zeros(R, dtype=bool),
            losses=np.full((R if mc else 0, 2), np.nan),
            predictors=np.full((R + 1, M, d), np.nan),
        )

    @staticmethod
    def floats(plan: Plan, n_blocks: int, dim: int) -> int:
        """Entries of one seed's arrays (as allocated) and of the BlockCyclicTrace built on them."""
        R, K, M, d, I = plan.rounds, plan.participants, n_blocks, dim, plan.local_steps
        T, mc = R * I, plan.mode == MODE_MC
        written = R * K + (T + 1) * K * d + 2 * T * K * d + R + (R + 1) * M * d
        written += ((T + 1) * K * d + R * d + 2 * R) if mc else 0
        derived = T + (T + 1) * d + 2 * T + (R + 1) * d + R * d  # blocks, averages, step sizes, global, selected
        return written + derived


@dataclass(frozen=True, eq=False)
class BlockCyclicTrace:
    """Every local iterate and every round of one block-cyclic seed (module docstring).

    T = R I local steps, R = C M E rounds, K participants per round, M blocks, d parameters.
    Per step: ``blocks`` (T,) m(t); ``local_models`` (T+1, K, d) x_t^i; ``averages`` (T+1, d)
    xbar_t = (1/K) sum_i x_t^i; ``stochastic_gradients`` (T, K, d) g_t^i; ``local_gradients``
    (T, K, d) grad F_m^i(x_t^i) (exact, with the mu x term); ``step_sizes`` (T,) gamma_t;
    ``separate_local_models`` (T+1, K, d) y_t^i and ``block_step_sizes`` (T,) eta_t (MC only,
    else None). Per round: ``participants`` (R, K) the clients of round r; ``global_models``
    (R+1, d) x_bar after rounds 0..R (row 0: w0 = 0); ``separate_models`` (R, d) y_bar of round r
    (MC, else None); ``selected_models`` (R, d) u_bar of round r (x_bar for MM-PSGD);
    ``chose_separate`` (R,) whether u_bar = y_bar; ``loss_x``, ``loss_y`` (R,) the average local
    losses (1/K) sum_i F_m^i of x_bar and y_bar that the server compares (MC, else None);
    ``predictors`` (R+1, M, d) the predictors after rounds 0..R (eq. 7, 8 or Sec. 5's exponential
    average; row 0: w0), the running mean of the selected models for FedAvg-cyclic and PR-SGD,
    which keep no predictors. Every array is read-only.
    """

    local_steps: int
    rounds_per_block: int
    batch_size: int
    blocks: np.ndarray
    participants: np.ndarray
    local_models: np.ndarray
    averages: np.ndarray
    stochastic_gradients: np.ndarray
    local_gradients: np.ndarray
    step_sizes: np.ndarray
    separate_local_models: np.ndarray | None
    block_step_sizes: np.ndarray | None
    global_models: np.ndarray
    separate_models: np.ndarray | None
    selected_models: np.ndarray
    chose_separate: np.ndarray
    loss_x: np.ndarray | None
    loss_y: np.ndarray | None
    predictors: np.ndarray

    @classmethod
    def of(cls, arrays: BlockCyclicTraceArrays, plan: Plan, n_blocks: int) -> BlockCyclicTrace:
        """The trace of one seed's arrays: the per-step schedule (blocks, gamma_t, eta_t) from the
        plan, xbar_t the mean of the local models, x_bar after round r the broadcast model every
        participant starts round r + 1 from (``local_models[(r+1) I]``, row T for the last), and
        u_bar the selected one of x_bar and y_bar."""
        I, E, mc = plan.local_steps, plan.rounds_per_block, plan.mode == MODE_MC
        steps = np.arange(plan.rounds * I)
        global_models = np.ascontiguousarray(arrays.local_models[::I, 0])
        separate_models = arrays.separate_models if mc else None
        selected = (np.where(arrays.chose_separate[:, None], arrays.separate_models, global_models[1:]) if mc
                    else global_models[1:].copy())
        trace = cls(
            local_steps=I, rounds_per_block=E, batch_size=plan.batch, blocks=(steps // (I * E)) % n_blocks,
            participants=arrays.participants, local_models=arrays.local_models,
            averages=arrays.local_models.mean(axis=1), stochastic_gradients=arrays.stochastic_gradients,
            local_gradients=arrays.local_gradients, step_sizes=plan.gamma.at(steps, I),
            separate_local_models=arrays.separate_local_models if mc else None,
            block_step_sizes=plan.eta.at(steps, I) if mc else None, global_models=global_models,
            separate_models=separate_models, selected_models=selected, chose_separate=arrays.chose_separate,
            loss_x=arrays.losses[:, 0] if mc else None, loss_y=arrays.losses[:, 1] if mc else None,
            predictors=arrays.predictors,
        )
        for value in vars(trace).values():
            if isinstance(value, np.ndarray):
                value.setflags(write=False)
        return trace

    @property
    def round_blocks(self) -> np.ndarray:
        """The block m of every round r = 0..R-1, shape (R,)."""
        return self.blocks[:: self.local_steps]

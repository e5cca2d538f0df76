"""What a block-cyclic run returns beside the common metrics: its typed extras and the floats it
exchanged (``BlockCyclicEngine.extras``, ``BlockCyclicEngine.communication``; the counts are
stated in ``block_cyclic.engine``'s module docstring)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .trace import BlockCyclicTrace

__all__ = ["Communication", "BlockCyclicExtras"]


@dataclass(frozen=True)
class Communication:
    """Floats exchanged over a run (module docstring): server -> clients, clients -> server, and
    the loss values clients report (MC-PSGD)."""

    rounds: int
    down_params: int
    up_params: int
    up_losses: int

    @property
    def total_params(self) -> int:
        """down_params + up_params."""
        return self.down_params + self.up_params


@dataclass(frozen=True, eq=False)
class BlockCyclicExtras:
    """A block-cyclic run's own results. S seeds, P record points, M blocks, d parameters.

    blocks (P,) block of the last completed round (-1 at round 0); block_rounds (P, M) rounds of
    each block completed by then; predictors (S, P, M, d) the x~_m (MM) or u~_m (MC), None for
    FedAvg-cyclic and PR-SGD; separate_models (S, P, M, d) the w_bar_m (MC only, else None); both
    None for a CNN run from a sweep (``execute``), which keeps their ``block_accuracy`` instead
    (``BlockCyclicEngine.stored``); selected_separate (S, P, M) the rounds of block m in which y_bar
    was selected (MC only, else None). Tracked runs
    (PR-SGD, or ``track=True``): grad_sq_mean (S, P) = (1/t) sum_{tau=1}^{t} ||grad F_m(x_bar_{tau-1})||^2
    at t = steps (NaN at t = 0; F_m = f for one block), max_mean_drift and max_drift (S, P) =
    running maxima over steps of mean_i / max_i ||x_bar_t - x_t^i||^2, and max_norm_sq (S, P) =
    running max of ||x_t^i||^2 over every local iterate of both chains (B^2 of Ding et al.
    Assumption 5 on the visited region); None when not tracked. ``communication`` totals the
    floats exchanged (module docstring). ``traces``: one BlockCyclicTrace per seed (in the order
    of the run's seeds) for a traced run, else None. ``block_accuracy`` (S, P, M): on a CNN problem,
    block m's predictor (the global model for FedAvg-cyclic and PR-SGD) scored on block m's test
    images (``BlockCyclicImageProblem.block_accuracy``, Ding et al. Sec. 5), else None.
    """

    blocks: np.ndarray
    block_rounds: np.ndarray
    predictors: np.ndarray | None
    separate_models: np.ndarray | None
    selected_separate: np.ndarray | None
    grad_sq_mean: np.ndarray | None
    max_mean_drift: np.ndarray | None
    max_drift: np.ndarray | None
    max_norm_sq: np.ndarray | None
    communication: Communication
    traces: tuple[BlockCyclicTrace, ...] | None = None
    block_accuracy: np.ndarray | None = None


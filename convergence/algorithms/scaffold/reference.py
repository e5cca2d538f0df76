"""SCAFFOLD's state on the NumPy reference path (``local_sgd_reference``), vectorised over clients:
the same three steps as ``kernel`` (``config.ScaffoldConfig`` states them), dense on all d
coordinates. It is the correctness reference of the kernel's control variates."""

from __future__ import annotations

import numpy as np

from ..participation import RoundSample
from .config import CONTROL_UPDATES

__all__ = ["ScaffoldStateNP"]


class ScaffoldStateNP:
    """The control variates of one seed on clients of weights p_k (N,), models of ``shape`` ((f, C)
    for a linear model, (d,) for a CNN: ``local_models.LocalModel.shape``): ``server`` c (shape)
    and ``controls`` c_k (N, *shape), all 0 at the start; updated by ``end_round`` unless
    ``control_variates`` is "zero"."""

    def __init__(self, weights: np.ndarray, shape: tuple[int, ...], control_variates: str) -> None:
        self.weights = np.asarray(weights, dtype=np.float64)
        self.server = np.zeros(shape)
        self.controls = np.zeros((self.weights.size, *shape))
        self.updates = CONTROL_UPDATES[control_variates] != 0

    def correction(self, scales: np.ndarray) -> np.ndarray:
        """(c - c_k) / lambda_k for every client, (N, *shape) (``scales`` (N, 1, ...)): the loop adds it to the data gradient
        before scaling by lambda_k, so the step's direction is lambda_k grad h_k - c_k + c."""
        return (self.server - self.controls) / scales

    def end_round(self, round_index: int, local: np.ndarray, W: np.ndarray, sample: RoundSample,
                  scales: np.ndarray, round_steps: np.ndarray) -> None:
        """Option II for the sampled clients: c_k+ = c_k - c + (W - y_k) / sum(round_steps), then
        c <- c + sum_{k in S} (p_k / lambda_k) (c_k+ - c_k)."""
        if not self.updates:
            return
        sampled = np.flatnonzero(sample.counts > 0)
        updated = self.controls[sampled] - self.server + (W - local[sampled]) / np.sum(round_steps)
        share = self.weights[sampled] / scales.reshape(-1)[sampled]
        self.server = self.server + np.tensordot(share, updated - self.controls[sampled], axes=1)
        self.controls[sampled] = updated

"""Row-weighted objectives with exact value, gradient and Hessian (for the exact optimum).

Both F and every F_k of a ``FederatedProblem`` have the form

    G(w) = sum_i r_i loss(w; x_i, y_i) + (mu/2) ||w||^2 + c,

with r_i = 1/n_k and c = c_k over client k's rows for F_k, and r_i = p_k/n_k on every row of
client k and c = sum_k p_k c_k for F = sum_k p_k F_k (because sum_k p_k = 1). The loss, its
gradient and its Hessian are the problem's model's (``problems.models``); this module adds the
row weights, the regulariser and the constant.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._base import FederatedProblem
from .models.linear import LinearModel

__all__ = ["RowObjective", "global_rows", "local_rows"]


@dataclass(frozen=True)
class RowObjective:
    """G(w) = sum_i r_i loss_i(w) + mu/2 ||w||^2 + constant over rows X (m, f), y (m,), r (m,)."""

    model: LinearModel
    X: np.ndarray
    y: np.ndarray
    r: np.ndarray
    mu: float
    constant: float

    @property
    def dim(self) -> int:
        """d = f C (C = 1 except for softmax)."""
        return self.model.dim(self.X.shape[1])

    def value_grad(self, w: np.ndarray) -> tuple[float, np.ndarray]:
        """(G(w), grad G(w)); grad has shape (d,)."""
        value, grad = self.model.weighted_value_grad(w, self.X, self.y, self.r)
        return value + 0.5 * self.mu * (w @ w) + self.constant, grad + self.mu * w

    def hessian(self, w: np.ndarray) -> np.ndarray:
        """The exact Hessian of G at w, shape (d, d)."""
        H = self.model.weighted_hessian(w, self.X, self.y, self.r)
        H[np.diag_indices_from(H)] += self.mu
        return H


def global_rows(problem: FederatedProblem) -> RowObjective:
    """F = sum_k p_k F_k as one row-weighted objective (r_i = p_k / n_k on client k's rows)."""
    return RowObjective(
        problem.model,
        problem.X,
        problem.y,
        problem.row_weights,
        problem.mu,
        float(problem.weights @ problem.constants),
    )


def local_rows(problem: FederatedProblem, k: int) -> RowObjective:
    """F_k as a row-weighted objective (r_i = 1/n_k on client k's rows)."""
    X, y = problem.client_data(k)
    r = np.full(X.shape[0], 1.0 / X.shape[0])
    return RowObjective(problem.model, X, y, r, problem.mu, float(problem.constants[k]))

"""Least squares: l(z, y) = (z - y)^2 / 2 for a scalar margin z = x'w (C = 1).

dl/dz = z - y, d^2l/dz^2 = 1, so the data Hessian X'X/n is constant: L_k and mu_k are the extreme
eigenvalues of X_k'X_k/n_k (+ mu) exactly, and the optimum solves a linear system. The residual
z - y is unbounded (``gradient_bound`` None); the model is its own least-squares form (U = X, v = y).
"""

from __future__ import annotations

from typing import Any, ClassVar, NamedTuple

import numpy as np

from .kernels import register_loss
from .linear import CurvatureBounds, LinearModel

__all__ = ["LeastSquaresModel", "LeastSquaresLoss"]


class LeastSquaresLoss(NamedTuple):
    """Kernel tag of the least-squares loss."""

    n_classes: int


class LeastSquaresModel(LinearModel):
    """Linear least squares (module docstring)."""

    name: ClassVar[str] = "least_squares"
    curvature: ClassVar[CurvatureBounds] = CurvatureBounds(1.0, 1.0, True)
    quadratic: ClassVar[bool] = True
    gradient_bound: ClassVar[float | None] = None

    @property
    def exp_calls_per_sample(self) -> int:
        return 0

    def check_targets(self, y: np.ndarray) -> str | None:
        return None

    def margin_losses(self, Z: np.ndarray, y: np.ndarray) -> np.ndarray:
        return 0.5 * (Z[..., 0] - y) ** 2

    def margin_residuals(self, Z: np.ndarray, y: np.ndarray) -> np.ndarray:
        return Z - y[..., None]

    def margin_hessian_rows(self, X: np.ndarray, y: np.ndarray, r: np.ndarray, W: np.ndarray) -> np.ndarray:
        return X.T @ (r[:, None] * X)

    def cvxpy_data_term(self, X: np.ndarray, y: np.ndarray, r: np.ndarray) -> tuple[Any, Any]:
        import cvxpy as cp

        w = cp.Variable(X.shape[1])
        sqrt_r = np.sqrt(r)
        return w, 0.5 * cp.sum_squares((sqrt_r[:, None] * X) @ w - sqrt_r * y)

    def kernel_loss(self) -> LeastSquaresLoss:
        return LeastSquaresLoss(1)


def _residuals(loss, Z, targets, sample_base, idx, n_used, wt):
    """Z[b] <- wt * dl/dz in place (``kernels.margin_residuals``)."""
    for b in range(n_used):
        Z[b, 0] = (Z[b, 0] - targets[sample_base + idx[b]]) * wt


def _loss_sum(loss, Z, targets, sample_base, n):
    """sum of the losses of the margins (``kernels.margin_loss_sum``)."""
    total = 0.0
    for b in range(n):
        total += 0.5 * (Z[b, 0] - targets[sample_base + b]) ** 2
    return total


register_loss(LeastSquaresLoss, _residuals, _loss_sum)

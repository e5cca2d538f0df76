"""Logistic regression: l(z, y) = log(1 + e^z) - y z for labels y in {0, 1}, margin z = x'w (C = 1).

dl/dz = s(z) - y with s the logistic function, d^2l/dz^2 = s(z)(1 - s(z)) in (0, 1/4], attained at
z = 0: L_k = lambda_max(X_k'X_k/n_k)/4 + mu exactly (at w = 0) and mu_k = mu (the infimum over R^d).
The residual is bounded: |s(z) - y| < 1 for y in {0, 1}, approached as z -> -inf (y = 1) or
z -> +inf (y = 0), so ``gradient_bound`` beta = sup (dl/dz)^2 = 1.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar, NamedTuple

import numpy as np
from scipy.special import expit

from .kernels import register_loss
from .linear import CurvatureBounds, LinearModel

__all__ = ["LogisticModel", "LogisticLoss"]


class LogisticLoss(NamedTuple):
    """Kernel tag of the logistic loss."""

    n_classes: int


class LogisticModel(LinearModel):
    """Binary logistic regression (module docstring)."""

    name: ClassVar[str] = "logistic"
    curvature: ClassVar[CurvatureBounds] = CurvatureBounds(0.0, 0.25, True)
    gradient_bound: ClassVar[float | None] = 1.0

    @property
    def exp_calls_per_sample(self) -> int:
        return 1

    def check_targets(self, y: np.ndarray) -> str | None:
        return None if np.all((y == 0) | (y == 1)) else "logistic labels must be 0 or 1"

    def margin_losses(self, Z: np.ndarray, y: np.ndarray) -> np.ndarray:
        z = Z[..., 0]
        return np.logaddexp(0.0, z) - y * z

    def margin_residuals(self, Z: np.ndarray, y: np.ndarray) -> np.ndarray:
        return expit(Z) - y[..., None]

    def margin_hessian_rows(self, X: np.ndarray, y: np.ndarray, r: np.ndarray, W: np.ndarray) -> np.ndarray:
        s = expit(X @ W[:, 0])
        return X.T @ ((r * s * (1.0 - s))[:, None] * X)

    def cvxpy_data_term(self, X: np.ndarray, y: np.ndarray, r: np.ndarray) -> tuple[Any, Any]:
        import cvxpy as cp

        w = cp.Variable(X.shape[1])  # log(1 + e^z) - y z = log(1 + e^{(1 - 2y) z}) for y in {0, 1}
        return w, r @ cp.logistic(cp.multiply(1.0 - 2.0 * y, X @ w))

    def kernel_loss(self) -> LogisticLoss:
        return LogisticLoss(1)


def _residuals(loss, Z, targets, sample_base, idx, n_used, wt):
    """Z[b] <- wt * dl/dz in place (``kernels.margin_residuals``)."""
    for b in range(n_used):
        yv = targets[sample_base + idx[b]]
        z = Z[b, 0]
        if z >= 0.0:
            Z[b, 0] = (1.0 / (1.0 + math.exp(-z)) - yv) * wt
        else:
            e = math.exp(z)
            Z[b, 0] = (e / (1.0 + e) - yv) * wt


def _loss_sum(loss, Z, targets, sample_base, n):
    """sum of the losses of the margins (``kernels.margin_loss_sum``)."""
    total = 0.0
    for b in range(n):
        z = Z[b, 0]
        total += max(z, 0.0) + math.log1p(math.exp(-abs(z))) - targets[sample_base + b] * z
    return total


register_loss(LogisticLoss, _residuals, _loss_sum)

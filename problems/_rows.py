"""Row-weighted objectives with exact value, gradient and Hessian (for the exact optimum).

Both F and every F_k of a ``FederatedProblem`` have the form

    G(w) = sum_i r_i loss(w; x_i, y_i) + (mu/2) ||w||^2 + c,

with r_i = 1/n_k and c = c_k over client k's rows for F_k, and r_i = p_k/n_k on every row of
client k and c = sum_k p_k c_k for F = sum_k p_k F_k (because sum_k p_k = 1). The loss formulas
are those of ``problems._base``. Hessians (D_i = diag(pi_i) - pi_i pi_i' for softmax
probabilities pi_i, s the logistic function):

* least squares: sum_i r_i x_i x_i' + mu I;
* logistic:      sum_i r_i s(z_i)(1 - s(z_i)) x_i x_i' + mu I, z_i = x_i'w;
* softmax:       sum_i r_i (x_i x_i') kron D_i + mu I, in the row-major layout w[j*C + c] = W[j, c].

The softmax Hessian is accumulated in row chunks so that memory stays O(chunk * f * C).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import expit, log_softmax, softmax

from ._base import FederatedProblem, LossKind

__all__ = ["RowObjective", "global_rows", "local_rows"]

_CHUNK = 4096  # rows per block when forming the softmax Hessian


@dataclass(frozen=True)
class RowObjective:
    """G(w) = sum_i r_i loss_i(w) + mu/2 ||w||^2 + constant over rows X (m, f), y (m,), r (m,)."""

    loss: LossKind
    X: np.ndarray
    y: np.ndarray
    r: np.ndarray
    mu: float
    n_classes: int
    constant: float

    @property
    def dim(self) -> int:
        """d = f (least squares, logistic) or f * C (softmax)."""
        return self.X.shape[1] * self.n_classes

    def value_grad(self, w: np.ndarray) -> tuple[float, np.ndarray]:
        """(G(w), grad G(w)); grad has shape (d,)."""
        reg = 0.5 * self.mu * (w @ w) + self.constant
        if self.loss is LossKind.LEAST_SQUARES:
            res = self.X @ w - self.y
            return float(0.5 * (self.r @ res**2) + reg), self.X.T @ (self.r * res) + self.mu * w
        if self.loss is LossKind.LOGISTIC:
            z = self.X @ w
            value = self.r @ (np.logaddexp(0.0, z) - self.y * z)
            return float(value + reg), self.X.T @ (self.r * (expit(z) - self.y)) + self.mu * w
        f, C = self.X.shape[1], self.n_classes
        labels = self.y.astype(np.int64)
        logp = log_softmax(self.X @ w.reshape(f, C), axis=1)
        value = -(self.r @ logp[np.arange(labels.size), labels])
        resid = np.exp(logp)
        resid[np.arange(labels.size), labels] -= 1.0
        grad = (self.X.T @ (self.r[:, None] * resid)).reshape(-1)
        return float(value + reg), grad + self.mu * w

    def hessian(self, w: np.ndarray) -> np.ndarray:
        """The exact Hessian of G at w, shape (d, d)."""
        if self.loss is LossKind.LEAST_SQUARES:
            H = self.X.T @ (self.r[:, None] * self.X)
        elif self.loss is LossKind.LOGISTIC:
            s = expit(self.X @ w)
            H = self.X.T @ ((self.r * s * (1.0 - s))[:, None] * self.X)
        else:
            H = self._softmax_data_hessian(w)
        H[np.diag_indices_from(H)] += self.mu
        return H

    def _softmax_data_hessian(self, w: np.ndarray) -> np.ndarray:
        """sum_i r_i (x_i x_i') kron (diag(pi_i) - pi_i pi_i'), shape (f*C, f*C)."""
        f, C = self.X.shape[1], self.n_classes
        diag_part = np.zeros((f, C, f, C))
        outer_part = np.zeros((f * C, f * C))
        W = w.reshape(f, C)
        buffer = np.empty((min(_CHUNK, self.X.shape[0]), f, C))
        for lo in range(0, self.X.shape[0], _CHUNK):
            X = self.X[lo : lo + _CHUNK]
            r = self.r[lo : lo + _CHUNK]
            P = softmax(X @ W, axis=1)
            for c in range(C):
                diag_part[:, c, :, c] += X.T @ ((r * P[:, c])[:, None] * X)
            Z = buffer[: X.shape[0]]  # rows sqrt(r_i) x_i kron pi_i
            np.multiply((np.sqrt(r)[:, None] * X)[:, :, None], P[:, None, :], out=Z)
            Z2 = Z.reshape(X.shape[0], f * C)
            outer_part += Z2.T @ Z2
        return diag_part.reshape(f * C, f * C) - outer_part


def global_rows(problem: FederatedProblem) -> RowObjective:
    """F = sum_k p_k F_k as one row-weighted objective (r_i = p_k / n_k on client k's rows)."""
    r = np.repeat(problem.weights / problem.client_sizes, problem.client_sizes)
    return RowObjective(
        problem.loss,
        problem.X,
        problem.y,
        r,
        problem.mu,
        problem.n_classes,
        float(problem.weights @ problem.constants),
    )


def local_rows(problem: FederatedProblem, k: int) -> RowObjective:
    """F_k as a row-weighted objective (r_i = 1/n_k on client k's rows)."""
    X, y = problem.client_data(k)
    r = np.full(X.shape[0], 1.0 / X.shape[0])
    return RowObjective(problem.loss, X, y, r, problem.mu, problem.n_classes, float(problem.constants[k]))

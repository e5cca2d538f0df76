"""Linear models: margins Z = X W over a flat parameter vector, a per-sample loss of the margins.

Every shipped model is linear: parameters w (d,) hold W (f, C) row-major, w[j*C + c] = W[j, c]
(C = 1 for least squares and logistic regression, the number of classes for softmax), sample i
has margins z_i = x_i'W (C,), loss l(z_i, y_i) and data gradient x_i (dl/dz)(z_i, y_i)'.
A subclass states only the loss of a margin and its derivatives (``margin_losses``,
``margin_residuals``, ``margin_hessian_rows``, ``cvxpy_data_term``) and registers its Numba loss
with ``kernels.margin_residuals`` / ``kernels.margin_loss_sum``; everything else (per-sample and
weighted objectives, gradients, Hessians, the reference path's batched gradients) is written here once.

Row-weighted objectives (exact optimum, constants): G(w) = sum_i r_i l(z_i, y_i) + (mu/2)||w||^2 + c
with Hessian sum_i r_i (x_i x_i') kron D_i + mu I, D_i = d^2 l / dz^2 (C, C) at z_i.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import Any, ClassVar, NamedTuple

import numpy as np

__all__ = ["LinearModel", "CurvatureBounds"]

_CHUNK = 4096  # rows per block when a Hessian is accumulated (memory O(chunk f C))


@dataclass(frozen=True)
class CurvatureBounds:
    """Bounds on the loss curvature over all margins: lower I <= D(z) <= upper I (in the
    Loewner order). ``exact_upper``: the upper bound is attained (at z = 0), so
    L = upper * lambda_max(X'X/n) + mu is the smoothness constant, not only a bound on it."""

    lower: float
    upper: float
    exact_upper: bool


@dataclass(frozen=True)
class LinearModel(abc.ABC):
    """A linear model with ``n_classes`` margins per sample (module docstring).

    Subclasses set ``name`` (the spec's loss name), ``curvature`` and ``quadratic`` (True when
    the loss is quadratic in the margins: the data Hessian is constant and the optimum has a
    closed form)."""

    n_classes: int = 1

    name: ClassVar[str]
    curvature: ClassVar[CurvatureBounds]
    quadratic: ClassVar[bool] = False

    # ------------------------------------------------------------ the loss of a margin
    @abc.abstractmethod
    def check_targets(self, y: np.ndarray) -> str | None:
        """None when ``y`` (n,) are valid targets of this model, else the reason."""

    @abc.abstractmethod
    def margin_losses(self, Z: np.ndarray, y: np.ndarray) -> np.ndarray:
        """l(z_i, y_i) for margins Z (n, C) and targets y (n,), shape (n,)."""

    @abc.abstractmethod
    def margin_residuals(self, Z: np.ndarray, y: np.ndarray) -> np.ndarray:
        """dl/dz at margins Z (..., n, C), targets y (..., n): shape (..., n, C)."""

    @abc.abstractmethod
    def margin_hessian_rows(self, X: np.ndarray, y: np.ndarray, r: np.ndarray, W: np.ndarray) -> np.ndarray:
        """sum_i r_i (x_i x_i') kron D_i over rows X (m, f), targets y (m,), weights r (m,), at W (f, C): (fC, fC)."""

    @abc.abstractmethod
    def cvxpy_data_term(self, X: np.ndarray, y: np.ndarray, r: np.ndarray) -> tuple[Any, Any]:
        """(variable, expression) of sum_i r_i l(x_i'W, y_i) in cvxpy's atoms: an independent
        formulation of the same loss, used to cross-check exact optima."""

    @abc.abstractmethod
    def kernel_loss(self) -> NamedTuple:
        """The loss's tag for the Numba kernels (``kernels.margin_residuals`` dispatches on its type)."""

    @property
    @abc.abstractmethod
    def exp_calls_per_sample(self) -> int:
        """Calls of exp per sample in one gradient (the costly part beyond the two products)."""

    # ------------------------------------------------------------ derived, written once
    def dim(self, n_features: int) -> int:
        """d = f C."""
        return n_features * self.n_classes

    def margins(self, w: np.ndarray, X: np.ndarray) -> np.ndarray:
        """Z = X W, shape (n, C)."""
        return X @ w.reshape(X.shape[1], self.n_classes)

    def losses(self, w: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Per-sample losses l(x_i'W, y_i), shape (n,) (no regulariser)."""
        return self.margin_losses(self.margins(w, X), y)

    def gradients(self, w: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Per-sample data gradients x_i (dl/dz)', shape (n, d)."""
        R = self.margin_residuals(self.margins(w, X), y)
        return (X[:, :, None] * R[:, None, :]).reshape(X.shape[0], -1)

    def weighted_value_grad(self, w: np.ndarray, X: np.ndarray, y: np.ndarray, r: np.ndarray) -> tuple[float, np.ndarray]:
        """(sum_i r_i l_i(w), sum_i r_i grad l_i(w)); the gradient has shape (d,)."""
        Z = self.margins(w, X)
        value = float(r @ self.margin_losses(Z, y))
        return value, (X.T @ (r[:, None] * self.margin_residuals(Z, y))).reshape(-1)

    def weighted_hessian(self, w: np.ndarray, X: np.ndarray, y: np.ndarray, r: np.ndarray) -> np.ndarray:
        """sum_i r_i hess l_i(w), shape (d, d), accumulated over row chunks."""
        d = self.dim(X.shape[1])
        H = np.zeros((d, d))
        W = w.reshape(X.shape[1], self.n_classes)
        for lo in range(0, X.shape[0], _CHUNK):
            H += self.margin_hessian_rows(X[lo:lo + _CHUNK], y[lo:lo + _CHUNK], r[lo:lo + _CHUNK], W)
        return H

    def batched_gradients(self, W: np.ndarray, X: np.ndarray, y: np.ndarray, wt: np.ndarray) -> np.ndarray:
        """Weighted data gradients of many clients at once (the reference path, vectorised over
        clients): W (N, f, C), X (N, b, f), y (N, b), row weights wt (N, b) -> (N, f, C)."""
        R = self.margin_residuals(np.einsum("nbf,nfc->nbc", X, W), y) * wt[:, :, None]
        return np.einsum("nbf,nbc->nfc", X, R)

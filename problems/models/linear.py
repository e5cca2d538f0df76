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

Constants the assumption checks take from the model (``proofs_check.constants.gradient_bounds``):
* the per-sample curvature: one row's Hessian (x_i x_i') kron D_i has norm ||x_i||^2 lambda_max(D_i)
  <= ``curvature.upper`` ||x_i||^2, so g_i(w) = x_i (dl/dz)' is (``curvature.upper`` ||x_i||^2)-Lipschitz;
* ``gradient_bound``: beta = sup over margins z and valid targets y of ||dl/dz(z, y)||^2, so that
  ||g_i(w)||^2 <= beta ||x_i||^2 everywhere; None where dl/dz is unbounded (least squares);
* a quadratic model with one margin is least squares in other rows and targets
  (``least_squares_form``), which makes every moment of its minibatch gradients a quadratic in w.
"""

from __future__ import annotations

import abc
import math
from dataclasses import dataclass
from typing import Any, ClassVar, NamedTuple

import numpy as np

__all__ = ["LinearModel", "CurvatureBounds"]

_CHUNK = 4096  # rows per block when a Hessian is accumulated (memory O(chunk f C))


@dataclass(frozen=True)
class CurvatureBounds:
    """Bounds on the loss curvature over all margins: lower I <= D(z) <= upper I (in the
    Loewner order); one row's Hessian (x x') kron D(z) then has norm <= upper ||x||^2 (the
    per-sample curvature constant). ``exact_upper``: the upper bound is attained (at z = 0), so
    L = upper * lambda_max(X'X/n) + mu is the smoothness constant, not only a bound on it."""

    lower: float
    upper: float
    exact_upper: bool


@dataclass(frozen=True)
class LinearModel(abc.ABC):
    """A linear model with ``n_classes`` margins per sample (module docstring).

    Subclasses set ``name`` (the spec's loss name), ``curvature``, ``quadratic`` (True when
    the loss is quadratic in the margins: the data Hessian is constant and the optimum has a
    closed form) and ``gradient_bound`` where dl/dz is bounded."""

    n_classes: int = 1

    name: ClassVar[str]
    curvature: ClassVar[CurvatureBounds]
    quadratic: ClassVar[bool] = False
    gradient_bound: ClassVar[float | None] = None
    """beta = sup over all margins z (C,) and valid targets y of ||dl/dz(z, y)||^2, so that a
    sample's data gradient has ||x (dl/dz)'||^2 <= beta ||x||^2 at every w; None when dl/dz is
    unbounded (or the model states no bound): checks that need one then use Lipschitz bounds alone."""

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
    def least_squares_form(self, X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Rows U (n, f) and targets v (n,) that write a quadratic model with one margin as least squares:

            l(x_i'w, y_i) = (1/2)(u_i'w - v_i)^2 + const(y_i),   data gradient g_i(w) = u_i (u_i'w - v_i).

        A margin loss quadratic in z has dl/dz(z, y) = a (z - t(y)) with a = d^2l/dz^2 constant
        (``curvature.upper`` = ``curvature.lower`` > 0) and t(y) = -dl/dz(0, y) / a (from
        ``margin_residuals``), so u_i = sqrt(a) x_i and v_i = sqrt(a) t(y_i); least squares itself
        (a = 1, t = y) gives U = X and v = y exactly. X (n, f), y (n,). ValueError naming ``model``
        for a model that is not quadratic, has several margins or no positive constant curvature."""
        bounds = self.curvature
        if not self.quadratic or self.n_classes != 1:
            raise ValueError(f"model: {self.name} with {self.n_classes} margin(s) has no least-squares form "
                             "(it needs a loss quadratic in one margin)")
        if not (bounds.upper > 0.0 and bounds.lower == bounds.upper):
            raise ValueError(f"model: {self.name} is declared quadratic but its curvature bounds "
                             f"[{bounds.lower:g}, {bounds.upper:g}] are not one positive constant")
        a = bounds.upper
        targets = -self.margin_residuals(np.zeros((X.shape[0], 1)), y)[:, 0] / a
        scale = math.sqrt(a)
        return scale * X, scale * targets

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

"""Linear models: margins Z = X W over a flat parameter vector, a per-sample loss of the margins.

Every shipped model is linear: parameters w (d,) hold W (f, C) row-major, w[j*C + c] = W[j, c]
(C = 1 for least squares and logistic regression, the number of classes for softmax), sample i
has margins z_i = x_i'W (C,), loss l(z_i, y_i) and data gradient x_i (dl/dz)(z_i, y_i)'.
A subclass states only the loss of a margin and its derivatives (``margin_losses``,
``margin_residuals``, ``margin_hessian_rows``, ``cvxpy_data_term``) and registers its Numba loss
with ``kernels.margin_residuals`` / ``kernels.margin_loss_sum``; everything else (per-sample and
weighted objectives, gradients, Hessians, the reference path's batched gradients, the packed
client data of the kernels) is written here once.

Row-weighted objectives (exact optimum, constants): G(w) = sum_i r_i l(z_i, y_i) + (mu/2)||w||^2 + c
with Hessian sum_i r_i (x_i x_i') kron D_i + mu I, D_i = d^2 l / dz^2 (C, C) at z_i.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import Any, ClassVar, NamedTuple

import numpy as np

__all__ = ["LinearModel", "CurvatureBounds", "step_flops"]

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

    # ------------------------------------------------------------ kernel layout
    def pack(
        self, X: np.ndarray, y: np.ndarray, offsets: np.ndarray, *, restrict_support: bool, exact_gradients: bool
    ) -> Any:
        """The clients' data in the kernels' layout (``kernels.LinearClients``).

        ``restrict_support``: each client keeps only its non-zero feature columns (its data
        gradient vanishes elsewhere, so a kernel may treat the other coordinates in closed form);
        otherwise every client has all features. ``exact_gradients``: the run takes exact
        gradients, so quadratic clients with m_k < 2 n_k get their Gram Q_k and c_k (an exact
        step then costs m_k^2 multiply-adds instead of 2 n_k m_k); no Gram is built otherwise.
        """
        from .kernels import LinearClients

        N, C, f = offsets.size - 1, self.n_classes, X.shape[1]
        features, blocks, grams, rhs = [], [], [], []
        uses_gram = np.zeros(N, dtype=np.bool_)
        for k in range(N):
            Xk, yk = X[offsets[k]:offsets[k + 1]], y[offsets[k]:offsets[k + 1]]
            cols = np.flatnonzero(np.any(Xk != 0.0, axis=0)) if restrict_support else np.arange(f)
            if cols.size == 0:
                cols = np.array([0], dtype=np.int64)
            rows_k = Xk[:, cols]
            uses_gram[k] = exact_gradients and self.quadratic and cols.size < 2 * rows_k.shape[0]
            if uses_gram[k]:
                grams.append((rows_k.T @ rows_k / rows_k.shape[0]).reshape(-1))
                rhs.append(rows_k.T @ yk / rows_k.shape[0])
            else:
                grams.append(np.zeros(0))
                rhs.append(np.zeros(cols.size))
            features.append(cols.astype(np.int64))
            blocks.append(np.ascontiguousarray(rows_k).reshape(-1))
        sizes = np.array([c.size for c in features], dtype=np.int64)
        support = np.concatenate([(c[:, None] * C + np.arange(C)).reshape(-1) for c in features]).astype(np.int64)
        return LinearClients(
            loss=self.kernel_loss(),
            n_classes=C,
            sample_offsets=np.ascontiguousarray(offsets, dtype=np.int64),
            targets=np.ascontiguousarray(y, dtype=np.float64),
            feature_support=np.concatenate(features),
            feature_offsets=_offsets(sizes),
            rows=np.concatenate(blocks),
            row_offsets=_offsets(np.array([b.size for b in blocks], dtype=np.int64)),
            support=support,
            support_offsets=_offsets(sizes * C),
            full_support=sizes == f,
            uses_gram=uses_gram,
            gram=np.concatenate(grams),
            gram_offsets=_offsets(np.array([g.size for g in grams], dtype=np.int64)),
            gram_rhs=np.concatenate(rhs),
        )


def step_flops(data: Any, batch_size: int) -> np.ndarray:
    """Floating-point operations of one local step per client on packed ``data`` (``pack``), (N,).

    Per sample: the forward product x_S'W (2 |S| C) and the backward outer product (2 |S| C);
    per step: the update W -= eta (G + mu W) (3 |S| C); an exact step of a Gram client costs
    2 |S|^2 instead of its rows. Exp calls are counted apart (``LinearModel.exp_calls_per_sample``).
    """
    support = np.diff(data.feature_offsets)
    N, C = support.size, data.n_classes
    samples = np.diff(data.sample_offsets) if batch_size == 0 else np.full(N, batch_size)
    rows = samples * 4 * support * C
    if batch_size == 0:
        rows = np.where(data.uses_gram, 2 * support**2, rows)
    return rows + 3 * support * C


def _offsets(sizes: np.ndarray) -> np.ndarray:
    """[0, cumsum(sizes)] as int64, shape (len(sizes) + 1,)."""
    return np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)

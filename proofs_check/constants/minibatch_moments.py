"""Exact moments of a client's minibatch gradient at given points, for any model.

Notation as in ``shared/THEOREMS.md``: client k holds n_k rows (x_i, y_i); F_k(w) = (1/n_k) sum_i
l(w; x_i, y_i) + mu/2 ||w||^2; a minibatch of b rows is drawn uniformly with replacement. The
per-sample data gradient is g_i(w) = x_i (x) r_i(w), the outer product of the row and its
residual r_i = dl/dz at the margins z_i = W'x_i (W of shape (f, C)) flattened as the parameters;
the model oracle gives r_i (``LinearModel.margin_residuals``: x_i'w - y_i for least squares,
sigmoid(x_i'w) - y_i for logistic regression, softmax(W'x_i) - e_{y_i} for softmax regression).
With gbar_k(w) = (1/n_k) sum_i g_i(w), grad F_k(w) = gbar_k(w) + mu w. For finite data the variance of client k's minibatch gradient at w
is exactly (Li et al. ICLR 2020, Assumption 3; the mu w term is deterministic and cancels)

    var_k(w, b) = (1/b) (1/n_k) sum_i ||g_i(w) - gbar_k(w)||^2,      b = 0 (exact gradients): 0,

and its second moment E||g_k(w)||^2 = ||grad F_k(w)||^2 + var_k(w, b) (Assumption 4).
"""

from __future__ import annotations

import numpy as np

from problems import FederatedProblem

__all__ = ["client_terms", "all_client_terms", "gradient_variance", "as_batch_size"]

_BLOCK = 1 << 22  # entries of the (points, rows, classes) residual block evaluated at once


def _residuals(problem: FederatedProblem, X: np.ndarray, y: np.ndarray, W: np.ndarray) -> np.ndarray:
    """r_i at every point (the model's margin residuals): the per-sample data gradient is x_i (x) r_i;
    W (m, d) -> (m, n, C)."""
    m, f, C = W.shape[0], problem.n_features, problem.n_classes
    Z = np.matmul(X, W.reshape(m, f, C))  # z_i = W'x_i at every point, one BLAS product per point
    return problem.model.margin_residuals(Z, np.broadcast_to(y, Z.shape[:2]))


def client_terms(problem: FederatedProblem, k: int, W: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(grad F_k at the points (m, d), population variance (1/n_k) sum_i ||g_i - gbar_k||^2 (m,))."""
    X, y = problem.client_data(k)
    sq_norms = np.sum(X**2, axis=1)
    grads, variances = np.empty_like(W), np.empty(W.shape[0])
    chunk = max(1, _BLOCK // (X.shape[0] * problem.n_classes))
    for lo in range(0, W.shape[0], chunk):
        R = _residuals(problem, X, y, W[lo : lo + chunk])
        mean_grad = np.matmul(X.T, R).reshape(R.shape[0], -1) / X.shape[0]
        second = np.sum(R**2, axis=2) @ sq_norms / X.shape[0]
        variances[lo : lo + chunk] = np.maximum(second - np.sum(mean_grad**2, axis=1), 0.0)
        grads[lo : lo + chunk] = mean_grad + problem.mu * W[lo : lo + chunk]
    return grads, variances


def all_client_terms(problem: FederatedProblem, W: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """grad F_k (N, m, d) and population variances (N, m) at every point of W (m, d)."""
    terms = [client_terms(problem, k, W) for k in range(problem.n_clients)]
    return np.stack([g for g, _ in terms]), np.stack([v for _, v in terms])


def gradient_variance(problem: FederatedProblem, w: np.ndarray, batch_size: int) -> np.ndarray:
    """sigma_k^2(w, b) for every client, exactly: (1/b)(1/n_k) sum_i ||g_i(w) - gbar_k(w)||^2.

    ``w`` is one point (d,) used by every client (result (N,)), or client points of shape
    (..., N, d) where [..., k, :] is client k's own iterate w_t^k (result (..., N)); batch_size = 0
    (exact gradients) gives zeros.
    """
    b = as_batch_size(batch_size)
    W = np.asarray(w, dtype=np.float64)
    N, d = problem.n_clients, problem.dim
    if W.ndim == 1:
        W = np.broadcast_to(W, (N, W.size))
    if W.ndim < 2 or W.shape[-2:] != (N, d):
        raise ValueError(f"w: expected shape ({d},) or (..., {N}, {d}), got {np.shape(w)}")
    if b == 0:
        return np.zeros(W.shape[:-1])
    flat = W.reshape(-1, N, d)
    values = np.stack([client_terms(problem, k, flat[:, k])[1] for k in range(N)], axis=1) / b
    return values.reshape(W.shape[:-1])


def as_batch_size(batch_size: int) -> int:
    """The minibatch size b as an int >= 0 (0 = exact gradients); ValueError naming ``batch_size``."""
    if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) or batch_size < 0:
        raise ValueError(f"batch_size: must be an integer >= 0 (0 = exact gradients), got {batch_size!r}")
    return int(batch_size)

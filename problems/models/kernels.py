"""The model oracle on the Numba side: what an algorithm kernel may ask of a model.

An algorithm kernel (``convergence.algorithms``) never computes a loss itself. It receives the
model's packed client data (``ClientData``, built by ``pack_clients``) and calls

* ``client_workspace(data, n_max)`` once: the model's scratch buffers for up to ``n_max`` rows at
  a time, returned as one value the kernel passes back unchanged;
* ``client_gradient(data, ws, k, W, idx, n_used, exact, G)``: G <- (1/n_used) sum_b grad l_{idx[b]}(W),
  the data gradient of client k at its local parameters W over its rows idx[:n_used] (indices
  local to the client, drawn by the algorithm's sampler); ``exact`` says that idx is every row in
  order (the exact gradient grad F_k minus the regulariser), which a model may compute faster;
* ``client_mean_loss(data, ws, k, W)``: the mean data loss of client k at W over all its rows.

Sizes: ``data.sample_offsets`` (N+1,) delimit the clients' rows (n_k = offsets[k+1] - offsets[k]).
Parameters are client-local: client k sees only its support S_k (the parameters its data can
move, ``data.support[data.support_offsets[k]:data.support_offsets[k+1]]``), W and G have that
length. For a linear model (the shipped ones) S_k is the set of (feature, class) pairs whose
feature column is non-zero on client k; the regulariser mu/2 ||w||^2 is the algorithm's business
(it is not data).

A linear model's loss is a NamedTuple tag (``LinearModel.kernel_loss()``) registered with two
overloads in its own module: ``margin_residuals`` (Z <- wt * dl/dz in place) and
``margin_loss_sum`` (sum of l(z_i, y_i)). Numba resolves them at compile time by the tag's type,
so a new loss touches no kernel and the compiled kernels stay cached across processes.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit
from numba.core import types
from numba.extending import overload

__all__ = [
    "LinearClients", "client_workspace", "client_gradient", "client_mean_loss", "margin_residuals", "margin_loss_sum",
    "gram_gradient",
]

BLAS_MIN_WORK = 2048
"""Minibatches with n_used * |S_k| * C >= this many multiply-adds use BLAS (np.dot) for the two
products; smaller ones (e.g. the counterexample's 5 x 5 blocks) use plain loops, where a BLAS
call would cost more than the arithmetic."""


def client_workspace(data, n_max):
    """Scratch buffers of the model for up to ``n_max`` rows (module docstring); Numba only."""
    raise TypeError("client_workspace is called from Numba kernels only")


def client_gradient(data, ws, k, W, idx, n_used, exact, G):
    """G <- client k's data gradient over rows idx[:n_used] (module docstring); Numba only."""
    raise TypeError("client_gradient is called from Numba kernels only")


def client_mean_loss(data, ws, k, W):
    """(1/n_k) sum_i l_i(W) over client k's rows (module docstring); Numba only."""
    raise TypeError("client_mean_loss is called from Numba kernels only")


def margin_residuals(loss, Z, targets, sample_base, idx, n_used, wt):
    """Z[b] <- wt * dl/dz(Z[b], targets[sample_base + idx[b]]) for b < n_used, in place; Numba only."""
    raise TypeError("margin_residuals is called from Numba kernels only")


def margin_loss_sum(loss, Z, targets, sample_base, n):
    """sum_{b < n} l(Z[b], targets[sample_base + b]); Numba only."""
    raise TypeError("margin_loss_sum is called from Numba kernels only")


class LinearClients(NamedTuple):
    """A linear model's client data in the kernels' layout (built by ``LinearModel.pack``).

    loss: the loss tag; n_classes C; sample_offsets (N+1,) and targets (n,) as in the problem;
    feature_support (sum_k m_k,) each client's non-zero feature columns, feature_offsets (N+1,);
    rows (sum_k n_k m_k,) client k's rows restricted to its features, row-major, row_offsets (N+1,);
    support (sum_k m_k C,) the parameter indices j*C + c of those features, support_offsets (N+1,),
    full_support (N,) clients whose support is every parameter; uses_gram (N,) least-squares clients
    whose exact gradient is Q_k W - c_k with Q_k = X_S'X_S/n_k (m_k^2 entries at gram_offsets[k]
    in gram) and c_k = X_S'y_k/n_k (at feature_offsets[k] in gram_rhs), cheaper when m_k < 2 n_k;
    other clients hold no Gram entries.
    """

    loss: NamedTuple
    n_classes: int
    sample_offsets: np.ndarray
    targets: np.ndarray
    feature_support: np.ndarray
    feature_offsets: np.ndarray
    rows: np.ndarray
    row_offsets: np.ndarray
    support: np.ndarray
    support_offsets: np.ndarray
    full_support: np.ndarray
    uses_gram: np.ndarray
    gram: np.ndarray
    gram_offsets: np.ndarray
    gram_rhs: np.ndarray


def _is_linear(data) -> bool:
    return isinstance(data, types.BaseNamedTuple) and data.instance_class is LinearClients


@overload(client_workspace, jit_options={"cache": True})
def _linear_workspace(data, n_max):
    if not _is_linear(data):
        return None

    def impl(data, n_max):
        m_max = 0
        N = data.feature_offsets.size - 1
        for k in range(N):
            m_max = max(m_max, data.feature_offsets[k + 1] - data.feature_offsets[k])
        return np.empty(max(n_max, 1) * m_max), np.empty((max(n_max, 1), data.n_classes))

    return impl


@njit(cache=True)
def gram_gradient(gram, gram_base, rhs, rhs_base, m, W, G):
    """G (m,) <- Q W - c, the exact least-squares data gradient from a packed Gram Q (m, m) at
    gram[gram_base:] and c (m,) at rhs[rhs_base:]."""
    for j in range(m):
        acc = -rhs[rhs_base + j]
        row = gram_base + j * m
        for l in range(m):
            acc += gram[row + l] * W[l]
        G[j] = acc


@overload(client_gradient, jit_options={"cache": True})
def _linear_gradient(data, ws, k, W, idx, n_used, exact, G):
    if not _is_linear(data):
        return None

    def impl(data, ws, k, W, idx, n_used, exact, G):
        Xb, Z = ws
        C = data.n_classes
        fo = data.feature_offsets[k]
        m = data.feature_offsets[k + 1] - fo
        if exact and data.uses_gram[k]:
            gram_gradient(data.gram, data.gram_offsets[k], data.gram_rhs, fo, m, W, G)
            return
        row_base = data.row_offsets[k]
        sample_base = data.sample_offsets[k]
        rows = data.rows
        wt = 1.0 / n_used
        W2 = W.reshape(m, C)
        G2 = G[: m * C].reshape(m, C)
        Zb = Z[:n_used]
        if n_used * m * C >= BLAS_MIN_WORK:
            if exact:
                Xu = rows[row_base: row_base + n_used * m].reshape(n_used, m)
            else:
                Xu = Xb[: n_used * m].reshape(n_used, m)
                for b in range(n_used):
                    base = row_base + idx[b] * m
                    for j in range(m):
                        Xu[b, j] = rows[base + j]
            np.dot(Xu, W2, Zb)
            margin_residuals(data.loss, Zb, data.targets, sample_base, idx, n_used, wt)
            np.dot(Xu.T, Zb, G2)
            return
        for b in range(n_used):
            base = row_base + idx[b] * m
            for c in range(C):
                Zb[b, c] = 0.0
            for j in range(m):
                xj = rows[base + j]
                for c in range(C):
                    Zb[b, c] += xj * W2[j, c]
        margin_residuals(data.loss, Zb, data.targets, sample_base, idx, n_used, wt)
        for q in range(m * C):
            G[q] = 0.0
        for b in range(n_used):
            base = row_base + idx[b] * m
            for j in range(m):
                xj = rows[base + j]
                for c in range(C):
                    G2[j, c] += xj * Zb[b, c]

    return impl


@overload(client_mean_loss, jit_options={"cache": True})
def _linear_mean_loss(data, ws, k, W):
    if not _is_linear(data):
        return None

    def impl(data, ws, k, W):
        Z = ws[1]
        C = data.n_classes
        fo = data.feature_offsets[k]
        m = data.feature_offsets[k + 1] - fo
        lo = data.sample_offsets[k]
        n_k = data.sample_offsets[k + 1] - lo
        Xk = data.rows[data.row_offsets[k]: data.row_offsets[k] + n_k * m].reshape(n_k, m)
        Zk = Z[:n_k]
        np.dot(Xk, W.reshape(m, C), Zk)
        return margin_loss_sum(data.loss, Zk, data.targets, lo, n_k) / n_k

    return impl

"""A linear model's pieces of the block-cyclic round loop (``model_pieces``' stubs, resolved for
``BlockCyclicData``), and the bundle itself.

The model: parameters row-major (f, C) as in the local-SGD kernel (``local_sgd``), d = f C; ``model``
is the loss's kernel tag (``LinearModel.kernel_loss()``). A local step is W <- W - eta_t (g + mu W)
with g the data gradient of the model oracle (``local_steps.data_gradient``) over the client's rows
or its minibatch, or, for a least-squares pseudo-client with exact gradients, through its Gram
matrix Q_k W - c_k (``local_steps.gram_gradient``). Minibatches: client i at step t draws from
stream_key(seed_key(seed), t, i, N), slots 0..b-1 for the x chain (so M = 1 reproduces FedAvg's
minibatches exactly) and slots b..2b-1 for the y chain (stream + G b, as sample_index(s, j) hashes
s + G (j + 1)). The tracked gradient of block m is taken through the block Gram A_m (least
squares: d^2 per step) or over all of block m's rows; the selection's losses exactly over each
participant's block-m rows, with the l2 term mu/2 ||W||^2.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit
from numba.extending import overload

from problems import BlockCyclicProblem
from problems.models.kernels import margin_loss_sum

from ..._rng import GOLDEN, stream_key
from ...schedules import step_size_at
from ..local_steps import data_gradient, gram_gradient
from .model_pieces import block_grad_sq, client_major, client_steps, is_bundle, participant_loss, workspace

__all__ = ["BlockCyclicData", "kernel_data"]


class BlockCyclicData(NamedTuple):
    """The combined problem's data in the kernel's layout (built once per run by ``kernel_data``):
    M = ``n_blocks`` blocks of N = ``n_clients`` clients, f = ``n_features``, C = ``n_classes``, ``mu``
    the l2 coefficient (the loss is the model's ``kernel_loss()``, passed beside it).

    rows (n f,) row-major X; targets (n,); offsets (M N + 1,); use_gram (M N,) marks least-squares
    pseudo-clients stepped through Q_k = X_k'X_k / n_k and c_k = X_k'y_k / n_k (exact gradients,
    f < 2 n_k, as in ``_packing``): gram (M N f^2,), gram_rhs (M N f,); block_gram (M f^2,) and
    block_rhs (M f,) hold A_m = (1/N) sum_i Q_mi and b_m for tracking least squares (else empty).
    """

    n_classes: int
    n_features: int
    mu: float
    n_blocks: int
    n_clients: int
    rows: np.ndarray
    targets: np.ndarray
    offsets: np.ndarray
    use_gram: np.ndarray
    gram: np.ndarray
    gram_rhs: np.ndarray
    block_gram: np.ndarray
    block_rhs: np.ndarray


def kernel_data(problem: BlockCyclicProblem, batch: int, track: bool) -> BlockCyclicData:
    """Data for a run with minibatches of ``batch`` rows (0: exact) and ``track``ing (see
    BlockCyclicData); Gram matrices only where they are used."""
    c = problem.combined
    f, MN, N = c.n_features, c.n_clients, problem.n_clients
    least_squares = c.model.quadratic
    use_gram = np.array([least_squares and batch == 0 and f < 2 * n for n in c.client_sizes], dtype=np.bool_)
    need = use_gram.any() or (track and least_squares)
    grams = np.zeros((MN, f, f)) if need else np.zeros((0, f, f))
    rhs = np.zeros((MN, f)) if need else np.zeros((0, f))
    if need:
        for k in range(MN):
            Xk, yk = c.client_data(k)
            grams[k] = Xk.T @ Xk / Xk.shape[0]
            rhs[k] = Xk.T @ yk / Xk.shape[0]
    track_gram = track and least_squares
    block_gram = grams.reshape(problem.n_blocks, N, f, f).mean(axis=1) if track_gram else np.zeros((0, f, f))
    block_rhs = rhs.reshape(problem.n_blocks, N, f).mean(axis=1) if track_gram else np.zeros((0, f))
    return BlockCyclicData(
        n_classes=c.n_classes,
        n_features=f,
        mu=c.mu,
        n_blocks=problem.n_blocks,
        n_clients=N,
        rows=np.array(c.X).reshape(-1),
        targets=np.array(c.y),
        offsets=np.array(c.offsets),
        use_gram=use_gram,
        gram=(grams if use_gram.any() else np.zeros((0, f, f))).reshape(-1),
        gram_rhs=(rhs if use_gram.any() else np.zeros((0, f))).reshape(-1),
        block_gram=np.ascontiguousarray(block_gram).reshape(-1),
        block_rhs=np.ascontiguousarray(block_rhs).reshape(-1),
    )


@njit(cache=True)
def _mean_loss(loss, C, f, rows, targets, lo, n_k, W, Z):
    """(1/n_k) sum of the per-sample losses (model oracle) over rows lo..lo+n_k-1 at W (f*C,)."""
    Xk = rows[lo * f:(lo + n_k) * f].reshape(n_k, f)
    Zk = Z[:n_k]
    np.dot(Xk, W.reshape(f, C), Zk)
    return margin_loss_sum(loss, Zk, targets, lo, n_k) / n_k


@overload(workspace)
def _workspace(model, data, batch, d):
    """(G (d,) a gradient, acc (d,) the tracked block gradient, Xb (max(b, 1) f,) the gathered
    minibatch rows, Z (n_max, C) margins and idx (n_max,) row indices, n_max = max(b, largest n_k))."""
    if not is_bundle(data, BlockCyclicData):
        return None

    def impl(model, data, batch, d):
        offsets = data.offsets
        n_max = batch
        for k in range(data.n_blocks * data.n_clients):
            n_max = max(n_max, offsets[k + 1] - offsets[k])
        return (np.empty(d), np.empty(d), np.empty(max(batch, 1) * data.n_features),
                np.empty((n_max, data.n_classes)), np.empty(n_max, dtype=np.int64))

    return impl


@overload(client_major)
def _client_major(data):
    """Client by client: a client's (f, C) model stays in cache over its I steps."""
    if not is_bundle(data, BlockCyclicData):
        return None

    def impl(data):
        return True

    return impl


@overload(client_steps)
def _client_steps(model, data, work, batch, key, chain, m, i, t0, steps, schedule, period, W):
    """The module docstring's steps W <- W - eta_t (g + mu W) of pseudo-client k = m N + i; the y
    chain (chain 1) reads the stream's slots b..2b-1."""
    if not is_bundle(data, BlockCyclicData):
        return None

    def impl(model, data, work, batch, key, chain, m, i, t0, steps, schedule, period, W):
        G, _, Xb, Z, idx = work
        C, f, mu, N, offsets = data.n_classes, data.n_features, data.mu, data.n_clients, data.offsets
        k = m * N + i
        for e in range(steps):
            t = t0 + e
            eta = step_size_at(schedule.code, schedule.a, schedule.b, t, period)
            if batch == 0 and data.use_gram[k]:
                gram_gradient(data.gram, k * f * f, data.gram_rhs, k * f, f, W, G)
            else:
                stream = np.uint64(0)
                if batch > 0:
                    stream = stream_key(key, t, i, N) + GOLDEN * np.uint64(chain * batch)
                data_gradient(model, C, data.rows, offsets[k] * f, f, data.targets, offsets[k],
                              offsets[k + 1] - offsets[k], batch, stream, W, G, Xb, Z, idx)
            for q in range(W.size):
                W[q] -= eta * (G[q] + mu * W[q])

    return impl


@overload(block_grad_sq)
def _block_grad_sq(model, data, work, m, W):
    """||grad F_m(W) + mu W||^2 by the block Gram A_m W - b_m (least squares) or over all block-m rows."""
    if not is_bundle(data, BlockCyclicData):
        return None

    def impl(model, data, work, m, W):
        G, acc, Xb, Z, idx = work
        C, f, mu, N, offsets = data.n_classes, data.n_features, data.mu, data.n_clients, data.offsets
        if data.block_gram.size > 0:
            gram_gradient(data.block_gram, m * f * f, data.block_rhs, m * f, f, W, acc)
        else:
            for q in range(acc.size):
                acc[q] = 0.0
            for i in range(N):
                k = m * N + i
                data_gradient(model, C, data.rows, offsets[k] * f, f, data.targets, offsets[k],
                              offsets[k + 1] - offsets[k], 0, np.uint64(0), W, G, Xb, Z, idx)
                for q in range(acc.size):
                    acc[q] += G[q] / N
        sq = 0.0
        for q in range(acc.size):
            g = acc[q] + mu * W[q]
            sq += g * g
        return sq

    return impl


@overload(participant_loss)
def _participant_loss(model, data, work, m, part, K, W):
    """Each participant's mean data loss over its block-m rows, averaged, + mu/2 ||W||^2."""
    if not is_bundle(data, BlockCyclicData):
        return None

    def impl(model, data, work, m, part, K, W):
        Z, N, offsets = work[3], data.n_clients, data.offsets
        total = 0.0
        for p in range(K):
            k = m * N + part[p]
            total += _mean_loss(model, data.n_classes, data.n_features, data.rows, data.targets, offsets[k],
                                offsets[k + 1] - offsets[k], W, Z)
        sq = 0.0
        for q in range(W.size):
            sq += W[q] * W[q]
        return total / K + 0.5 * data.mu * sq

    return impl

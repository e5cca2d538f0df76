"""Numba kernel: FedAvg / local SGD with full participation, one seed per call.

Algorithm (Li et al., ICLR 2020, Sec. 2; two-sided learning rates as in the lecture note):
for round r = 0..R-1, every client k starts from the global model W and takes E steps

    W_k <- W_k - eta_t (g_k(W_k) + mu W_k),   t = r E + e,

where g_k is the data gradient of client k (the loss's derivative comes from the model oracle,
``problems.models.kernels.margin_residuals``, dispatched on the model's loss tag) (exact, or a minibatch of ``batch`` rows drawn
uniformly with replacement by the counter-based sampler of ``_rng``); then the server sets
W <- W + s (sum_k p_k W_k - W), s = ``server_lr`` (s = 1: plain FedAvg, W <- sum_k p_k W_k).

Parameters are stored row-major as (f, C): w[j*C + c] = W[j, c] (C = 1 except for softmax).
Outside its feature support S_k a client's data gradient vanishes, so its local model there is
s_k W with s_k = prod_e (1 - eta_t mu), tracked as one scalar (see ``_packing``).

With ``track`` the kernel also records, over every local iterate of every client,
max ||w - w*||^2 (the radius of the region the iterates visit) and max ||g||^2 of the realised
stochastic gradients (Assumption 4's quantity, exactly, when gradients are exact).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..._rng import seed_key, stream_key
from ...schedules import step_size_at
from ..local_steps import DIVERGENCE_FACTOR, data_gradient, gram_gradient

__all__ = ["fedavg_kernel"]

@njit(cache=True)
def fedavg_kernel(
    loss, C, n_features, mu, weights, targets, sample_offsets, support, support_offsets, rows, row_offsets,
    full_support, gram, uses_gram, gram_rhs, sched_code, sched_a, sched_b, E, rounds, batch, seed, server_lr, record_rounds, w0, w_star,
    track, records, stats,
):
    """Run one seed; write the global model at ``record_rounds`` into ``records`` (n_rec, d).

    ``stats`` (2,) receives [max ||w - w*||^2, max ||g||^2] when ``track``. Returns -1, or the
    0-based round at whose end the model had diverged (non-finite, or DIVERGENCE_FACTOR).
    """
    N = weights.size
    d = n_features * C
    m_max = 0
    for k in range(N):
        m_max = max(m_max, support_offsets[k + 1] - support_offsets[k])
    W = w0.copy()
    local = np.empty(support_offsets[N] * C)
    scale = np.ones(N)
    n_max = batch
    if batch == 0:
        for k in range(N):
            n_max = max(n_max, sample_offsets[k + 1] - sample_offsets[k])
    G = np.empty(m_max * C)
    Xb = np.empty(max(batch, 1) * m_max)
    Z = np.empty((n_max, C))
    idx = np.empty(n_max, dtype=np.int64)
    acc = np.empty(d)
    key = seed_key(seed)
    star_sq = 0.0
    for q in range(d):
        star_sq += w_star[q] * w_star[q]
    dist0 = 0.0
    for q in range(d):
        dist0 += (W[q] - w_star[q]) ** 2
    limit = DIVERGENCE_FACTOR * (1.0 + dist0)
    max_rad, max_grad = dist0, 0.0

    ri = 0
    if record_rounds.size > 0 and record_rounds[0] == 0:
        records[0, :] = W
        ri = 1
    for r in range(rounds):
        w_sq, w_dot = 0.0, 0.0
        if track:
            for q in range(d):
                w_sq += W[q] * W[q]
                w_dot += W[q] * w_star[q]
        gram_base = 0
        for k in range(N):
            so, m = support_offsets[k], support_offsets[k + 1] - support_offsets[k]
            Wk = local[so * C:(so + m) * C]
            off_sq, off_dot, off_star = w_sq, w_dot, star_sq
            for jj in range(m):
                j = support[so + jj]
                for c in range(C):
                    v, vs = W[j * C + c], w_star[j * C + c]
                    Wk[jj * C + c] = v
                    off_sq -= v * v
                    off_dot -= v * vs
                    off_star -= vs * vs
            if full_support[k]:
                off_sq, off_dot, off_star = 0.0, 0.0, 0.0
            s = 1.0
            n_k = sample_offsets[k + 1] - sample_offsets[k]
            for e in range(E):
                t = r * E + e
                eta = step_size_at(sched_code, sched_a, sched_b, t, E)
                stream = stream_key(key, t, k, N) if batch > 0 else np.uint64(0)
                if batch == 0 and uses_gram[k]:
                    gram_gradient(gram, gram_base, gram_rhs, so, m, Wk, G)
                else:
                    data_gradient(loss, C, rows, row_offsets[k], m, targets, sample_offsets[k], n_k, batch,
                                   stream, Wk, G, Xb, Z, idx)
                if track:
                    g_sq = mu * mu * s * s * max(off_sq, 0.0)
                    for q in range(m * C):
                        g = G[q] + mu * Wk[q]
                        g_sq += g * g
                    max_grad = max(max_grad, g_sq)
                for q in range(m * C):
                    Wk[q] -= eta * (G[q] + mu * Wk[q])
                s *= 1.0 - eta * mu
                if track:
                    rad = max(s * s * off_sq - 2.0 * s * off_dot + off_star, 0.0)
                    for jj in range(m):
                        j = support[so + jj]
                        for c in range(C):
                            diff = Wk[jj * C + c] - w_star[j * C + c]
                            rad += diff * diff
                    max_rad = max(max_rad, rad)
            scale[k] = s
            gram_base += m * m
        # server: acc = sum_k p_k w_k, with w_k = s_k W off the support of k
        off_weight = 0.0
        for k in range(N):
            if not full_support[k]:
                off_weight += weights[k] * scale[k]
        for q in range(d):
            acc[q] = off_weight * W[q]
        for k in range(N):
            so, m = support_offsets[k], support_offsets[k + 1] - support_offsets[k]
            p, s = weights[k], scale[k]
            for jj in range(m):
                j = support[so + jj]
                for c in range(C):
                    q = j * C + c
                    if full_support[k]:
                        acc[q] += p * local[(so + jj) * C + c]
                    else:
                        acc[q] += p * (local[(so + jj) * C + c] - s * W[q])
        dist = 0.0
        for q in range(d):
            if server_lr == 1.0:
                W[q] = acc[q]
            else:
                W[q] = W[q] + server_lr * (acc[q] - W[q])
            dist += (W[q] - w_star[q]) ** 2
        if not (dist <= limit):
            return r
        max_rad = max(max_rad, dist)
        if ri < record_rounds.size and record_rounds[ri] == r + 1:
            records[ri, :] = W
            ri += 1
    stats[0] = max_rad
    stats[1] = max_grad
    return -1

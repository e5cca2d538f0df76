"""The linear model's pieces of the local-SGD round loop (``client_rounds``), for the bundle
``packing.PackedClients``: a client's E local steps on its feature support and the server's
aggregate with the off-support scalars (Li et al., ICLR 2020, Sec. 2; the loop and its math in
``local_sgd``).

Parameters are stored row-major as (f, C): w[j*C + c] = W[j, c] (C = 1 except for softmax). Client
k's local model is kept on its support S_k only (m = |S_k| features, a slice of ``local``); off the
support its data gradient vanishes, so its local model there is s_k W with one scalar s_k per
client, s_k <- s_k - eta_t (mu s_k + mu_prox (s_k - 1)) from s_k = 1
(``local_steps.off_support_scale``). The server's aggregate is then

    W' = (b + sum_{k sampled, S_k partial} a_k s_k) W + sum_k a_k (W_k - s_k W) on S_k,

summed in client order. The workspace (``client_workspace``) is ``local`` (sum_k m_k C,) the local
models, ``scale`` (N,) the s_k, one row per thread of the step scratch (the prox anchor and G
(m_max C,), Xb (b m_max,), Z (n_max, C), idx (n_max,)) and ``norms`` (3,) [||W||^2, W.w*, ||w*||^2]
(the first two each round when tracking: the tracked radius off the support).
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.extending import overload

from .._rng import stream_key
from ..schedules import step_size_at
from .client_rounds import aggregate, begin_round, client_round, client_workspace, round_clients
from .local_steps import (
    data_gradient, gram_gradient, off_support_gradient_sq, off_support_scale, prefetch_minibatch, sq_norm,
)
from .packing import PackedClients
from .round_state import correct_gradient, end_client, is_state

__all__: list[str] = []


@njit(cache=True)
def _client_round(
    k, r, loss, clients, schedule, plan, algorithm_state, key, counts, step_scales, W, w_star, w_sq, w_dot, star_sq,
    track, local, scale, client_stats, anchor, G, Xb, Z, idx,
):
    """Client k's E local steps of round r from the global model W (module docstring): writes its
    support-restricted local model into ``local``, its off-support scalar into scale[k] and
    [max ||w - w*||^2, max ||g||^2] over its iterates into client_stats[k] (zeros when not
    ``track``). ``loss``, ``clients``, ``schedule`` and ``plan`` are ``local_sgd._local_sgd``'s; ``anchor``,
    ``G``, ``Xb``, ``Z`` and ``idx`` are this thread's scratch; w_sq and w_dot are ||W||^2 and W.w*
    (0 when not ``track``), star_sq is ||w*||^2."""
    C, mu, support, support_offsets = clients.n_classes, clients.mu, clients.support, clients.support_offsets
    sample_offsets, rows, row_offsets = clients.sample_offsets, clients.rows, clients.row_offsets
    targets = clients.targets  # read once: a field read in the step loop counts a reference every step
    E, batch, mu_prox = plan.local_steps, plan.batch, plan.mu_prox
    N = counts.size
    so, m = support_offsets[k], support_offsets[k + 1] - support_offsets[k]
    lam = step_scales[k]
    Wk = local[so * C:(so + m) * C]
    off_sq, off_dot, off_star = 0.0, 0.0, 0.0
    if clients.full_support[k]:  # the support is 0..n_features-1 in order: W's block as it is
        for q in range(m * C):
            Wk[q] = W[q]
    else:
        off_sq, off_dot, off_star = w_sq, w_dot, star_sq
        for jj in range(m):
            j = support[so + jj]
            for c in range(C):
                v, vs = W[j * C + c], w_star[j * C + c]
                Wk[jj * C + c] = v
                off_sq -= v * v
                off_dot -= v * vs
                off_star -= vs * vs
    if mu_prox != 0.0:  # the prox term's anchor; FedAvg never reads it
        for q in range(m * C):
            anchor[q] = Wk[q]
    s = 1.0
    max_rad, max_grad = 0.0, 0.0
    n_k = sample_offsets[k + 1] - sample_offsets[k]
    for e in range(E):
        t = r * E + e
        eta = step_size_at(schedule.code, schedule.a, schedule.b, t, E) * lam
        stream = stream_key(key, t, k, N) if batch > 0 else np.uint64(0)
        if batch > 0:  # the next step's rows: this client's, or the next client's first
            k_next = k if e + 1 < E else k + 1
            if k_next < N and counts[k_next] > 0:
                prefetch_minibatch(rows, row_offsets[k_next], support_offsets[k_next + 1] - support_offsets[k_next],
                                   targets, sample_offsets[k_next],
                                   sample_offsets[k_next + 1] - sample_offsets[k_next], batch,
                                   stream_key(key, t + 1 if e + 1 < E else r * E, k_next, N))
        if batch == 0 and clients.uses_gram[k]:
            gram_gradient(clients.gram, clients.gram_offsets[k], clients.gram_rhs, so, m, Wk, G)
        else:
            data_gradient(loss, C, rows, row_offsets[k], m, targets, sample_offsets[k], n_k, batch,
                          stream, Wk, G, Xb, Z, idx)
        correct_gradient(algorithm_state, k, lam, G[:m * C])
        if track:
            g_sq = off_support_gradient_sq(s, mu, mu_prox, off_sq)
            for q in range(m * C):
                g = G[q] + mu * Wk[q]
                if mu_prox != 0.0:
                    g += mu_prox * (Wk[q] - anchor[q])
                g_sq += g * g
            max_grad = max(max_grad, lam * lam * g_sq)
        if mu_prox == 0.0:
            for q in range(m * C):
                Wk[q] -= eta * (G[q] + mu * Wk[q])
        else:
            for q in range(m * C):
                Wk[q] -= eta * (G[q] + mu * Wk[q] + mu_prox * (Wk[q] - anchor[q]))
        s = off_support_scale(s, eta, mu, mu_prox)
        if track:
            rad = max(s * s * off_sq - 2.0 * s * off_dot + off_star, 0.0)
            for jj in range(m):
                j = support[so + jj]
                for c in range(C):
                    diff = Wk[jj * C + c] - w_star[j * C + c]
                    rad += diff * diff
            max_rad = max(max_rad, rad)
    end_client(algorithm_state, k, r, lam, schedule, E, Wk, W)
    scale[k] = s
    client_stats[k, 0] = max_rad
    client_stats[k, 1] = max_grad



@overload(client_workspace, inline="always")
def _linear_workspace(clients, plan, W, w_star, threads):
    if not is_state(clients, PackedClients):
        return None

    def impl(clients, plan, W, w_star, threads):
        C, support_offsets, sample_offsets = clients.n_classes, clients.support_offsets, clients.sample_offsets
        batch = plan.batch
        N = clients.weights.size
        m_max = 0
        for k in range(N):
            m_max = max(m_max, support_offsets[k + 1] - support_offsets[k])
        n_max = batch
        if batch == 0:
            for k in range(N):
                n_max = max(n_max, sample_offsets[k + 1] - sample_offsets[k])
        norms = np.zeros(3)
        norms[2] = sq_norm(w_star)
        return (np.empty(support_offsets[N] * C), np.ones(N), np.empty((threads, m_max * C)),
                np.empty((threads, m_max * C)), np.empty((threads, max(batch, 1) * m_max)),
                np.empty((threads, n_max, C)), np.empty((threads, n_max), dtype=np.int64), norms)

    return impl


@overload(begin_round, inline="always")
def _linear_begin_round(clients, work, W, w_star, track, broadcast, acc):
    if not is_state(clients, PackedClients):
        return None

    def impl(clients, work, W, w_star, track, broadcast, acc):
        norms = work[7]
        w_sq, w_dot = 0.0, 0.0
        if track:
            for q in range(W.size):
                w_sq += W[q] * W[q]
                w_dot += W[q] * w_star[q]
        norms[0] = w_sq
        norms[1] = w_dot

    return impl


@overload(round_clients, inline="always")
def _linear_round_clients(r, loss, clients, schedule, plan, algorithm_state, key, counts, coefficients, step_scales,
                          W, w_star, track, work, client_stats, acc):
    if not is_state(clients, PackedClients):
        return None

    def impl(r, loss, clients, schedule, plan, algorithm_state, key, counts, coefficients, step_scales, W, w_star,
             track, work, client_stats, acc):
        local, scale, anchor, G, Xb, Z, idx, norms = work
        anchor0, G0, Xb0, Z0, idx0 = anchor[0], G[0], Xb[0], Z[0], idx[0]
        w_sq, w_dot, star_sq = norms[0], norms[1], norms[2]
        for k in range(counts.size):
            if counts[k] > 0:
                _client_round(k, r, loss, clients, schedule, plan, algorithm_state, key, counts, step_scales, W,
                              w_star, w_sq, w_dot, star_sq, track, local, scale, client_stats, anchor0, G0, Xb0, Z0,
                              idx0)

    return impl


@overload(client_round, inline="always")
def _linear_client_round(k, r, loss, clients, schedule, plan, algorithm_state, key, counts, coefficients, step_scales,
                         W, w_star, track, work, client_stats, acc, thread):
    if not is_state(clients, PackedClients):
        return None

    def impl(k, r, loss, clients, schedule, plan, algorithm_state, key, counts, coefficients, step_scales, W, w_star,
             track, work, client_stats, acc, thread):
        local, scale, anchor, G, Xb, Z, idx, norms = work
        _client_round(k, r, loss, clients, schedule, plan, algorithm_state, key, counts, step_scales, W, w_star,
                      norms[0], norms[1], norms[2], track, local, scale, client_stats, anchor[thread], G[thread],
                      Xb[thread], Z[thread], idx[thread])

    return impl


@overload(aggregate, inline="always")
def _linear_aggregate(clients, work, counts, coefficients, broadcast, W, acc):
    if not is_state(clients, PackedClients):
        return None

    def impl(clients, work, counts, coefficients, broadcast, W, acc):
        C, support, support_offsets, full_support = (clients.n_classes, clients.support, clients.support_offsets,
                                                     clients.full_support)
        local, scale = work[0], work[1]
        N = counts.size
        off_weight = broadcast
        for k in range(N):
            if counts[k] > 0 and not full_support[k]:
                off_weight += coefficients[k] * scale[k]
        for q in range(W.size):
            acc[q] = off_weight * W[q]
        for k in range(N):
            if counts[k] == 0:
                continue
            so, m = support_offsets[k], support_offsets[k + 1] - support_offsets[k]
            p, s = coefficients[k], scale[k]
            if full_support[k]:  # the support is 0..n_features-1 in order
                for q in range(m * C):
                    acc[q] += p * local[so * C + q]
                continue
            for jj in range(m):
                j = support[so + jj]
                for c in range(C):
                    q = j * C + c
                    acc[q] += p * (local[(so + jj) * C + c] - s * W[q])

    return impl

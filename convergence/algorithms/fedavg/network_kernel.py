"""Numba kernel: FedAvg on a CNN problem (``problems.ImageClassificationProblem``), one seed per call.

The algorithm is FedAvg's (``kernel``, Li et al., ICLR 2020, Sec. 2 and 3.3): for round r, the
server draws the round's clients with multiplicities c_k and aggregation coefficients a_k, b
(``participation.draw_clients`` / ``aggregation``, the linear kernel's functions, under the seed's
participation key: full participation or Li's Schemes I, II, transformed II, McMahan's original);
every sampled client k starts from the global model W and takes E local SGD steps on its mean
cross-entropy F_k (``network_steps.network_client_steps``: the minibatch rows of (seed, step,
client) are the linear kernels', the step size is the config's schedule times lambda_k); then

    W' = b W + sum_k a_k W_k   (float64, clients in index order),   W <- W + s (W' - W),  s = server_lr,

stored in the problem's dtype (float32 by default: iterates, images and every network evaluation;
float64 for the agreement tests). Clients run one after the other on one workspace allocated by
the caller once per run.

Divergence and the tracked radius are measured from ``anchor`` (w0: a CNN problem has no exact
optimum, ``convergence.run.objective_optimum``): the run has diverged at the end of round r when
W is non-finite or ||W - anchor||^2 > DIVERGENCE_FACTOR (1 + ||w0 - anchor||^2). With ``track``,
stats <- [max ||w - anchor||^2 over every local iterate of every sampled client and every global
model, max lambda_k^2 ||g||^2 over every stochastic gradient].
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..._rng import participation_key, seed_key
from ..local_steps import DIVERGENCE_FACTOR, sq_dist
from ..network_steps import network_client_steps
from ..participation import sample_buffers, sample_round

__all__ = ["fedavg_network_kernel"]


@njit(cache=True)
def fedavg_network_kernel(
    table, images, labels, offsets, weights, sched_code, sched_a, sched_b, E, rounds, batch, seed, server_lr,
    record_rounds, w0, anchor, track, records, stats, batch_images, batch_labels, acts, dacts, pool_index, grad,
    scheme, K, cdf, step_scales,
):
    """Run one seed; write the global model at ``record_rounds`` into ``records`` (n_rec, d) float64.

    images (n, H, W, C) and w0 (d,) of one dtype, labels (n,) int64, offsets (N+1,), weights (N,);
    anchor (d,) float64; stats (2,) float64; the minibatch and network buffers as
    ``network_steps`` states; the scheme as ``participation.KernelParticipation``. Returns -1, or
    the 0-based round at whose end the model had diverged (module docstring).
    """
    N = weights.size
    d = w0.size
    W = w0.copy()
    Wk = np.empty_like(W)
    acc = np.empty(d)
    maxima = np.zeros(2)
    counts, coefficients, hashes, drawn = sample_buffers(N, K)
    key = seed_key(seed)
    pkey = participation_key(seed)
    broadcast = 0.0
    dist0 = sq_dist(W, anchor)
    limit = DIVERGENCE_FACTOR * (1.0 + dist0)
    maxima[0] = dist0

    ri = 0
    if record_rounds.size > 0 and record_rounds[0] == 0:
        for q in range(d):
            records[0, q] = W[q]
        ri = 1
    for r in range(rounds):
        broadcast = sample_round(scheme, pkey, r, K, cdf, weights, counts, coefficients, hashes, drawn, broadcast)
        for q in range(d):
            acc[q] = broadcast * np.float64(W[q])
        for k in range(N):
            if counts[k] == 0:
                continue
            Wk[:] = W
            network_client_steps(
                table, images, labels, offsets[k], offsets[k + 1] - offsets[k], batch, key, k, N, r * E, E,
                sched_code, sched_a, sched_b, step_scales[k], Wk, anchor, track, batch_images, batch_labels, acts,
                dacts, pool_index, grad, maxima,
            )
            a = coefficients[k]
            for q in range(d):
                acc[q] += a * np.float64(Wk[q])
        dist = 0.0
        for q in range(d):
            if server_lr == 1.0:
                W[q] = acc[q]
            else:
                W[q] = np.float64(W[q]) + server_lr * (acc[q] - np.float64(W[q]))
            diff = np.float64(W[q]) - anchor[q]
            dist += diff * diff
        if not (dist <= limit):
            return r
        maxima[0] = max(maxima[0], dist)
        if ri < record_rounds.size and record_rounds[ri] == r + 1:
            for q in range(d):
                records[ri, q] = W[q]
            ri += 1
    stats[0] = maxima[0]
    stats[1] = maxima[1]
    return -1

"""The model-independent steps of a block-cyclic round in the kernel's round loop
(``kernel.block_cyclic_kernel``; Ding et al., arXiv 2002.07454, Algorithms 1-2, eq. 7-8, Sec. 5;
``kernel``'s docstring states the algorithms): the start of a round (its participants and the
broadcast), the server average of a chain, the divergence test, MC-PSGD's chain selection, the
block predictor update, the drift tracking and the records.

Only the local step and the loss evaluations differ between models (a linear model's rows and Gram
matrices, or a network's images): ``model_pieces``. Models may be stored in float32 (a CNN run) or
float64; every sum here is accumulated in float64 in participant order, and the float64 results
are stored in the output's dtype, so on float64 models each step is the plain float64 arithmetic.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..._rng import participants
from ..local_steps import sq_dist, sq_norm

__all__ = [
    "MODE_MC", "MODE_MM", "PREDICTOR_AVERAGE", "PREDICTOR_EXPONENTIAL", "block_state", "initial_tracked",
    "record_round", "select_chain", "server_average", "server_step", "start_round", "track_drift", "update_predictor",
]

MODE_MM, MODE_MC = 0, 1
"""The algorithm of a run: MM-PSGD (the block-mixed chain only) or MC-PSGD (both chains and the selection)."""
PREDICTOR_AVERAGE, PREDICTOR_EXPONENTIAL = 0, 1
"""The block predictor: eq. 7-8's average of the block's models or Sec. 5's exponential average."""


@njit(cache=True, inline="always")
def initial_tracked(w0):
    """The tracked numbers of a run before its first step, (4,) float64: [sum_t ||grad F_m(x_bar_{t-1})||^2,
    running max of the mean drift (1/K) sum_i ||x_bar_t - x_t^i||^2, running max of the largest drift,
    running max of ||x_t^i||^2 (and ||y_t^i||^2) over every local iterate (the B^2 of Ding et al.
    Assumption 5)]: nothing summed or drifted yet, ||w0||^2 the largest norm so far."""
    tracked = np.zeros(4)
    tracked[3] = sq_norm(w0)
    return tracked


@njit(cache=True, inline="always")
def block_state(M, w0):
    """The per-block state at the start of a run: (pred (M, d) float64 the predictors p_m, wbar (M, d)
    in w0's dtype the block-separate models w_bar_m, both w0; count (M,) the rounds of each block so
    far and sel (M,) how often MC selected the separate chain, int64 zeros)."""
    d = w0.size
    pred = np.empty((M, d))
    wbar = np.empty((M, d), dtype=w0.dtype)
    for m in range(M):
        for q in range(d):
            pred[m, q] = np.float64(w0[q])
        wbar[m] = w0
    return pred, wbar, np.zeros(M, dtype=np.int64), np.zeros(M, dtype=np.int64)


@njit(cache=True, inline="always")
def start_round(r, E, M, pkey, N, K, hashes, part, xbar, wbar, xs, ys, mc):
    """The start of round r; returns its block m = (r // E) % M. The participants S_r into part[:K]:
    all N clients (part = 0..N-1, left as it is) or, K < N, the uniform K-subset ``_rng.participants``
    draws from the seed's participation key (work space hashes (N,)); then the broadcast: every
    participant's x_i <- x_bar and, for MC, y_i <- w_bar_m (Algorithm 1 line 5, Algorithm 2 lines 6
    and 8, and line 15's reset at a new block)."""
    m = (r // E) % M
    if K < N:
        participants(pkey, r, N, K, hashes, part)
    for p in range(K):
        xs[p] = xbar
        if mc:
            ys[p] = wbar[m]
    return m


@njit(cache=True, inline="always")
def server_average(local, K, acc, out):
    """The server's average out <- (1/K) sum_{p < K} local[p] (Algorithm 1 lines 11-12): accumulated in
    float64 in participant order in acc (d,) float64 (out itself when out is float64), then stored in
    out's dtype."""
    w = 1.0 / K
    for q in range(acc.size):
        acc[q] = 0.0
    for p in range(K):
        for q in range(acc.size):
            acc[q] += w * np.float64(local[p, q])
    for q in range(out.size):
        out[q] = acc[q]


@njit(cache=True, inline="always")
def server_step(xs, ys, K, mc, acc, xbar, ybar, wbar_m, anchor, limit):
    """The server's averages of a round and the divergence test: x_bar <- mean of the x_i and, for MC,
    y_bar <- mean of the y_i and w_bar_m <- y_bar (Algorithm 2 line 7), each through the float64
    work space acc (d,). False (the run has diverged) as soon as ||x_bar - anchor||^2, then
    ||y_bar - anchor||^2, is not finite or exceeds ``limit``."""
    server_average(xs, K, acc, xbar)
    if not (sq_dist(xbar, anchor) <= limit):
        return False
    if mc:
        server_average(ys, K, acc, ybar)
        if not (sq_dist(ybar, anchor) <= limit):
            return False
        wbar_m[:] = ybar
    return True


@njit(cache=True, inline="always")
def select_chain(loss_x, loss_y, sel, m):
    """MC-PSGD's selection (Algorithm 2 lines 9-10): whether u_bar is y_bar, the separate chain's model,
    i.e. whether its average local loss is strictly smaller (a tie keeps x_bar); counts it in sel[m]."""
    choose_y = loss_y < loss_x
    if choose_y:
        sel[m] += 1
    return choose_y


@njit(cache=True, inline="always")
def update_predictor(pred, count, m, u, predictor):
    """The predictor of block m after a round of it (eq. 7, 8), c = count[m] its rounds so far:
    p_m <- c/(c+1) p_m + 1/(c+1) u (the mean of the block's u_bar) or, with PREDICTOR_EXPONENTIAL
    and c > 0, p_m <- (p_m + u)/2 (Sec. 5's halving); in float64. count[m] <- c + 1."""
    c = count[m]
    if predictor == PREDICTOR_EXPONENTIAL and c > 0:
        for q in range(u.size):
            pred[m, q] = 0.5 * (pred[m, q] + np.float64(u[q]))
    else:
        for q in range(u.size):
            pred[m, q] = (c / (c + 1.0)) * pred[m, q] + (1.0 / (c + 1.0)) * np.float64(u[q])
    count[m] = c + 1


@njit(cache=True, inline="always")
def track_drift(mean, xs, ys, K, mc, tracked):
    """After a local step with x_bar_t = ``mean`` (d,): the running maxima of ``initial_tracked``'s drifts
    tracked[1], tracked[2] and of the iterates' squared norms tracked[3] (x_t^i and, for MC, y_t^i)."""
    total, largest = 0.0, 0.0
    for p in range(K):
        dp = sq_dist(mean, xs[p])
        total += dp
        largest = max(largest, dp)
        tracked[3] = max(tracked[3], sq_norm(xs[p]))
        if mc:
            tracked[3] = max(tracked[3], sq_norm(ys[p]))
    tracked[1] = max(tracked[1], total / K)
    tracked[2] = max(tracked[2], largest)


@njit(cache=True, inline="always")
def record_round(ri, done, record_rounds, xbar, pred, wbar, sel, tracked, mc, track, rec_global, rec_pred,
                 rec_sep, rec_sel, rec_track):
    """After ``done`` rounds: if it is the record point record_rounds[ri], store x_bar, the predictors
    and, for MC, the w_bar_m and the selection counts (float64 records), the tracked numbers with
    ``track``; returns the index of the next record point."""
    if ri >= record_rounds.size or record_rounds[ri] != done:
        return ri
    for q in range(xbar.size):
        rec_global[ri, q] = xbar[q]
    rec_pred[ri] = pred
    if mc:
        for m in range(wbar.shape[0]):
            for q in range(xbar.size):
                rec_sep[ri, m, q] = wbar[m, q]
        rec_sel[ri] = sel
    if track:
        rec_track[ri] = tracked
    return ri + 1

"""Numba kernel: MM-PSGD and MC-PSGD (hence FedAvg on cyclic data and parallel restarted SGD) on a
CNN over block-cyclic image data (``problems.BlockCyclicImageProblem``), one seed per call.

The algorithms are ``kernel.block_cyclic_kernel``'s (Ding et al., arXiv 2002.07454, Algorithms
1-2, eq. 7-8, Sec. 5; its docstring states them): R = C M E rounds of I local steps, round r in
block m = (r // E) % M; the participants S_r (all N, or the K-subset ``_rng.participants`` draws
from the seed's participation key, as there); the block-mixed chain x from the global model, MC's
block-separate chain y from w_bar_m; the selection of MC by the average local loss
(1/|S_r|) sum_{i in S_r} F_m^i over each participant's block-m images; the predictors p_m
(``average``: the running mean of the block's u_bar; ``exponential``: Sec. 5's halving). Pseudo-
client k = m N + i holds client i's images of block m (rows offsets[k]:offsets[k+1]).

What differs from the linear kernel, and why it is a kernel of its own: a local step is
``network_steps.network_client_steps`` (the CNN client-step primitive; Numba's cached kernels cannot
take a jitted step function as an argument, so the step is called by name and the engine dispatches
on the problem type, as FedAvg's engine does), and the models live in the problem's dtype:

* precision: iterates x_i, y_i, the global models x_bar, y_bar and w_bar_m are stored in the dtype
  of w0 (float32 by default, float64 for the agreement tests); every step's update and every
  average (1/K) sum_p x_p (accumulated in float64 in participant order) is computed in float64
  and then stored; the predictors p_m are kept and recorded in float64.
* one step at a time: every participant's local step t is ``network_client_steps`` with E = 1 and
  the constant schedule eta_t = step_size_at(gamma, t, I) (so per-round schedules see I), from
  global step t; the two chains and the clients are independent, so this order gives the numbers
  of the linear kernel's client-major loop.
* minibatches: client i of block m at step t draws its x-chain rows from the stream
  stream_key(seed_key(seed), t, i, N), the linear kernels' rows; the y chain (MC) draws from the
  same construction under its own key mix64(seed_key(seed) ^ SEPARATE_CHAIN_SALT), independent
  of the x chain's rows (the network primitive takes a key, not the linear step's slot offset).
* divergence: no exact optimum; the run has diverged after round r when ||x_bar - w0||^2 (or
  y_bar's) is not finite or exceeds DIVERGENCE_FACTOR (``local_steps``), as the linear kernel
  anchored at w0.

Tracking (``track``; PR-SGD always): before each step t, ||grad F_m(xbar_{t-1})||^2 with xbar the
mean of the participants' x (float64, evaluated at its dtype rounding, F_m over all N clients'
block-m images); after each step the mean and the largest ||xbar_t - x_t^i||^2 and the largest
||x_t^i||^2 (and ||y_t^i||^2) over every local iterate, kept as running maxima -- the linear
kernel's four tracked numbers.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from problems.models.cnn.kernel import network_loss_grad

from ..._rng import PARTICIPATION_SALT, mix64, seed_key
from ...schedules import step_size_at
from ..local_steps import DIVERGENCE_FACTOR, sq_norm
from ..network_steps import network_client_steps
from ..round_state import STATELESS
from .round_steps import (
    MODE_MC, block_state, initial_tracked, record_round, select_chain, server_average, server_step, start_round,
    track_drift, update_predictor,
)

__all__ = ["SEPARATE_CHAIN_SALT", "block_cyclic_network_kernel"]

SEPARATE_CHAIN_SALT = np.uint64(0x8CB92BA72F3D8DD7)
"""XOR-ed into the seed key to make the key of MC-PSGD's block-separate chain's minibatches."""
CONSTANT_SCHEDULE = 0  # schedules.StepSize.constant's code: eta_t passed as the constant


@njit(cache=True)
def _participant_loss(table, images, labels, offsets, m, N, part, K, W, acts, dacts, pool_index, grad):
    """(1/K) sum_{p < K} F_m^{part[p]}(W): each participant's mean cross-entropy over its block-m images."""
    total = 0.0
    for p in range(K):
        k = m * N + part[p]
        lo, hi = offsets[k], offsets[k + 1]
        total += network_loss_grad(table, W, images[lo:hi], labels[lo:hi], acts, dacts, pool_index, grad)
    return total / K


@njit(cache=True)
def _block_grad_sq(table, images, labels, offsets, m, N, W, acc, acts, dacts, pool_index, grad):
    """||grad F_m(W)||^2, F_m = (1/N) sum_i F_m^i over all N clients' block-m images (float64 sum)."""
    for q in range(acc.size):
        acc[q] = 0.0
    for i in range(N):
        k = m * N + i
        lo, hi = offsets[k], offsets[k + 1]
        network_loss_grad(table, W, images[lo:hi], labels[lo:hi], acts, dacts, pool_index, grad)
        for q in range(acc.size):
            acc[q] += np.float64(grad[q]) / N
    return sq_norm(acc)


@njit(cache=True)
def block_cyclic_network_kernel(
    mode, predictor, table, images, labels, offsets, M, N, code_x, a_x, b_x, code_y, a_y, b_y, I, E, rounds, batch,
    K, seed, record_rounds, w0, track, rec_global, rec_pred, rec_sep, rec_sel, rec_track, batch_images,
    batch_labels, acts, dacts, pool_index, grad,
):
    """Run one seed (module docstring); returns -1, or the 0-based round after which it diverged.

    images (n, H, W, C) and w0 (d,) of one dtype, labels (n,) int64, offsets (M N + 1,); the
    schedules of the x and y chains as (code, a, b) of ``StepSize``; records, all float64 but
    rec_sel, at ``record_rounds`` (P,) (0 = before the first round) as the linear kernel's:
    rec_global (P, d) x_bar, rec_pred (P, M, d), for MC rec_sep (P, M, d) w_bar_m and rec_sel
    (P, M) int64, with ``track`` rec_track (P, 4). Buffers: the minibatch (max(b, 1), H, W, C)
    and (max(b, 1),) and the network workspace for max(b, largest n_k) images.
    """
    d = w0.size
    mc = mode == MODE_MC
    key = seed_key(seed)
    ykey = mix64(key ^ SEPARATE_CHAIN_SALT)
    pkey = mix64(key ^ PARTICIPATION_SALT)
    anchor = np.empty(d)
    for q in range(d):
        anchor[q] = np.float64(w0[q])
    xs = np.empty((K, d), dtype=w0.dtype)
    ys = np.empty((K if mc else 0, d), dtype=w0.dtype)
    xbar = w0.copy()
    ybar = w0.copy()
    avg = w0.copy()
    acc = np.empty(d)
    pred, wbar, count, sel = block_state(M, w0)
    part = np.arange(N)
    hashes = np.empty(N, dtype=np.uint64)
    unused = np.zeros(2)
    tracked = initial_tracked(w0)

    ri = record_round(0, 0, record_rounds, w0, pred, wbar, sel, tracked, mc, track, rec_global, rec_pred,
                      rec_sep, rec_sel, rec_track)
    for r in range(rounds):
        m = start_round(r, E, M, pkey, N, K, hashes, part, xbar, wbar, xs, ys, mc)
        avg[:] = xbar
        for e in range(I):
            t = r * I + e
            eta_x = step_size_at(code_x, a_x, b_x, t, I)
            eta_y = step_size_at(code_y, a_y, b_y, t, I)
            if track:
                tracked[0] += _block_grad_sq(table, images, labels, offsets, m, N, avg, acc, acts, dacts, pool_index,
                                             grad)
            for p in range(K):
                i = part[p]
                k = m * N + i
                lo, n_k = offsets[k], offsets[k + 1] - offsets[k]
                network_client_steps(table, images, labels, lo, n_k, batch, key, i, N, t, 1, CONSTANT_SCHEDULE,
                                     eta_x, 0.0, 1.0, xs[p], anchor, False, batch_images, batch_labels, acts, dacts,
                                     pool_index, grad, unused, STATELESS)
                if mc:
                    network_client_steps(table, images, labels, lo, n_k, batch, ykey, i, N, t, 1, CONSTANT_SCHEDULE,
                                         eta_y, 0.0, 1.0, ys[p], anchor, False, batch_images, batch_labels, acts,
                                         dacts, pool_index, grad, unused, STATELESS)
            if track:
                server_average(xs, K, acc, acc)
                track_drift(acc, xs, ys, K, mc, tracked)
                for q in range(d):
                    avg[q] = acc[q]
        if not server_step(xs, ys, K, mc, acc, xbar, ybar, wbar[m], anchor, DIVERGENCE_FACTOR):
            return r
        choose_y = mc and select_chain(
            _participant_loss(table, images, labels, offsets, m, N, part, K, xbar, acts, dacts, pool_index, grad),
            _participant_loss(table, images, labels, offsets, m, N, part, K, ybar, acts, dacts, pool_index, grad),
            sel, m)
        update_predictor(pred, count, m, ybar if choose_y else xbar, predictor)
        ri = record_round(ri, r + 1, record_rounds, xbar, pred, wbar, sel, tracked, mc, track, rec_global, rec_pred,
                          rec_sep, rec_sel, rec_track)
    return -1

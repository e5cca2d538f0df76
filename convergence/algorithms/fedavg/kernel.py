"""Numba kernel: FedAvg / local SGD with full participation, one seed per call.

Algorithm (Li et al., ICLR 2020, Sec. 2; two-sided learning rates as in the lecture note):
for round r = 0..R-1, every client k starts from the global model W and takes E steps

    W_k <- W_k - eta_t (g_k(W_k) + mu W_k),   t = r E + e,

where g_k is the data gradient of client k (exact, or a minibatch of ``batch`` rows drawn
uniformly with replacement); then the server sets W <- W + s (sum_k p_k W_k - W),
s = ``server_lr`` (s = 1: plain FedAvg, W <- sum_k p_k W_k).

This is local SGD on the proximal local objective with mu_prox = 0: the round loop, the
support-restricted layout (off its support S_k a client's model is s_k W, s_k = prod_e (1 - eta_t mu))
and the tracked statistics are ``local_sgd.local_sgd_kernel``'s, which FedProx shares.
"""

from __future__ import annotations

from numba import njit

from ..local_sgd import local_sgd_kernel

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
    return local_sgd_kernel(
        loss, C, n_features, mu, weights, targets, sample_offsets, support, support_offsets, rows, row_offsets,
        full_support, gram, uses_gram, gram_rhs, sched_code, sched_a, sched_b, E, rounds, batch, seed, server_lr,
        0.0, record_rounds, w0, w_star, track, records, stats,
    )

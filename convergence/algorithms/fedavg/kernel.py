"""Numba kernel: FedAvg / local SGD, one seed per call.

Algorithm (Li et al., ICLR 2020, Sec. 2 and 3.3; two-sided learning rates as in the lecture note):
for round r = 0..R-1, every client k of the round's sample (all of them under full participation;
``participation`` for the schemes) starts from the global model W and takes E steps

    W_k <- W_k - eta_t (g_k(W_k) + mu W_k),   t = r E + e,

where g_k is the data gradient of client k (exact, or a minibatch of ``batch`` rows drawn
uniformly with replacement; scaled by N p_k under transformed Scheme II); then the server sets
W <- W + s (W' - W), s = ``server_lr``, with W' the scheme's aggregate (full participation:
W' = sum_k p_k W_k; s = 1: plain FedAvg, W <- W').

This is local SGD on the proximal local objective with mu_prox = 0, so FedAvg's kernel is
``local_sgd.local_sgd_kernel`` with ``RoundPlan.mu_prox`` = 0 (every prox term is skipped, FedAvg's
arithmetic to the bit); the engine calls it through ``local_sgd.local_sgd_seed``, which picks its
threaded compilation when ``kernel_threads`` > 1. The round loop, the threads, the
support-restricted layout (off its support S_k a client's model is s_k W,
s_k = prod_e (1 - eta_t mu)) and the tracked statistics are documented there.
"""

from __future__ import annotations

from ..local_sgd import local_sgd_kernel as fedavg_kernel

__all__ = ["fedavg_kernel"]

"""Plain-NumPy reference path of FedAvg on a CNN problem (``problems.ImageClassificationProblem``).

The same trajectory as ``network_kernel.fedavg_network_kernel`` from the same seed: the same client
samples and aggregation (``participation.round_sample``), the same minibatch rows
(``_rng.sample_indices_np``: the kernels' counter-based streams), the same step sizes, with the
network's loss and gradient from the NumPy twin of the model oracle
(``problems.models.cnn.reference.loss_grad_np``: im2col and matrix products instead of the kernel's
direct loops). The arithmetic of the algorithm is the kernel's, operation for operation: each step
Wk <- Wk - eta_t lambda_k g computed in float64 and stored in the problem's dtype, the aggregate
W' = b W + sum_k a_k W_k summed in float64 in client order. So the two paths agree to the
network's rounding: <= 1e-10 relative in float64 (``tests/test_cnn_fedavg.py``). Only the sampled
clients compute (a CNN run keeps no trace of every client's steps).
"""

from __future__ import annotations

import numpy as np

from problems import ImageClassificationProblem
from problems.models.cnn.reference import loss_grad_np

from ..._rng import sample_indices_np
from ..local_steps import DIVERGENCE_FACTOR
from .config import FedAvgConfig
from ..participation import local_step_scales, round_sample

__all__ = ["fedavg_network_reference"]


def fedavg_network_reference(
    problem: ImageClassificationProblem,
    algorithm: FedAvgConfig,
    seed: int,
    w0: np.ndarray,
    anchor: np.ndarray,
    track: bool = False,
) -> tuple[np.ndarray, np.ndarray, int]:
    """Run one seed from w0 (d,) of the problem's dtype; returns (records (n_rec, d) float64,
    stats [max ||w - anchor||^2, max lambda_k^2 ||g||^2], diverged round or -1), as the kernel."""
    layout = problem.network.layout
    E, batch, p = algorithm.local_steps, algorithm.batch_size, problem.weights
    sizes = problem.client_sizes
    eta_all = algorithm.step_size.at(np.arange(algorithm.total_steps), E)
    scales = local_step_scales(algorithm.participation, p)
    record = list(algorithm.record_rounds)
    records = np.zeros((len(record), problem.dim))
    W = w0.copy()
    dist0 = float(np.sum((W.astype(np.float64) - anchor) ** 2))
    limit = DIVERGENCE_FACTOR * (1.0 + dist0)
    max_rad, max_grad = dist0, 0.0
    if record and record[0] == 0:
        records[0] = W
    for r in range(algorithm.rounds):
        sample = round_sample(algorithm.participation, algorithm.participants, p, seed, r)
        acc = sample.broadcast * W.astype(np.float64)
        rows = [None if batch == 0 else sample_indices_np(seed, r * E + e, sizes, batch) for e in range(E)]
        for k in np.flatnonzero(sample.counts):
            Wk = W.copy()
            images, labels = problem.client_data(k)
            for e in range(E):
                eta = eta_all[r * E + e] * scales[k]
                chosen = slice(None) if rows[e] is None else rows[e][k]
                with np.errstate(all="ignore"):  # a diverging run is reported, not warned about
                    _, grad = loss_grad_np(layout, Wk, images[chosen], labels[chosen])
                    if track:
                        max_grad = max(max_grad, scales[k] ** 2 * float(np.sum(grad.astype(np.float64) ** 2)))
                    Wk[:] = Wk.astype(np.float64) - eta * grad.astype(np.float64)
                if track:
                    max_rad = max(max_rad, float(np.sum((Wk.astype(np.float64) - anchor) ** 2)))
            acc += sample.coefficients[k] * Wk.astype(np.float64)
        with np.errstate(all="ignore"):
            W[:] = acc if algorithm.server_lr == 1.0 else W + algorithm.server_lr * (acc - W)
            dist = float(np.sum((W.astype(np.float64) - anchor) ** 2))
        if not dist <= limit:
            return records, np.array([max_rad, max_grad]), r
        max_rad = max(max_rad, dist)
        if r + 1 in record:
            records[record.index(r + 1)] = W
    return records, np.array([max_rad, max_grad]), -1

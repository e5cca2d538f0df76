"""Plain-NumPy reference path of FedAvg, vectorised over clients.

Computes the same trajectory as ``_fedavg_kernel.fedavg_kernel`` from the same seed (the same
counter-based minibatches), with dense arithmetic on all d coordinates and no support tricks:
all N local models are one array (N, f, C) and each local step is a handful of einsums. It is
the correctness reference for the kernel and the "NumPy vectorised over clients" baseline of
``fedbound bench``.
"""

from __future__ import annotations

import numpy as np

from problems import FederatedProblem

from ._fedavg_kernel import DIVERGENCE_FACTOR
from ._rng import sample_indices_np
from .config import FedAvgConfig

__all__ = ["fedavg_reference"]


class _ClientData:
    """Client rows padded to a common length: X (N, n_max, f), y (N, n_max), mask (N, n_max)."""

    def __init__(self, problem: FederatedProblem) -> None:
        sizes = problem.client_sizes
        n_max = int(sizes.max())
        N, f = problem.n_clients, problem.n_features
        self.X = np.zeros((N, n_max, f))
        self.y = np.zeros((N, n_max))
        self.mask = np.zeros((N, n_max))
        for k in range(N):
            Xk, yk = problem.client_data(k)
            self.X[k, : sizes[k]] = Xk
            self.y[k, : sizes[k]] = yk
            self.mask[k, : sizes[k]] = 1.0 / sizes[k]
        self.sizes = sizes

    def batch(self, indices: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(X, y, weights) of the used rows: all rows (weights 1/n_k) or a minibatch (1/b)."""
        if indices is None:
            return self.X, self.y, self.mask
        ks = np.arange(self.X.shape[0])[:, None]
        return self.X[ks, indices], self.y[ks, indices], np.full(indices.shape, 1.0 / indices.shape[1])


def fedavg_reference(
    problem: FederatedProblem,
    algorithm: FedAvgConfig,
    seed: int,
    w0: np.ndarray,
    w_star: np.ndarray,
    track: bool = False,
) -> tuple[np.ndarray, np.ndarray, int]:
    """Run one seed; returns (records (n_rec, d), stats [max ||w-w*||^2, max ||g||^2], diverged round or -1)."""
    data = _ClientData(problem)
    N, f, C = problem.n_clients, problem.n_features, problem.n_classes
    E, mu, p = algorithm.local_steps, problem.mu, problem.weights
    eta_all = algorithm.step_size.at(np.arange(algorithm.total_steps), E)
    record = list(algorithm.record_rounds)
    records = np.zeros((len(record), f * C))
    W = w0.reshape(f, C).copy()
    star = w_star.reshape(f, C)
    dist0 = float(np.sum((W - star) ** 2))
    limit = DIVERGENCE_FACTOR * (1.0 + dist0)
    max_rad, max_grad = dist0, 0.0
    if record and record[0] == 0:
        records[0] = W.reshape(-1)
    for r in range(algorithm.rounds):
        local = np.broadcast_to(W, (N, f, C)).copy()
        for e in range(E):
            t = r * E + e
            idx = None if algorithm.batch_size == 0 else sample_indices_np(seed, t, data.sizes, algorithm.batch_size)
            X, y, wt = data.batch(idx)
            grad = problem.model.batched_gradients(local, X, y, wt) + mu * local
            if track:
                max_grad = max(max_grad, float(np.max(np.sum(grad**2, axis=(1, 2)))))
            local -= eta_all[t] * grad
            if track:
                max_rad = max(max_rad, float(np.max(np.sum((local - star) ** 2, axis=(1, 2)))))
        average = np.tensordot(p, local, axes=1)
        W = average if algorithm.server_lr == 1.0 else W + algorithm.server_lr * (average - W)
        dist = float(np.sum((W - star) ** 2))
        if not dist <= limit:
            return records, np.array([max_rad, max_grad]), r
        max_rad = max(max_rad, dist)
        if r + 1 in record:
            records[record.index(r + 1)] = W.reshape(-1)
    return records, np.array([max_rad, max_grad]), -1

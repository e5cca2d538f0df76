"""Client rows padded to a common length, for the NumPy reference paths (vectorised over clients).

Client k's n_k rows sit in X[k, :n_k] (the rest zero) with weights 1/n_k in ``mask``, so a
full-batch gradient of every client is one batched product over the padded axis; a minibatch
gathers rows by index (N, b) with weights 1/b.
"""

from __future__ import annotations

import numpy as np

from problems import FederatedProblem

__all__ = ["PaddedClients"]


class PaddedClients:
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

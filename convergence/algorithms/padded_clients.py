"""Client rows padded to a common length, for the NumPy reference paths (vectorised over clients).

Client k's n_k rows sit in X[k, :n_k] (the rest zero) with weights 1/n_k in ``mask``, so a
minibatch gradient of every client is one batched product over the gathered rows (N, b) with
weights 1/b. A full-batch gradient of client k,

    gbar_k(W_k) = sum_{i < n_k} (1/n_k) x_i r_i(W_k)',   r_i = dl/dz at z_i = W_k'x_i   (f, C),

is two matrix products on client k's n_k real rows (``full_gradients``): the padded rows add
exact zeros, and a batched product over the padded axis would spend its time on them and on a
loop that is not BLAS.
"""

from __future__ import annotations

import numpy as np

from problems import FederatedProblem
from problems.models import LinearModel

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

    def full_gradients(self, model: LinearModel, W: np.ndarray, clients: np.ndarray | None = None) -> np.ndarray:
        """Full-batch data gradients gbar_k(W_k) (module docstring) of ``clients`` (indices (K,), default
        all N in order) at their models W (K, f, C): shape (K, f, C), no regulariser. Client k's
        residuals are weighted 1/n_k before the product, as ``LinearModel.batched_gradients`` weights
        them; the sums run in BLAS order on the n_k real rows. The residuals of all the clients' rows
        are one call of the model (they are row by row)."""
        ks = np.arange(self.X.shape[0]) if clients is None else np.asarray(clients)
        ends = np.cumsum(self.sizes[ks])
        Z = np.concatenate([self.X[k, : self.sizes[k]] @ W[j] for j, k in enumerate(ks)])
        y = np.concatenate([self.y[k, : self.sizes[k]] for k in ks])
        weights = np.concatenate([self.mask[k, : self.sizes[k]] for k in ks])
        R = model.margin_residuals(Z, y) * weights[:, None]
        out = np.empty_like(W)
        for j, k in enumerate(ks):
            out[j] = self.X[k, : self.sizes[k]].T @ R[ends[j] - self.sizes[k] : ends[j]]
        return out

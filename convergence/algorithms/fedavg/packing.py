"""Client data packed for the Numba kernels, restricted to each client's feature support.

Client k's rows often touch only a few features (Li et al.'s counterexample: p+1 of Np+1
coordinates; block-sparse data in general). Outside its support S_k the data part of the
gradient of F_k is zero, so a local step only shrinks those coordinates by (1 - eta mu): the
kernels keep one scalar for them instead of touching d numbers per step. Dense clients have
S_k = all features and use the plain update.

Packed arrays (all C-contiguous):
    support (sum_k |S_k|,) int64 feature indices, support_offsets (N+1,)
    rows (sum_k n_k |S_k|,) float64, client k's rows restricted to S_k, row-major,
    row_offsets (N+1,) into ``rows``; targets (n,) and sample offsets (N+1,) as in the problem;
    gram (sum_k |S_k|^2,) and gram_rhs (sum_k |S_k|,): for least-squares clients with
    |S_k| < 2 n_k, Q_k = X_S'X_S / n_k and c_k = X_S'y_k / n_k, so that an exact gradient step
    costs |S_k|^2 multiply-adds (grad = Q_k w_S - c_k + mu w_S) instead of 2 n_k |S_k|;
    uses_gram (N,) marks those clients.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from typing import NamedTuple

from problems import FederatedProblem

__all__ = ["PackedClients", "pack_clients"]


@dataclass(frozen=True)
class PackedClients:
    """Per-client support-restricted data for the kernels (see the module docstring)."""

    loss: NamedTuple
    n_classes: int
    n_features: int
    mu: float
    weights: np.ndarray
    targets: np.ndarray
    sample_offsets: np.ndarray
    support: np.ndarray
    support_offsets: np.ndarray
    rows: np.ndarray
    row_offsets: np.ndarray
    full_support: np.ndarray
    gram: np.ndarray
    gram_rhs: np.ndarray
    uses_gram: np.ndarray

    @property
    def n_clients(self) -> int:
        return self.weights.size

    @property
    def max_support(self) -> int:
        return int(np.diff(self.support_offsets).max())

    def flops_per_step(self, batch_size: int) -> np.ndarray:
        """Floating-point operations of one local step per client, shape (N,).

        Per sample: a forward product x_S'W (2 |S| C), the backward outer product (2 |S| C);
        per step: the update W -= eta (G + mu W) (3 |S| C). Exp calls are counted apart.
        """
        support = np.diff(self.support_offsets)
        samples = np.diff(self.sample_offsets) if batch_size == 0 else np.full(self.n_clients, batch_size)
        C = self.n_classes
        rows = samples * 4 * support * C
        if batch_size == 0:
            rows = np.where(self.uses_gram, 2 * support**2, rows)
        return rows + 3 * support * C


def pack_clients(problem: FederatedProblem) -> PackedClients:
    """Pack ``problem`` for the kernels, finding each client's feature support."""
    supports, blocks, grams, rhs = [], [], [], []
    full = np.zeros(problem.n_clients, dtype=np.bool_)
    uses_gram = np.zeros(problem.n_clients, dtype=np.bool_)
    for k in range(problem.n_clients):
        Xk, _ = problem.client_data(k)
        cols = np.flatnonzero(np.any(Xk != 0.0, axis=0))
        if cols.size == 0:
            cols = np.array([0], dtype=np.int64)
        full[k] = cols.size == problem.n_features
        rows_k, y_k = Xk[:, cols], problem.client_data(k)[1]
        uses_gram[k] = problem.model.quadratic and cols.size < 2 * rows_k.shape[0]
        grams.append((rows_k.T @ rows_k / rows_k.shape[0]).reshape(-1) if uses_gram[k] else np.zeros(cols.size**2))
        rhs.append(rows_k.T @ y_k / rows_k.shape[0] if uses_gram[k] else np.zeros(cols.size))
        supports.append(cols.astype(np.int64))
        blocks.append(np.ascontiguousarray(Xk[:, cols]).reshape(-1))
    support_offsets = np.concatenate([[0], np.cumsum([s.size for s in supports])]).astype(np.int64)
    row_offsets = np.concatenate([[0], np.cumsum([b.size for b in blocks])]).astype(np.int64)
    return PackedClients(
        loss=problem.model.kernel_loss(),
        n_classes=problem.n_classes,
        n_features=problem.n_features,
        mu=problem.mu,
        weights=np.ascontiguousarray(problem.weights),
        targets=np.ascontiguousarray(problem.y),
        sample_offsets=np.ascontiguousarray(problem.offsets),
        support=np.concatenate(supports),
        support_offsets=support_offsets,
        rows=np.concatenate(blocks),
        row_offsets=row_offsets,
        full_support=full,
        gram=np.concatenate(grams),
        gram_rhs=np.concatenate(rhs),
        uses_gram=uses_gram,
    )

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
    uses_gram (N,) marks the least-squares clients with |S_k| < 2 n_k; for them only,
    gram (sum_{k uses_gram} |S_k|^2,) holds Q_k = X_S'X_S / n_k, client after client in client
    order (client k's block at gram_offsets[k], gram_offsets (N+1,) int64), so that an exact gradient step costs |S_k|^2 multiply-adds (grad = Q_k w_S - c_k + mu w_S)
    instead of 2 n_k |S_k|; gram_rhs (sum_k |S_k|,) holds c_k = X_S'y_k / n_k at the client's
    support offset (zeros for the other clients). Clients of other models (logistic, softmax) have
    no Gram block at all: at f = 2001 features and 100 dense softmax clients a |S_k|^2 placeholder
    per client was 3.2 GB.

``PackedClients`` is a flat typed named tuple, the bundle the local-SGD kernel takes as it is (Numba
passes a named tuple to a nopython function field by field; flat, because Numba's parallel loops
cannot take a tuple nested in a tuple, so the model's loss tag travels beside it).

Packing is cached per process (``pack_clients``): the kernels run one seed per call, and a sweep
runs many seeds and configs of one problem, so the problem is packed once, not once per seed.
The cached arrays are shared by every caller and must not be written to.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import NamedTuple

import numpy as np

from problems import FederatedProblem

__all__ = ["PACK_CACHE_SIZE", "PackedClients", "pack_clients"]

PACK_CACHE_SIZE = 4
"""Packed problems kept per process (least recently used first out)."""

_cache: OrderedDict[tuple[str, bool], "PackedClients"] = OrderedDict()
_cache_lock = threading.Lock()


class PackedClients(NamedTuple):
    """Per-client support-restricted data for the kernels (the module docstring's layout), N
    clients, n rows, f = ``n_features`` features, C = ``n_classes`` (1 except for softmax), ``mu``
    the l2 coefficient (the loss is the model's, ``problem.model.kernel_loss()``); weights (N,)
    p_k; targets (n,) and sample_offsets (N+1,) int64 as in the problem; support (sum_k |S_k|,)
    int64 and support_offsets (N+1,) int64; rows (sum_k n_k |S_k|,) and row_offsets (N+1,) int64;
    full_support (N,) bool (S_k is every feature, in order); gram (sum over Gram clients of
    |S_k|^2,) with gram_offsets (N+1,) int64; gram_rhs (sum_k |S_k|,); uses_gram (N,) bool.
    Read-only: one instance is shared by every caller (``pack_clients``)."""

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
    gram_offsets: np.ndarray
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

    def bytes_per_step(self, batch_size: int) -> np.ndarray:
        """Bytes of client data one local step reads per client, shape (N,): the rows it uses,
        8 |S| bytes each (a minibatch of ``batch_size`` rows, or all n_k rows for exact gradients),
        or the Gram block Q_k (8 |S|^2) for exact least-squares steps. The model and scratch are
        not counted (they stay in cache)."""
        support = np.diff(self.support_offsets)
        samples = np.diff(self.sample_offsets) if batch_size == 0 else np.full(self.n_clients, batch_size)
        data = 8 * samples * support
        if batch_size == 0:
            data = np.where(self.uses_gram, 8 * support**2, data)
        return data


def pack_clients(problem: FederatedProblem, dense: bool = False) -> PackedClients:
    """``problem`` packed for the kernels (module docstring), from the per-process cache.

    ``dense``: every client's support is all n_features features, in order (full_support
    everywhere), for an algorithm whose local steps move every coordinate by a client-specific
    amount (SCAFFOLD's correction c - c_k), so that the off-support scalar does not apply.

    Keyed by ``problem.fingerprint`` and ``dense``: two problems with the same data share one
    PackedClients, returned as the same object; the PACK_CACHE_SIZE most recently used are kept.
    """
    key = (problem.fingerprint, dense)
    with _cache_lock:
        if key in _cache:
            _cache.move_to_end(key)
            return _cache[key]
    packed = _pack(problem, dense)
    with _cache_lock:
        packed = _cache.setdefault(key, packed)
        _cache.move_to_end(key)
        while len(_cache) > PACK_CACHE_SIZE:
            _cache.popitem(last=False)
    return packed


def _pack(problem: FederatedProblem, dense: bool) -> PackedClients:
    """Pack ``problem``, finding each client's feature support (all features when ``dense``);
    Gram blocks only where used."""
    supports, blocks, grams, rhs = [], [], [], []
    full = np.zeros(problem.n_clients, dtype=np.bool_)
    uses_gram = np.zeros(problem.n_clients, dtype=np.bool_)
    for k in range(problem.n_clients):
        Xk, y_k = problem.client_data(k)
        cols = np.arange(problem.n_features) if dense else np.flatnonzero(np.any(Xk != 0.0, axis=0))
        if cols.size == 0:
            cols = np.array([0], dtype=np.int64)
        full[k] = cols.size == problem.n_features
        rows_k = Xk[:, cols]
        uses_gram[k] = problem.model.quadratic and cols.size < 2 * rows_k.shape[0]
        if uses_gram[k]:
            grams.append((rows_k.T @ rows_k / rows_k.shape[0]).reshape(-1))
            rhs.append(rows_k.T @ y_k / rows_k.shape[0])
        else:
            rhs.append(np.zeros(cols.size))
        supports.append(cols.astype(np.int64))
        blocks.append(np.ascontiguousarray(rows_k).reshape(-1))
    support_offsets = np.concatenate([[0], np.cumsum([s.size for s in supports])]).astype(np.int64)
    row_offsets = np.concatenate([[0], np.cumsum([b.size for b in blocks])]).astype(np.int64)
    gram_sizes = np.diff(support_offsets) ** 2 * uses_gram  # a block only for the clients that use one
    gram_offsets = np.concatenate([[0], np.cumsum(gram_sizes)]).astype(np.int64)
    return PackedClients(
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
        gram=np.concatenate(grams) if grams else np.zeros(0),
        gram_offsets=gram_offsets,
        gram_rhs=np.concatenate(rhs),
        uses_gram=uses_gram,
    )
